// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tool returns the path of a program the tests drive (prometheus,
// promtool). Where it is absent the test is skipped, unless CI is set,
// when it fails: CI installs it (install says how, e.g. "apt-get install -y
// prometheus").
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but %s is not installed; CI must install it: %s", name, install)
		}
		t.Skipf("%s is not installed (%s)", name, install)
	}
	return p
}

// LockedBuffer is a bytes.Buffer that a process's output and a reader may
// use at once.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// StartPrometheus runs the Debian prometheus binary with config (the text
// of its prometheus.yml) and its TSDB in dir ("": a new temporary one),
// plus args, on a free loopback port, and returns its base URL
// (http://127.0.0.1:PORT) once /-/ready answers. Prometheus takes no port
// 0: the test listens on one, closes it and passes it, and tries again
// with another (three times at most) when Prometheus exits because another
// process took the port in between. Waiting ends as soon as Prometheus
// exits, ctx is done, or a minute has passed. Prometheus is stopped when
// the test ends, and its log printed if the test failed.
func StartPrometheus(t testing.TB, ctx context.Context, config, dir string, args ...string) string {
	t.Helper()
	bin := Tool(t, "prometheus", "apt-get install -y prometheus")
	tmp := t.TempDir()
	if dir == "" {
		dir = filepath.Join(tmp, "data")
	}
	cfg := filepath.Join(tmp, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for try := 1; ; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		log := &LockedBuffer{}
		prom := exec.Command(bin, append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + dir, "--web.listen-address=" + addr}, args...)...)
		prom.Stdout, prom.Stderr = log, log
		if err := prom.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = prom.Wait(); close(exited) }()
		stop := func() { _ = prom.Process.Kill(); <-exited }
		base := "http://" + addr
	wait:
		for {
			if resp, err := http.Get(base + "/-/ready"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Cleanup(func() {
						stop()
						if t.Failed() {
							t.Logf("prometheus log:\n%s", log)
						}
					})
					return base
				}
			}
			select {
			case <-exited:
				if try < 3 && strings.Contains(log.String(), "address already in use") {
					break wait
				}
				t.Fatalf("prometheus exited:\n%s", log)
			case <-ctx.Done():
				stop()
				t.Fatalf("prometheus not ready: %v\n%s", ctx.Err(), log)
			case <-deadline:
				stop()
				t.Fatalf("prometheus not ready after a minute:\n%s", log)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// PromtoolTestRules runs Prometheus's own rule engine on a rule unit-test
// file (promtool test rules FILE, in dir, which the file's rule_files are
// relative to) and fails the test unless promtool reports SUCCESS.
func PromtoolTestRules(t testing.TB, dir, file string) {
	t.Helper()
	cmd := exec.Command(Tool(t, "promtool", "Debian: apt-get install -y prometheus"), "test", "rules", file)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool test rules %s: %v\n%s", filepath.Join(dir, file), err, out)
	}
}
