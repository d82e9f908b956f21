// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package device

import "testing"

func TestID(t *testing.T) {
	for _, tc := range []struct {
		uuid        string
		n, replicas int
		want        ID
	}{
		{"GPU-1", 0, 1, "GPU-1"},    // not shared: the UUID
		{"GPU-1", 0, 0, "GPU-1"},    // replicas 0 counts as not shared
		{"GPU-1", 3, 4, "GPU-1::3"}, // NVIDIA's AnnotatedID format
		{"MIG-a", 0, 2, "MIG-a::0"}, // a MIG device's replica
	} {
		id := NewID(tc.uuid, tc.n, tc.replicas)
		if id != tc.want {
			t.Errorf("NewID(%s, %d, %d) = %q, want %q", tc.uuid, tc.n, tc.replicas, id, tc.want)
		}
		wantN := tc.n
		if tc.replicas <= 1 {
			wantN = 0
		}
		if u, n, err := id.Split(); u != tc.uuid || n != wantN || err != nil {
			t.Errorf("%q.Split() = %s, %d, %v; want %s, %d", id, u, n, err, tc.uuid, wantN)
		}
		if id.UUID() != tc.uuid {
			t.Errorf("%q.UUID() = %s", id, id.UUID())
		}
	}
	// Milli-GPU units: the GPU UUID, "::m", the unit number.
	if id := NewMilliID("GPU-1", 299); id != "GPU-1::m299" || id.UUID() != "GPU-1" {
		t.Errorf("NewMilliID(GPU-1, 299) = %q, UUID %q", id, id.UUID())
	}
	for _, bad := range []ID{"GPU-1::x", "GPU-1::-1", "GPU-1::", "GPU-1::1::2", "GPU-1::m3"} {
		if _, _, err := bad.Split(); err == nil {
			t.Errorf("%q.Split() accepted a bad replica", bad)
		}
		if bad.UUID() != "GPU-1" {
			t.Errorf("%q.UUID() = %q, want GPU-1", bad, bad.UUID())
		}
	}
}
