// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"os"
	"testing"
)

// StartT starts a control plane for a test (see Start) and stops it when
// the test ends, printing the processes' logs first if the test failed.
// A missing program skips the test, or fails it under CI (see Binary).
func StartT(t testing.TB, o Options) *Cluster {
	t.Helper()
	for _, b := range []struct {
		path *string
		name string
	}{{&o.Etcd, "etcd"}, {&o.APIServer, "kube-apiserver"}, {&o.ControllerManager, "kube-controller-manager"}, {&o.Kwok, "kwok"}} {
		if *b.path == "" && !(o.NoControllerManager && b.name == "kube-controller-manager") {
			*b.path = Binary(t, b.name)
		}
	}
	c, err := Start(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control-plane logs:\n%s", c.Logs(30))
		}
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// StartKueueT starts Kueue on c for a test (see StartKueue). A missing
// kueue program skips the test, or fails it under CI (see Binary); so
// does running as a user other than root.
func StartKueueT(t testing.TB, c *Cluster, o KueueOptions) {
	t.Helper()
	if o.Bin == "" {
		o.Bin = Binary(t, Kueue)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but the test does not run as root, which Kueue's mount namespace needs")
		}
		t.Skip("kueue needs root (its mount namespace)")
	}
	if err := c.StartKueue(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}
