// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// The policies choose GPUs by cluster.Node.FreeAfter: a pod asking for a
// MIG profile takes a free instance of it, or else a whole GPU; a pod of
// whole GPUs never takes a MIG-enabled GPU.
func TestMIGGPUChoice(t *testing.T) {
	mk := func() *cluster.Node {
		n := node(t, "A100-80GB", 64000, 1<<20, 2)
		if err := n.EnableMIG(0, []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Profile index 0 is 1g.10gb (gpu.MIGProfiles order); 1/7 GPU is 142 (gpu.MIGShareMilli, rounded down).
	p1 := &cluster.Pod{Name: "p1", NumGPU: 1, GPUMilli: 142, MIGProfile: 1}
	whole := &cluster.Pod{Name: "w", NumGPU: 1, GPUMilli: 1000}
	tw := NewTargetWorkload([]cluster.Pod{*p1, *whole}, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, pol := range []Policy{BestFit{}, FGD{Target: tw}, GPUPacking{}, Random{}} {
		n := mk()
		// The whole-GPU pod takes GPU 1, though GPU 0 has nothing held.
		if g := pol.SelectGPUs(nil, n, whole, rng); g != 1<<1 {
			t.Errorf("%s: whole-GPU pod got %b, want GPU 1", pol.Name(), g)
		}
		// Seven 1g pods take GPU 0's instances (bestfit: the fuller GPU;
		// FGD: equal scores, lowest index; random: GPU 1 is possible, so
		// it is only checked for GPU 0's capacity below).
		for i := range 7 {
			g := pol.SelectGPUs(nil, n, p1, rng)
			if _, ok := pol.(Random); !ok && g != 1<<0 {
				t.Fatalf("%s: 1g pod %d got %b, want GPU 0", pol.Name(), i, g)
			}
			if err := n.Add(p1, g); err != nil {
				t.Fatal(err)
			}
			if g == 1<<1 {
				break
			}
		}
		if _, ok := pol.(Random); ok {
			continue
		}
		// GPU 0 is full (7 slices held): the next 1g pod takes GPU 1 whole.
		if n.GPUFree[0] != 0 {
			t.Fatalf("%s: GPU 0 free %d after 7 1g pods", pol.Name(), n.GPUFree[0])
		}
		if g := pol.SelectGPUs(nil, n, p1, rng); g != 1<<1 {
			t.Errorf("%s: eighth 1g pod got %b, want GPU 1", pol.Name(), g)
		}
		if ok, _ := cluster.Fits(n, whole); !ok {
			t.Errorf("%s: whole pod does not fit GPU 1", pol.Name())
		}
	}
}
