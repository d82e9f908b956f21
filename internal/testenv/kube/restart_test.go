// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestRestartComponents kills each component in turn and starts it again
// while the others keep running: after each, a new pod bound to a kwok
// node goes Running (etcd kept the data, the API server serves it on the
// same port, kwok runs pods again). Then a graceful Restart of
// kube-apiserver with a watch open, which SIGTERM alone does not end
// within the grace (the figure goes to docs/cluster.md). Finally a
// process that dies unasked closes Exited and reaches OnExit.
func TestRestartComponents(t *testing.T) {
	crashed := make(chan string, 4)
	c := StartT(t, Options{StopGrace: 5 * time.Second, OnExit: func(name string, _ error) { crashed <- name }})
	ctx := t.Context()
	if err := c.CreateNodes(ctx, []Node{{Name: "n0", CPUMilli: 8000, MemoryMiB: 16 << 10, GPUs: 1, Model: "T4"}}); err != nil {
		t.Fatal(err)
	}
	var t0 time.Time
	running := func(name string) {
		t.Helper()
		if _, err := c.Client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{NodeName: "n0", Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.waitUntil(ctx, "pod "+name+" Running", func(ctx context.Context) error {
			p, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.Status.Phase != corev1.PodRunning {
				err = fmt.Errorf("phase %s", p.Status.Phase)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("pod %s Running at %v", name, time.Since(t0).Round(time.Millisecond))
	}
	t0 = time.Now()
	defer func() { t.Logf("test body %v", time.Since(t0).Round(time.Millisecond)) }()
	running("before")
	for _, name := range []string{Etcd, APIServer, Kwok} {
		pid, _, err := c.Pid(name)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := c.Kill(name); err != nil {
			t.Fatal(err)
		}
		if _, alive, _ := c.Pid(name); alive {
			t.Fatalf("%s still running after Kill", name)
		}
		if err := c.StartComponent(ctx, name); err != nil {
			t.Fatal(err)
		}
		newPid, alive, _ := c.Pid(name)
		if !alive || newPid == pid {
			t.Fatalf("%s: pid %d alive %v after start, was %d", name, newPid, alive, pid)
		}
		t.Logf("%s killed and ready again in %v", name, time.Since(start).Round(time.Millisecond))
		running("after-" + name)
	}
	if err := c.StartComponent(ctx, Kwok); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("StartComponent of a running kwok: %v, want still running", err)
	}
	if _, err := c.StopComponent("kube-scheduler", 0); err == nil {
		t.Error("StopComponent of an unknown component succeeded")
	}

	// SIGTERM with a watch open: the API server waits for open
	// connections up to its request timeout, so the grace ends it.
	w, err := c.Client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	killed, err := c.StopComponent(APIServer, 0)
	if err != nil {
		t.Fatal(err)
	}
	stopped := time.Since(start)
	if err := c.StartComponent(ctx, APIServer); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver with a watch open: stopped in %v (killed after the 5 s grace: %v), ready again %v later", stopped.Round(time.Millisecond), killed, (time.Since(start) - stopped).Round(time.Millisecond))
	for ev := range w.ResultChan() { // the old watch ends with the old server
		if ev.Type == watch.Error {
			break
		}
	}
	running("after-restart")

	select {
	case <-c.Exited():
		t.Fatalf("Exited closed by exits that were asked for: %v", c.Err())
	case name := <-crashed:
		t.Fatalf("OnExit(%s) for an exit that was asked for", name)
	default:
	}
	pid, _, _ := c.Pid(Kwok)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Exited():
	case <-time.After(time.Minute):
		t.Fatal("Exited not closed a minute after kwok was killed from outside")
	}
	if name := <-crashed; name != Kwok {
		t.Errorf("OnExit(%s), want kwok", name)
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "kwok") {
		t.Errorf("Err() = %v, want kwok's exit", err)
	}
	if err := c.StartComponent(ctx, Kwok); err != nil {
		t.Fatal(err)
	}
}
