// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"
	"testing"
)

// TestDynamicMIG works one A100-80GB GPU of MIG on demand by hand, with
// the placements of NVIDIA's MIG user guide (internal/gpu's table: 3g at
// slots 0 or 4, 2g at 0, 2 or 4, 1g.10gb at 0..6, 4g and 7g at 0):
// a 3g takes slots 0-3 (572 milli-GPU left: 1000 - ⌊3000/7⌋), then no
// 4g fits, a 2g takes slots 4-5 and a 1g.10gb slot 6; a second 1g.10gb
// does not fit (slot 7 starts no 1g.10gb) though one compute slice is
// free. A pod of a whole GPU fits never, not even on the empty GPU: the
// driver publishes no whole GPU in MIG mode.
func TestDynamicMIG(t *testing.T) {
	n, err := NewNode("n", "A100-80GB", 64000, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnableDynamicMIG(0); err != nil {
		t.Fatal(err)
	}
	// Profile indices of gpu.MIGProfiles: 0 1g.10gb, 3 2g, 4 3g, 5 4g.
	mig := func(k int) *Pod {
		return &Pod{Name: fmt.Sprint("k", k), NumGPU: 1, GPUMilli: MIGMilli(k), MIGProfile: int8(k + 1)}
	}
	whole := &Pod{Name: "w", NumGPU: 1, GPUMilli: MilliGPU}
	if Feasible(&n, whole) {
		t.Fatal("an empty GPU of MIG on demand serves a whole GPU")
	}
	steps := []struct {
		k     int
		fits  bool
		start int
		free  int64
	}{
		{4, true, 0, 572},
		{5, false, 0, 572},
		{3, true, 4, 286},  // 5 slices: 1000 - ⌊5000/7⌋ = 286
		{0, true, 6, 143},  // 6 slices
		{0, false, 0, 143}, // slot 7 only
	}
	for i, s := range steps {
		p := mig(s.k)
		if got := Feasible(&n, p); got != s.fits {
			t.Fatalf("step %d, profile %d: fits %v, want %v", i, s.k, got, s.fits)
		}
		if s.fits {
			if err := n.Add(p, 1); err != nil {
				t.Fatal(err)
			}
			if got := n.DynamicMIGStarts(0, s.k); len(got) == 0 || got[len(got)-1] != s.start {
				t.Errorf("step %d, profile %d: starts %v, want one at %d", i, s.k, got, s.start)
			}
		}
		if n.GPUFree[0] != s.free {
			t.Errorf("step %d: %d milli-GPU free, want %d", i, n.GPUFree[0], s.free)
		}
	}
	if Feasible(&n, whole) {
		t.Error("a whole GPU fits beside MIG instances")
	}
	if err := n.Remove(mig(5), 1); err == nil {
		t.Error("released a 4g instance that is not held")
	}
	for _, k := range []int{3, 0, 4} {
		if err := n.Remove(mig(k), 1); err != nil {
			t.Fatal(err)
		}
	}
	if n.GPUFree[0] != MilliGPU || n.MIG[0].Slots != 0 || Feasible(&n, whole) {
		t.Fatalf("after the releases: %d free, slots %08b; no whole GPU should fit", n.GPUFree[0], n.MIG[0].Slots)
	}
	if err := n.Add(whole, 1); err == nil {
		t.Error("a whole GPU was added to a GPU of MIG on demand")
	}
	if err := n.Remove(whole, 1); err == nil {
		t.Error("a whole GPU was released from a GPU of MIG on demand")
	}
	// The 7g.80gb (profile 6) is its full-size device: it takes all 7
	// slices, 0 left.
	if err := n.Add(mig(6), 1); err != nil || n.GPUFree[0] != 0 {
		t.Errorf("7g.80gb: %v, %d free; want 0", err, n.GPUFree[0])
	}
	t4, _ := NewNode("t", "T4", 1000, 1000, 1)
	if err := t4.EnableDynamicMIG(0); err == nil {
		t.Error("a T4 took MIG on demand")
	}
}

// TestAddDynamicMIGAt: a running 1g.10gb at slot 6 (a snapshot's claim)
// leaves slots 0-3 free for a 4g.40gb, which the first free placement
// (slot 0) would not: then 1 + 4 compute slices are held, 1000 -
// 1000 - ⌊5000/7⌋ = 286 milli-GPU free, and a 2g.20gb fits only at slot 4.
// A 1g.10gb at slot 7 (no placement starts there) and one at slot 6 again
// (held) are refused, as is a GPU that is not of MIG on demand.
func TestAddDynamicMIGAt(t *testing.T) {
	mig := func(k int) *Pod {
		return &Pod{Name: fmt.Sprint("k", k), NumGPU: 1, GPUMilli: MIGMilli(k), MIGProfile: int8(k + 1)}
	}
	for _, at := range []bool{false, true} {
		n, err := NewNode("n", "A100-80GB", 64000, 1<<20, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.EnableDynamicMIG(0); err != nil {
			t.Fatal(err)
		}
		if at {
			err = n.AddDynamicMIGAt(mig(0), 0, 6)
		} else {
			err = n.Add(mig(0), 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := n.DynamicMIGStarts(0, 0); len(got) != 1 || got[0] != map[bool]int{false: 0, true: 6}[at] {
			t.Fatalf("at %v: 1g.10gb starts %v", at, got)
		}
		if fits := Feasible(&n, mig(5)); fits != at {
			t.Fatalf("at %v: a 4g.40gb fits %v, want %v", at, fits, at)
		}
		if !at {
			continue
		}
		if err := n.Add(mig(5), 1); err != nil {
			t.Fatal(err)
		}
		if n.GPUFree[0] != 286 {
			t.Errorf("%d milli-GPU free, want 286", n.GPUFree[0])
		}
		if err := n.Add(mig(3), 1); err != nil || fmt.Sprint(n.DynamicMIGStarts(0, 3)) != "[4]" {
			t.Errorf("2g.20gb: %v, starts %v; want slot 4", err, n.DynamicMIGStarts(0, 3))
		}
		for _, c := range []struct{ g, start int }{{0, 7}, {0, 6}, {1, 0}} {
			pods, slots := n.Pods, n.MIG[0].Slots
			if err := n.AddDynamicMIGAt(mig(0), c.g, c.start); err == nil || n.Pods != pods || n.MIG[0].Slots != slots {
				t.Errorf("GPU %d slot %d: %v, %d pods; want an error and nothing changed", c.g, c.start, err, n.Pods)
			}
		}
		whole, _ := NewNode("w", "A100-80GB", 64000, 1<<20, 1)
		if err := whole.AddDynamicMIGAt(mig(0), 0, 0); err == nil || whole.Pods != 0 {
			t.Errorf("a GPU not of MIG on demand: %v", err)
		}
	}
}

// TestMIGPlaceable works the profiles a GPU serves by hand, from NVIDIA's
// A100 placements (internal/gpu's table; profile indices 0 1g.10gb,
// 2 1g.20gb, 3 2g.20gb, 4 3g.40gb, 5 4g.40gb, 6 7g.80gb): with a 3g.40gb
// at slot 0, 1g.10gb starts at 4, 5, 6, 1g.20gb and 2g.20gb at 4, 3g.40gb
// at 4, and no 4g or 7g fits (slot 0 is held). A 1g.10gb at slot 6 keeps
// 2g.20gb at 4; one at slot 4 leaves 1g.10gb (5, 6), 1g+me and 1g.20gb
// (at 6, slots 6-7), and no 2g.20gb (its starts are 0, 2, 4).
// On a static GPU of 4g.40gb + 3g.40gb, taking the 4g leaves the 3g.
func TestMIGPlaceable(t *testing.T) {
	n, err := NewNode("n", "A100-80GB", 64000, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnableDynamicMIG(0); err != nil {
		t.Fatal(err)
	}
	if err := n.HoldDynamicMIG(0, 4, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := n.MIGPlaceable(0), uint8(1<<0|1<<1|1<<2|1<<3|1<<4); got != want {
		t.Errorf("MIGPlaceable = %07b, want %07b", got, want)
	}
	if got, want := n.MIGFreeStarts(0, 0), uint8(1<<4|1<<5|1<<6); got != want {
		t.Errorf("1g.10gb free starts = %08b, want %08b", got, want)
	}
	if got := n.MIGFreeStarts(0, 5); got != 0 {
		t.Errorf("4g.40gb free starts = %08b, want none", got)
	}
	if got, ok := n.MIGPlaceableAfter(0, 0, 6); !ok || got != 1<<0|1<<1|1<<2|1<<3 {
		t.Errorf("after a 1g at 6: %07b %v, want 1g, 1g+me, 1g.20gb, 2g", got, ok)
	}
	if got, ok := n.MIGPlaceableAfter(0, 0, 4); !ok || got != 1<<0|1<<1|1<<2 {
		t.Errorf("after a 1g at 4: %07b %v, want 1g.10gb, 1g+me, 1g.20gb", got, ok)
	}
	if _, ok := n.MIGPlaceableAfter(0, 0, 7); ok {
		t.Error("a 1g.10gb at slot 7 was accepted")
	}
	if n.MIGPlaceable(0) != uint8(1<<0|1<<1|1<<2|1<<3|1<<4) {
		t.Error("MIGPlaceableAfter changed the node")
	}
	if err := n.EnableMIG(1, []string{"4g.40gb", "3g.40gb"}); err != nil {
		t.Fatal(err)
	}
	if got := n.MIGPlaceable(1); got != 1<<4|1<<5 {
		t.Errorf("static 4g+3g: %07b, want 3g and 4g", got)
	}
	if got, ok := n.MIGPlaceableAfter(1, 5, 0); !ok || got != 1<<4 {
		t.Errorf("static, after the 4g: %07b %v, want 3g", got, ok)
	}
	if n.MIGFreeStarts(1, 4) != 0 {
		t.Error("a static GPU has free starts")
	}
}
