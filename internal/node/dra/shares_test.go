// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// setConsumed gives claim c's first result share ID share and consumed
// capacity, as the scheduler's allocator writes them.
func (k *kubelet) setConsumed(c *resourceapi.ResourceClaim, share string, consumed map[resourceapi.QualifiedName]resource.Quantity) {
	k.t.Helper()
	id := types.UID(share)
	c.Status.Allocation.Devices.Results[0].ShareID = &id
	c.Status.Allocation.Devices.Results[0].ConsumedCapacity = consumed
	if _, err := k.client.ResourceV1().ResourceClaims("default").UpdateStatus(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// TestClaimShare: the shares the exporter prices DRA pods by, by hand.
// On the A100-80GB gpu-1 (81920 MiB), claim a consumes 250 milliGPU (and
// 10Gi): 250/1000 = 0.25; claim b only memory, 20480Mi: 20480/81920 =
// 0.25; claim m memory as NVIDIA's driver's claims ask it, 40960Mi, and
// so milliGPU's default 1: 40960/81920 = 0.5 (more than 1/1000); claim c
// has the MIG device gpu-0-mig-3g40gb-9-4 whole: 1. An
// unknown claim, device or share ID is not ok. The shares survive a
// restart (they come from the checkpoint) and go with unprepare.
func TestClaimShare(t *testing.T) {
	b, _ := mockNode(t, twoA100)
	k := newKubelet(t)
	k.dirs.Shares = true
	d := k.start(b)
	a := k.claim("a", "gpu-1")
	k.setConsumed(a, "s-a", map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("250"), apidra.CapacityMemory: resource.MustParse("10Gi")})
	bc := k.claim("b", "gpu-1")
	k.setConsumed(bc, "s-b", map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMemory: resource.MustParse("20480Mi")})
	m := k.claim("m", "gpu-1")
	k.setConsumed(m, "s-m", map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("1"), apidra.CapacityMemory: resource.MustParse("40960Mi")})
	c := k.claim("c", "gpu-0-mig-3g40gb-9-4")
	for _, cl := range []*resourceapi.ResourceClaim{a, bc, m, c} {
		if _, errStr := k.prepare(cl); errStr != "" {
			t.Fatalf("prepare %s: %s", cl.Name, errStr)
		}
	}
	check := func(d *Driver, ns, name, dev, share string, want float64, wantOK bool) {
		t.Helper()
		got, ok := d.ClaimShare(ns, name, dev, share)
		if got != want || ok != wantOK {
			t.Errorf("ClaimShare(%s/%s, %s, %q) = %v, %v; want %v, %v", ns, name, dev, share, got, ok, want, wantOK)
		}
	}
	check(d, "default", "a", "gpu-1", "s-a", 0.25, true)
	check(d, "default", "b", "gpu-1", "s-b", 0.25, true)
	check(d, "default", "m", "gpu-1", "s-m", 0.5, true)
	check(d, "default", "c", "gpu-0-mig-3g40gb-9-4", "", 1, true)
	check(d, "default", "a", "gpu-1", "s-b", 0, false)
	check(d, "default", "a", "gpu-0", "s-a", 0, false)
	check(d, "other", "a", "gpu-1", "s-a", 0, false)

	// A plugin restarted over the same checkpoint knows them; unprepare
	// forgets a's.
	d.Stop()
	d = k.start(b)
	check(d, "default", "a", "gpu-1", "s-a", 0.25, true)
	k.unprepare(a)
	check(d, "default", "a", "gpu-1", "s-a", 0, false)
	check(d, "default", "b", "gpu-1", "s-b", 0.25, true)
}
