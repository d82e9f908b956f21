// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestSupervisorRestart runs the supervisor as make cluster does (without
// a scheduler), kills kube-apiserver from the control socket and checks
// that etcd and kwok keep running and the supervisor with them, starts it
// again, restarts kwok, and stops everything with down.
func TestSupervisorRestart(t *testing.T) {
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"} {
		kube.Binary(t, name)
	}
	bin := filepath.Join(t.TempDir(), "cluster")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(nodes, []byte("nodeGroups:\n- {name: t4, count: 1, model: T4, gpus: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args[:1:1], append([]string{"--dir", dir}, args[1:]...)...)...).CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "cluster.log"))
			t.Fatalf("cluster %v: %v\n%s\nsupervisor log:\n%.3000s", args, err, out, log)
		}
		return string(out)
	}
	run("up", "--nodes", nodes)
	t.Cleanup(func() { _ = exec.Command(bin, "down", "--dir", dir).Run() })

	want := func(states ...string) {
		t.Helper()
		out := run("status")
		for _, s := range states {
			name, state, _ := strings.Cut(s, "=")
			found := false
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 4 && f[0] == name {
					found = true
					if f[3] != state {
						t.Errorf("%s is %s, want %s:\n%s", name, f[3], state, out)
					}
				}
			}
			if !found {
				t.Errorf("no %s in status:\n%s", name, out)
			}
		}
	}
	want("etcd=running", "kube-apiserver=running", "kwok=running")
	// kwok dies on its own (killed from outside): reported, the rest run.
	var pid int
	for _, line := range strings.Split(run("status"), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "kwok" {
			pid, _ = strconv.Atoi(f[2])
		}
	}
	if pid <= 0 {
		t.Fatal("no kwok pid in status")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(run("status"), "exited") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	want("etcd=running", "kube-apiserver=running", "kwok=exited")
	if log, _ := os.ReadFile(filepath.Join(dir, "cluster.log")); !strings.Contains(string(log), "kwok exited; the other components keep running") {
		t.Errorf("supervisor log does not report kwok's exit:\n%.3000s", log)
	}
	run("start", "kwok")
	run("kill", "kube-apiserver")
	want("etcd=running", "kube-apiserver=exited", "kwok=running")
	run("start", "kube-apiserver")
	if out := run("restart", "kwok"); !strings.Contains(out, "kwok started again") {
		t.Errorf("restart kwok printed %q", out)
	}
	want("etcd=running", "kube-apiserver=running", "kwok=running")
	if out, err := exec.Command(bin, "restart", "--dir", dir, "kube-scheduler").CombinedOutput(); err == nil || !strings.Contains(string(out), `no component "kube-scheduler"`) {
		t.Errorf("restart of an unknown component: %v %s", err, out)
	}
	run("down")
	if _, ok := running(dir); ok {
		t.Error("supervisor still running after down")
	}
}

// TestBoolFlag: make cluster passes --kueue=$(KUEUE), 0 or 1; a bare
// --kueue is true too, and a later flag is not taken for its value.
func TestBoolFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--kueue=1"}, true}, {[]string{"--kueue=0"}, false}, {[]string{"-kueue=true"}, true},
		{[]string{"--kueue", "--nodes", "x"}, true}, {[]string{"--nodes", "x"}, false}, {[]string{"--kueue=yes"}, false},
	} {
		if got := boolFlag(c.args, "kueue"); got != c.want {
			t.Errorf("boolFlag(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
