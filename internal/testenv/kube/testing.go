// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import "testing"

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
