// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"os"
	"slices"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// adminClaim creates an allocated claim of devices with admin access, as
// upstream's allocator records it (DeviceRequestAllocationResult
// adminAccess: true).
func (k *kubelet) adminClaim(name string, devices ...string) *resourceapi.ResourceClaim {
	k.t.Helper()
	c := k.claim(name, devices...)
	for i := range c.Status.Allocation.Devices.Results {
		c.Status.Allocation.Devices.Results[i].AdminAccess = ptr.To(true)
	}
	c, err := k.client.ResourceV1().ResourceClaims("default").Update(context.Background(), c, metav1.UpdateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return c
}

// Admin access (KEP-5018) consumes nothing: upstream's allocator gives it
// a device whether a workload holds it or not and does not mark it in use
// (k8s.io/dynamic-resource-allocation v0.37.2
// structured/internal/stable/allocator_stable.go allocateDevice: "Mark
// as in use (unless we do admin access)"), and the scheduler counts its
// result as no allocation (k8s.io/kubernetes v1.37.2
// pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go:
// "Is not considered as allocated"). NVIDIA's driver leaves admin-access
// results out of its overlap check (cmd/gpu-kubelet-plugin/
// device_state.go requestedNonAdminDevices).

// TestAdminAccessWholeGPU: on the whole GPU 1 a workload's claim w and a
// monitoring claim a with admin access are prepared side by side, a
// second workload is still refused as w holds it (not a), and once w is
// gone a workload is prepared beside a, which was prepared first; a
// holds no share (ClaimShare 0); unpreparing a leaves the GPU's CDI spec
// to the workload.
func TestAdminAccessWholeGPU(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	g1 := "nvidia.com/gpu=" + n.GPUs[1].UUID
	w, a := k.claim("w", "gpu-1"), k.adminClaim("a", "gpu-1")
	for _, c := range []*resourceapi.ResourceClaim{w, a} {
		if ids, errStr := k.prepare(c); errStr != "" || !slices.Equal(ids, []string{g1}) {
			t.Fatalf("prepare %s: %v %q, want %s", c.Name, ids, errStr, g1)
		}
	}
	if _, errStr := k.prepare(k.claim("w2", "gpu-1")); errStr != "device gpu-1 of request r0: already prepared for claim uid-w" {
		t.Errorf("a second workload: error %q, want it refused for w", errStr)
	}
	if share, ok := d.ClaimShare("default", "a", "gpu-1", ""); !ok || share != 0 {
		t.Errorf("ClaimShare of the admin claim: %v %v, want 0 true", share, ok)
	}
	k.unprepare(w)
	w3 := k.claim("w3", "gpu-1")
	if ids, errStr := k.prepare(w3); errStr != "" || !slices.Equal(ids, []string{g1}) {
		t.Errorf("a workload beside the admin claim prepared first: %v %q", ids, errStr)
	}
	k.unprepare(a)
	if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID)); err != nil {
		t.Errorf("gpu-1's CDI spec after the admin claim's unprepare, w3 still holding it: %v", err)
	}
	k.unprepare(w3)
}

// TestAdminAccessMIG: admin access never creates nor destroys a MIG
// device. On a placement where none is made it fails, creating nothing;
// after workload w created the 3g.40gb at 4, admin claim a is given that
// device (its UUID), a workload on an overlapping placement is still
// refused, and a's unprepare leaves the device to w, whose unprepare
// destroys it.
func TestAdminAccessMIG(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	g0 := n.GPUs[0].UUID
	const place = "gpu-0-mig-3g40gb-9-4"
	a := k.adminClaim("a", place)
	if _, errStr := k.prepare(a); errStr != "device "+place+" of request r0: admin access never creates a MIG device, and none is made at this placement (no claim holds it)" {
		t.Errorf("admin access on an uncreated placement: error %q", errStr)
	}
	if got := liveMIG(t, b, g0); len(got) != 0 {
		t.Fatalf("live MIG devices after the refused admin claim: %v", got)
	}
	w := k.claim("w", place)
	if _, errStr := k.prepare(w); errStr != "" {
		t.Fatal(errStr)
	}
	made := d.Prepared()["uid-w"].Devices[0].MIG.UUID
	if ids, errStr := k.prepare(a); errStr != "" || !slices.Equal(ids, []string{"nvidia.com/gpu=" + made}) {
		t.Errorf("admin access beside w: %v %q, want w's device %s", ids, errStr, made)
	}
	if _, errStr := k.prepare(k.claim("over", "gpu-0-mig-1g10gb-19-5")); errStr == "" {
		t.Error("a workload overlapping w's device was prepared")
	}
	k.unprepare(a)
	if got := liveUUIDs(t, b, g0); !slices.Equal(got, []string{made}) {
		t.Errorf("after the admin claim's unprepare live MIG devices %v, want w's %s", got, made)
	}
	k.unprepare(w)
	if got := liveMIG(t, b, g0); len(got) != 0 {
		t.Errorf("after w's unprepare live MIG devices %v", got)
	}
}
