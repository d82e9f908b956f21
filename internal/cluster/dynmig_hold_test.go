// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import "testing"

// TestHoldDynamicMIG: a 1g.10gb held at slot 3 of an A100-80GB of MIG on
// demand leaves 1000 - ⌊1000/7⌋ = 858 milli-GPU; a 3g.40gb (profile
// 4: slots 0-3 or 4-7) then takes start 4, not 0 (slot 3 is held), and a
// second 1g.10gb at slot 3, a 3g.40gb at 0 and a start the profile lacks
// are refused without a change.
func TestHoldDynamicMIG(t *testing.T) {
	n, err := NewNode("n", "A100-80GB", 1000, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnableDynamicMIG(0); err != nil {
		t.Fatal(err)
	}
	if err := n.HoldDynamicMIG(0, 0, 3); err != nil {
		t.Fatal(err)
	}
	if n.GPUFree[0] != 858 {
		t.Errorf("GPU free %d, want 858", n.GPUFree[0])
	}
	for _, c := range [][2]int{{0, 3}, {4, 0}, {4, 2}} {
		if err := n.HoldDynamicMIG(0, c[0], c[1]); err == nil {
			t.Errorf("profile %d at start %d held; want refused", c[0], c[1])
		}
	}
	p := Pod{Name: "p", NumGPU: 1, MIGProfile: 5, GPUMilli: MIGMilli(4), Resource: ResourceMIG}
	if err := n.Add(&p, 1); err != nil {
		t.Fatal(err)
	}
	if got := n.DynamicMIGStarts(0, 4); len(got) != 1 || got[0] != 4 {
		t.Errorf("3g.40gb starts %v, want [4]", got)
	}
	if err := n.HoldDynamicMIG(1, 0, 0); err == nil {
		t.Error("GPU 1 of a 1-GPU node held")
	}
}
