// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mock

import (
	"context"
	"errors"
	"testing"

	"github.com/gpuplane/gpuplane/internal/node/device"
)

// emptyMIG is one A100-80GB with MIG mode on and no MIG devices.
const emptyMIG = `
name: empty-mig
gpus:
  - productName: NVIDIA A100-SXM4-80GB
    migEnabled: true
  - productName: NVIDIA A100-SXM4-80GB
`

func TestCreateDestroyMIG(t *testing.T) {
	ctx := context.Background()
	p, err := ParseProfile("empty-mig.yaml", []byte(emptyMIG))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(ctx)
	g0, g1 := n.GPUs[0].UUID, n.GPUs[1].UUID

	a, err := b.CreateMIG(ctx, g0, "3g.40gb", 4)
	if err != nil {
		t.Fatal(err)
	}
	if a.GPUInstanceID != 1 || a.Profile != "3g.40gb" || a.MemoryMiB != 40192 || a.Multiprocessors != 42 || a.Placement != (device.MIGPlacement{Start: 4, Size: 4}) {
		t.Errorf("3g.40gb at 4: got %+v", a)
	}
	// Refused as NVML refuses: overlap, a start the profile lacks, no MIG mode.
	for _, tc := range []struct {
		gpu, profile string
		start        int
	}{
		{g0, "1g.10gb", 5}, // inside the 3g.40gb
		{g0, "3g.40gb", 2}, // 3g starts at 0 or 4 only
		{g0, "7g.80gb", 0}, // overlaps
		{g1, "1g.10gb", 0}, // MIG mode off
		{g0, "1g.5gb", 0},  // not an A100-80GB profile
		{"GPU-nope", "1g.10gb", 0},
	} {
		if _, err := b.CreateMIG(ctx, tc.gpu, tc.profile, tc.start); err == nil {
			t.Errorf("CreateMIG(%s, %s, %d) succeeded, want an error", tc.gpu, tc.profile, tc.start)
		}
	}
	c, err := b.CreateMIG(ctx, g0, "1g.10gb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUInstanceID != 2 || c.Profile != "1g.10gb" || c.UUID == a.UUID {
		t.Errorf("1g.10gb at 0: got %+v", c)
	}
	n, _ = b.Discover(ctx)
	if got := len(n.GPUs[0].MIG); got != 2 {
		t.Fatalf("Discover: %d MIG devices, want 2", got)
	}
	// Another UUID than GPU instance 1's (c's, instance 2's): nothing
	// destroyed.
	if err := b.DestroyMIG(ctx, g0, 1, c.UUID); !errors.Is(err, device.ErrNotOwned) {
		t.Errorf("DestroyMIG of instance 1 with instance 2's UUID: %v, want ErrNotOwned", err)
	}
	if n, _ := b.Discover(ctx); len(n.GPUs[0].MIG) != 2 {
		t.Fatalf("after a refused DestroyMIG: %d MIG devices, want 2", len(n.GPUs[0].MIG))
	}
	if err := b.DestroyMIG(ctx, g0, 1, a.UUID); err != nil {
		t.Fatal(err)
	}
	if err := b.DestroyMIG(ctx, g0, 1, a.UUID); !errors.Is(err, device.ErrNotFound) {
		t.Errorf("second DestroyMIG: %v, want ErrNotFound", err)
	}
	// 4g starts at 0 only, where the 1g.10gb is; a 3g.40gb at 4 again gets
	// GPU instance 1, free again, and a new UUID.
	if _, err := b.CreateMIG(ctx, g0, "4g.40gb", 0); err == nil {
		t.Error("4g.40gb at 0 over the 1g.10gb succeeded")
	}
	d, err := b.CreateMIG(ctx, g0, "3g.40gb", 4)
	if err != nil {
		t.Fatal(err)
	}
	if d.GPUInstanceID != 1 || d.UUID == a.UUID {
		t.Errorf("3g.40gb again: got %+v, want GPU instance 1 and a new UUID", d)
	}
	ins, _ := b.MIGInstances(ctx, g0)
	if len(ins) != 2 || ins[0].UUID != d.UUID || ins[1].UUID != c.UUID {
		t.Errorf("MIGInstances = %+v", ins)
	}
}

// The profile's layout is live from the start: its instances are placed
// as gpu.PlaceMIG places them and block overlapping creations.
func TestMIGInstancesOfProfile(t *testing.T) {
	ctx := context.Background()
	b, err := Open("dgx-a100-80gb-mig", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(ctx)
	g := n.GPUs[4] // 3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb
	ins, err := b.MIGInstances(ctx, g.UUID)
	if err != nil {
		t.Fatal(err)
	}
	want := []device.MIGPlacement{{Start: 4, Size: 4}, {Start: 0, Size: 2}, {Start: 2, Size: 1}, {Start: 3, Size: 1}}
	if len(ins) != len(want) {
		t.Fatalf("%d instances, want %d", len(ins), len(want))
	}
	for i, in := range ins {
		if in.Placement != want[i] || in.UUID != g.MIG[i].UUID {
			t.Errorf("instance %d: %+v, want placement %v and UUID %s", i, in, want[i], g.MIG[i].UUID)
		}
	}
	if _, err := b.CreateMIG(ctx, g.UUID, "1g.10gb", 6); err == nil {
		t.Error("1g.10gb at 6 inside the 3g.40gb succeeded")
	}
}
