// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"strings"
	"testing"
)

// MIG profile indices in gpu.MIGProfiles' order (NVIDIA MIG user guide,
// "Supported MIG Profiles", A100-80GB: 1g.10gb, 1g.10gb+me, 1g.20gb,
// 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb).
const (
	mig1g = 1 + iota // Pod.MIGProfile is index + 1
	mig1gME
	mig1g20
	mig2g
	mig3g
	mig4g
	mig7g
)

// One A100-80GB node with GPU 0 as 3g+2g+1g+1g and GPU 1 left whole.
func migNode(t *testing.T) *Node {
	t.Helper()
	n, err := NewNode("a100", "A100-80GB", 64000, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnableMIG(0, []string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestMIGFitRule(t *testing.T) {
	n := migNode(t)
	p3 := &Pod{Name: "p3", CPUMilli: 1000, NumGPU: 1, GPUMilli: MIGMilli(mig3g - 1), MIGProfile: mig3g}
	p1 := &Pod{Name: "p1", CPUMilli: 1000, NumGPU: 1, GPUMilli: MIGMilli(mig1g - 1), MIGProfile: mig1g}
	p4 := &Pod{Name: "p4", CPUMilli: 1000, NumGPU: 1, GPUMilli: MIGMilli(mig4g - 1), MIGProfile: mig4g}
	share := &Pod{Name: "share", CPUMilli: 1000, NumGPU: 1, GPUMilli: 300}
	// 3/7 of a GPU is 428.57 milli-GPU: 428 (rounded down); 1/7 is 142.
	if MIGMilli(mig3g-1) != 428 || MIGMilli(mig1g-1) != 142 || MIGMilli(mig7g-1) != 1000 {
		t.Fatalf("MIGMilli 3g, 1g, 7g = %d, %d, %d; want 428, 142, 1000", MIGMilli(mig3g-1), MIGMilli(mig1g-1), MIGMilli(mig7g-1))
	}
	// A 3g pod fits GPU 0's 3g instance, leaving 1000-428 free.
	if f, ok := n.FreeAfter(p3, 0); !ok || f != 572 {
		t.Errorf("3g on MIG GPU: %d, %v; want 572, true", f, ok)
	}
	// A 4g pod: GPU 0 has no 4g instance; the whole GPU 1 serves it.
	if _, ok := n.FreeAfter(p4, 0); ok {
		t.Error("4g pod fits a GPU without a 4g instance")
	}
	if f, ok := n.FreeAfter(p4, 1); !ok || f != 0 {
		t.Errorf("4g pod on the whole GPU: %d, %v; want 0, true", f, ok)
	}
	// A plain share never uses a MIG-enabled GPU.
	if _, ok := n.FreeAfter(share, 0); ok {
		t.Error("a milli-GPU share fits a MIG-enabled GPU")
	}
	if err := n.Add(p3, 1); err != nil {
		t.Fatal(err)
	}
	if err := n.Add(p1, 1); err != nil {
		t.Fatal(err)
	}
	// Held 3 + 1 slices: 1000 - ⌊4000/7⌋ = 1000 - 571.
	if n.GPUFree[0] != 429 || n.MIG[0].Free[mig3g-1] != 0 || n.MIG[0].Free[mig1g-1] != 1 {
		t.Errorf("after 3g and 1g: free %d, MIG %+v", n.GPUFree[0], n.MIG[0])
	}
	if err := n.Add(p3, 1); err == nil || !strings.Contains(err.Error(), "MIG profile") {
		t.Errorf("second 3g pod: err = %v", err)
	}
	// The second 1g and the 2g fill all 7 slices: nothing free.
	if err := n.Add(p1, 1); err != nil {
		t.Fatal(err)
	}
	p2 := &Pod{Name: "p2", NumGPU: 1, GPUMilli: MIGMilli(mig2g - 1), MIGProfile: mig2g}
	if err := n.Add(p2, 1); err != nil {
		t.Fatal(err)
	}
	if n.GPUFree[0] != 0 || n.UsedGPUs() != 1 {
		t.Errorf("full MIG GPU: free %d, used GPUs %d; want 0, 1", n.GPUFree[0], n.UsedGPUs())
	}
	if _, ok := n.FreeAfter(p1, 0); ok {
		t.Error("1g pod fits GPU 0, which has no free 1g left")
	}
	// Whole GPU 1 takes the 1g pod as an exclusive GPU.
	if err := n.Add(p1, 2); err != nil {
		t.Fatal(err)
	}
	if n.GPUFree[1] != 0 || n.UsedGPUs() != 2 {
		t.Errorf("1g pod on whole GPU: free %d", n.GPUFree[1])
	}
	if err := n.Remove(p1, 2); err != nil || n.GPUFree[1] != 1000 {
		t.Errorf("remove from whole GPU: %v, free %d", err, n.GPUFree[1])
	}
	// Left held: 1g, 1g, 2g, 4 slices.
	if err := n.Remove(p3, 1); err != nil || n.GPUFree[0] != 429 {
		t.Errorf("remove 3g: %v, free %d; want 1000 - ⌊4000/7⌋ = 429", err, n.GPUFree[0])
	}
	if err := n.Remove(p3, 1); err == nil {
		t.Error("removed a 3g instance twice")
	}
}

func TestEnableMIGRefusals(t *testing.T) {
	n := migNode(t)
	if err := n.EnableMIG(0, []string{"7g.80gb"}); err == nil {
		t.Error("enabled MIG twice on GPU 0")
	}
	if err := n.EnableMIG(1, []string{"4g.40gb", "4g.40gb"}); err == nil || !strings.Contains(err.Error(), "at most 1") {
		t.Errorf("two 4g: %v", err)
	}
	t4, _ := NewNode("t4", "T4", 1000, 1000, 1)
	if err := t4.EnableMIG(0, []string{"1g.10gb"}); err == nil || !strings.Contains(err.Error(), "does not support MIG") {
		t.Errorf("MIG on T4: %v", err)
	}
}
