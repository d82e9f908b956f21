// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// liveUUIDs returns the UUIDs of the live MIG devices of GPU gpu.
func liveUUIDs(t *testing.T, b *mock.Backend, gpu string) []string {
	t.Helper()
	ins, err := b.MIGInstances(context.Background(), gpu)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ins {
		out = append(out, in.UUID)
	}
	return out
}

// TestUnprepareDestroysOnlyItsOwn: claim "old" gets a 1g.10gb at slot 2
// (GPU instance 1, the first free ID); its device is destroyed behind
// the plugin's back (a reboot, an administrator); claim "new" gets a
// 3g.40gb at slot 4, which takes GPU instance 1 again (the smallest free
// ID, as the mock and NVML give it). Unpreparing the stale "old" must not
// destroy "new"'s device: it is the same GPU instance ID with another
// UUID. GPU instance IDs are reused: NVIDIA's driver records the MIG
// device's UUID beside its IDs for this reason
// (NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/mig.go,
// MigLiveTuple: "those IDs may refer to a different device than assumed
// because they may be re-used"), though its deleteMigDevice (nvlib.go)
// leaves the UUID comparison commented out; here it is made.
func TestUnprepareDestroysOnlyItsOwn(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	g0 := n.GPUs[0].UUID

	old := k.claim("old", "gpu-0-mig-1g10gb-19-2")
	if _, errStr := k.prepare(old); errStr != "" {
		t.Fatal(errStr)
	}
	oldMIG := *d.Prepared()["uid-old"].Devices[0].MIG
	if oldMIG.GPUInstanceID != 1 {
		t.Fatalf("old's MIG device: GPU instance %d, want 1 (the first free)", oldMIG.GPUInstanceID)
	}
	if err := b.DestroyMIG(context.Background(), g0, oldMIG.GPUInstanceID, oldMIG.UUID); err != nil {
		t.Fatal(err)
	}

	nw := k.claim("new", "gpu-0-mig-3g40gb-9-4")
	if _, errStr := k.prepare(nw); errStr != "" {
		t.Fatal(errStr)
	}
	newMIG := *d.Prepared()["uid-new"].Devices[0].MIG
	if newMIG.GPUInstanceID != oldMIG.GPUInstanceID || newMIG.UUID == oldMIG.UUID {
		t.Fatalf("new's MIG device %+v: want GPU instance %d reused with a new UUID (old's %s)", newMIG, oldMIG.GPUInstanceID, oldMIG.UUID)
	}

	k.unprepare(old)
	if got := liveUUIDs(t, b, g0); !slices.Equal(got, []string{newMIG.UUID}) {
		t.Errorf("after old's unprepare live MIG devices %v, want new's %s alone", got, newMIG.UUID)
	}
	if _, held := d.Prepared()["uid-old"]; held {
		t.Error("old is still recorded after its unprepare")
	}
	// new's own device is destroyed by its unprepare.
	k.unprepare(nw)
	if got := liveMIG(t, b, g0); len(got) != 0 {
		t.Errorf("after new's unprepare live MIG devices %s, want none", strings.Join(got, ","))
	}
}
