// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math"
	"slices"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// A100's MIG placements, from NVIDIA's MIG user guide ("A100 MIG Profile
// Placement"; NVML's nvmlDeviceGetGpuInstancePossiblePlacements, as
// internal/gpu's table transcribes them): 1g.10gb starts at slots 0..6
// (one slot), 2g.20gb at 0, 2 or 4 (two slots), 3g.40gb at 0 or 4 (four
// slots), 4g.40gb at 0 (four slots), 7g.80gb at 0 (eight). Profile
// indices (gpu.MIGProfiles): 0 1g.10gb, 3 2g.20gb, 4 3g.40gb, 5 4g.40gb.
// A GPU holding s compute slices has 1000 − ⌊1000·s/7⌋ milli-GPU free
// (gpu.MIGShareMilli): 572 for 3, 429 for 4, 286 for 5.

// migPod is a pod of one instance of profile k (gpu.MIGProfiles' index).
func migPod(k int) cluster.Pod {
	return cluster.Pod{Name: "mig", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: cluster.MIGMilli(k), MIGProfile: int8(k + 1)}
}

// dynNode is a node of gpus A100-80GB of MIG on demand holding the
// instances held[g] (profile, start pairs) on GPU g.
func dynNode(t *testing.T, gpus int, held map[int][][2]int) *cluster.Node {
	t.Helper()
	n := node(t, "A100-80GB", 64000, 1<<20, gpus)
	for g := range gpus {
		if err := n.EnableDynamicMIG(g); err != nil {
			t.Fatal(err)
		}
		for _, ks := range held[g] {
			if err := n.HoldDynamicMIG(g, ks[0], ks[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// TestFragMIGBySlots: one A100 of MIG on demand with a 3g.40gb at slot 0
// (slots 0-3 held, 572 milli-GPU free). A 3g shape still has its start 4,
// a 4g shape none (its only start, 0, is held): against half 3g, half 4g
// the fragmentation is 0.5 × 572 = 286 milli-GPU. The same for shares of
// 428 and 571 milli-GPU (no MIG profile asked; the smallest profiles that
// hold them are 3g and 4g), where the old view (one free share of 572,
// which holds 571) saw none.
func TestFragMIGBySlots(t *testing.T) {
	n := dynNode(t, 1, map[int][][2]int{0: {{4, 0}}})
	tw := NewTargetWorkload([]cluster.Pod{migPod(4), migPod(5)}, 1)
	if got := tw.NodeFrag(n); got != 286 {
		t.Errorf("NodeFrag = %v, want 286", got)
	}
	shares := NewTargetWorkload([]cluster.Pod{{NumGPU: 1, GPUMilli: 428}, {NumGPU: 1, GPUMilli: 571}}, 1)
	if got := shares.NodeFrag(n); got != 286 {
		t.Errorf("NodeFrag, shares = %v, want 286", got)
	}
	if got := shares.Frag(n.ModelID, n.CPUFree, []int64{572}); got != 0 {
		t.Errorf("Frag of one free share of 572 = %v, want 0", got)
	}
}

// TestFGDMIGStart: the A100 above (3g.40gb at slot 0) and a pending
// 1g.10gb, against a workload of half 2g.20gb, half 1g.10gb. The 1g's
// free placements start at 4, 5 and 6; a 2g's only free start is 4
// (slots 4-5). At 4 or 5 the 1g blocks it: the GPU's 429 milli-GPU left
// are a fragment for the 2g half, 0.5 × 429 = 214.5; at 6 both shapes
// still fit, fragmentation 0. FGD takes start 6 (score ⌊100·σ(0)⌋ = 50);
// upstream's allocator, first fit in the driver's table order, takes 4.
func TestFGDMIGStart(t *testing.T) {
	n := dynNode(t, 1, map[int][][2]int{0: {{4, 0}}})
	tw := NewTargetWorkload([]cluster.Pod{migPod(3), migPod(0)}, 1)
	p := migPod(0)
	for _, pol := range []Policy{FGD{Target: tw}, FGDCM{fgd: FGD{Target: tw, cm: true}}} {
		if got := pol.(MIGStarter).MIGStart(nil, n, &p, 0); got != 6 {
			t.Errorf("%s: MIGStart = %d, want 6", pol.Name(), got)
		}
	}
	f := FGD{Target: tw}
	if s, g, start := f.best(n, &p); s != 50 || g != 1 || start != 6 {
		t.Errorf("best = score %d, GPUs %b, start %d; want 50, 1, 6", s, g, start)
	}
	c := &cluster.Cluster{Nodes: []cluster.Node{*dynNode(t, 1, map[int][][2]int{0: {{4, 0}}})}}
	if err := Allocate(f, c, 0, &p, 1); err != nil {
		t.Fatal(err)
	}
	if got := c.Nodes[0].DynamicMIGStarts(0, 0); len(got) != 1 || got[0] != 6 {
		t.Errorf("Allocate put the 1g at %v, want [6]", got)
	}
	// Under DRA in the table's order the instance takes the first free
	// placement, slot 4.
	c = &cluster.Cluster{Nodes: []cluster.Node{*dynNode(t, 1, map[int][][2]int{0: {{4, 0}}})}}
	if err := Allocate(WithGPUAPI(f, DRA), c, 0, &p, 1); err != nil {
		t.Fatal(err)
	}
	if got := c.Nodes[0].DynamicMIGStarts(0, 0); len(got) != 1 || got[0] != 4 {
		t.Errorf("DRA table order put the 1g at %v, want [4]", got)
	}
}

// TestFGDMIGGPU: two A100s of MIG on demand, each with a 3g.40gb at slot
// 0; GPU 1 also holds a 1g.10gb at slot 4, so its 3g start 4 is gone.
// Against half 3g.40gb, half 1g.10gb, a pending 1g:
//   - before: GPU 0 (572 free) serves the 3g half, GPU 1 (429 free) is
//     its fragment: F = 0.5 × 429 = 214.5;
//   - on GPU 0 (any start of 4..6 blocks its 3g at 4): no GPU serves
//     the 3g half, all 429 + 429 idle is its fragment: F = 429;
//   - on GPU 1 (start 5, the lower of 5 and 6, equal): GPU 0 still
//     serves the 3g half, GPU 1's 286 left are its fragment: F = 143.
//
// FGD takes GPU 1 at slot 5, score ⌊100·σ((214.5 − 143)/1000)⌋ = 51;
// upstream's first fit takes GPU 0.
func TestFGDMIGGPU(t *testing.T) {
	n := dynNode(t, 2, map[int][][2]int{0: {{4, 0}}, 1: {{4, 0}, {0, 4}}})
	tw := NewTargetWorkload([]cluster.Pod{migPod(4), migPod(0)}, 1)
	p := migPod(0)
	if got := tw.NodeFrag(n); got != 214.5 {
		t.Errorf("NodeFrag before = %v, want 214.5", got)
	}
	want := int64(100 / (1 + math.Exp(-(214.5-143)/1000)))
	if want != 51 {
		t.Fatalf("σ arithmetic: %d", want)
	}
	f := FGD{Target: tw}
	if s, g, start := f.best(n, &p); s != want || g != 1<<1 || start != 5 {
		t.Errorf("best = score %d, GPUs %b, start %d; want %d, GPU 1, 5", s, g, start, want)
	}
	if g := DRAGPUs(n, &p); g != 1<<0 {
		t.Errorf("DRAGPUs = %b, want GPU 0", g)
	}
	if g := WithDRAOrder(f, DRA, CoreOrder, tw).SelectGPUs(nil, n, &p, nil); g != 1<<1 {
		t.Errorf("DRA in the core's order = %b, want GPU 1", g)
	}
}

// TestFGDMIGPadding: a node of one whole A100 and one empty A100 of MIG
// on demand, against a workload of half 4g.40gb, half pods of one whole
// GPU, and a pending 4g.40gb (571 milli-GPU). On the whole GPU it is
// padded: 429 milli-GPU allocated and unused, a fragment for every shape
// and never used, and the MIG GPU, outside the whole shape's view, stays
// the 4g half's; F after = (1 + 8) × 429 = 3,861. On the MIG GPU (slot
// 0): its 3 free slices are a fragment for the 4g half, 0.5 × 429 =
// 214.5, and stranded, as the workload asks no 3g, 2g or 1g: 8 × 429 =
// 3,432; F = 3,646.5, and the whole GPU serves both. FGD takes the MIG
// GPU.
func TestFGDMIGPadding(t *testing.T) {
	n := node(t, "A100-80GB", 64000, 1<<20, 2)
	if err := n.EnableDynamicMIG(1); err != nil {
		t.Fatal(err)
	}
	whole := cluster.Pod{Name: "w", CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000}
	tw := NewTargetWorkload([]cluster.Pod{migPod(5), whole}, 1)
	p := migPod(5)
	if got := tw.NodeFrag(n); got != 0 {
		t.Errorf("NodeFrag before = %v, want 0", got)
	}
	if _, g, start := (FGD{Target: tw}).best(n, &p); g != 1<<1 || start != 0 {
		t.Errorf("best = GPUs %b, start %d; want GPU 1, 0", g, start)
	}
}

// TestFragMIGStranded: an A100 of MIG on demand with a 4g.40gb at slot 0
// (429 milli-GPU free), against half 2g.20gb, half 4g.40gb. Before: the
// 2g fits at slot 4, the 4g nowhere: F = 0.5 × 429 = 214.5, no waste.
// With a 2g at slot 4 too (6 slices held, 1000 − 857 = 143 free) only a
// 1g fits at slot 6, a profile the workload does not ask for: the 143 are
// a fragment for both halves, F = 143 (the fragmentation a run reports),
// and stranded, Waste = 8 × 143 = 1,144; FGD chooses by 1,287. Without
// Waste FGD saw 143 < 214.5, the 2g there as lowering fragmentation.
func TestFragMIGStranded(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{migPod(3), migPod(5)}, 1)
	for _, tc := range []struct {
		held        [][2]int
		frag, waste float64
	}{{[][2]int{{5, 0}}, 214.5, 0}, {[][2]int{{5, 0}, {3, 4}}, 143, 1144}} {
		n := dynNode(t, 1, map[int][][2]int{0: tc.held})
		var buf [cluster.MaxGPUsPerNode]int64
		var mbuf [cluster.MaxGPUsPerNode]uint8
		if got := tw.NodeFrag(n); got != tc.frag {
			t.Errorf("NodeFrag, %v = %v, want %v", tc.held, got, tc.frag)
		}
		if got := tw.Waste(fragView(n, buf[:0]), MIGView(n, mbuf[:0])); got != tc.waste {
			t.Errorf("Waste, %v = %v, want %v", tc.held, got, tc.waste)
		}
		if got, want := (FGD{Target: tw}).frag(n, n.CPUFree, n.MemoryFree, fragView(n, buf[:0]), MIGView(n, mbuf[:0])), tc.frag+tc.waste; got != want {
			t.Errorf("FGD's measure, %v = %v, want %v", tc.held, got, want)
		}
	}
	// A workload that asks for 1g.10gb too uses slot 6: no waste, the 143
	// a fragment for the 2g and 4g thirds, 2/3 × 143.
	with1g := NewTargetWorkload([]cluster.Pod{migPod(0), migPod(3), migPod(5)}, 1)
	n := dynNode(t, 1, map[int][][2]int{0: {{5, 0}, {3, 4}}})
	var buf [cluster.MaxGPUsPerNode]int64
	var mbuf [cluster.MaxGPUsPerNode]uint8
	if got, want := with1g.NodeFrag(n), 2.0/3*143; math.Abs(got-want) > 1e-9 {
		t.Errorf("NodeFrag with 1g shapes = %v, want %v", got, want)
	}
	if got := with1g.Waste(fragView(n, buf[:0]), MIGView(n, mbuf[:0])); got != 0 {
		t.Errorf("Waste with 1g shapes = %v, want 0", got)
	}
}

// TestFGDMIGStranded: two A100s of MIG on demand, GPU 0 with a 4g.40gb at
// slot 0, GPU 1 empty; the workload above and a pending 2g.20gb. Before,
// the 4g half fits only GPU 1, GPU 0's 429 its fragment: F = 214.5.
//   - GPU 0, slot 4: 143 stranded (8 × 143) and a fragment for both
//     halves, which fit GPU 1: F = 1,144 + 143 = 1,287;
//   - GPU 1, slot 0 or 2: the 4g fits nowhere, all 429 + 715 idle its
//     fragment: F = 0.5 × 1,144 = 572;
//   - GPU 1, slot 4: slots 0-3 stay free for a 4g; F = 214.5.
//
// FGD takes GPU 1 at slot 4, score ⌊100·σ(0)⌋ = 50, and leaves GPU 0's
// slots 4-6 to a 3g.40gb or a 2g + 1g. The old measure (no stranded
// term: 143 on GPU 0) took GPU 0; upstream's first fit takes it too.
func TestFGDMIGStranded(t *testing.T) {
	n := dynNode(t, 2, map[int][][2]int{0: {{5, 0}}})
	tw := NewTargetWorkload([]cluster.Pod{migPod(3), migPod(5)}, 1)
	p := migPod(3)
	if got := tw.NodeFrag(n); got != 214.5 {
		t.Errorf("NodeFrag before = %v, want 214.5", got)
	}
	for _, pol := range []Policy{FGD{Target: tw}, FGDCM{fgd: FGD{Target: tw, cm: true}}} {
		if got := pol.(MIGStarter).MIGStart(nil, n, &p, 1); got != 4 {
			t.Errorf("%s: MIGStart on GPU 1 = %d, want 4", pol.Name(), got)
		}
	}
	if s, g, start := (FGD{Target: tw}).best(n, &p); s != 50 || g != 1<<1 || start != 4 {
		t.Errorf("best = score %d, GPUs %b, start %d; want 50, GPU 1, 4", s, g, start)
	}
	if g := DRAGPUs(n, &p); g != 1<<0 {
		t.Errorf("DRAGPUs = %b, want GPU 0", g)
	}
}

// TestRankMIG: TestFGDMIGStranded's node and workload; the 2g.20gb's
// free placements ranked by the fragmentation after it: GPU 1 at slot 4
// (214.5), GPU 1 at 0 and at 2 (572 each, GPU then start), GPU 0 at 4
// (1,287). The first is FGD's choice; under CoreOrder the DRA path takes
// it where upstream's first fit takes GPU 0. A 4g.40gb has GPU 1's slot 0
// only; a 7g.80gb the same.
func TestRankMIG(t *testing.T) {
	n := dynNode(t, 2, map[int][][2]int{0: {{5, 0}}})
	tw := NewTargetWorkload([]cluster.Pod{migPod(3), migPod(5)}, 1)
	want := []MIGPlacement{{1, 4}, {1, 0}, {1, 2}, {0, 4}}
	if got := tw.RankMIG(n, 3); !slices.Equal(got, want) {
		t.Errorf("RankMIG(2g) = %v, want %v", got, want)
	}
	for _, k := range []int{5, 6} {
		if got := tw.RankMIG(n, k); !slices.Equal(got, []MIGPlacement{{1, 0}}) {
			t.Errorf("RankMIG(%d) = %v, want [{1 0}]", k, got)
		}
	}
	p := migPod(3)
	pol := WithDRAOrder(FGD{Target: tw}, DRA, CoreOrder, tw)
	if g, s := pol.SelectGPUs(nil, n, &p, nil), pol.(MIGStarter).MIGStart(nil, n, &p, 1); g != 1<<1 || s != 4 {
		t.Errorf("CoreOrder: GPUs %b, start %d; want GPU 1, 4", g, s)
	}
	if g := WithGPUAPI(FGD{Target: tw}, DRA).SelectGPUs(nil, n, &p, nil); g != 1<<0 {
		t.Errorf("TableOrder: GPUs %b, want GPU 0", g)
	}
	// Whole GPUs and static MIG GPUs are not ranked.
	whole := node(t, "A100-80GB", 64000, 1<<20, 2)
	if got := tw.RankMIG(whole, 3); len(got) != 0 {
		t.Errorf("RankMIG on whole GPUs = %v, want none", got)
	}
	if err := whole.EnableMIG(0, []string{"2g.20gb", "2g.20gb", "3g.40gb"}); err != nil {
		t.Fatal(err)
	}
	if got := tw.RankMIG(whole, 3); len(got) != 0 {
		t.Errorf("RankMIG on a static MIG GPU with free 2g.20gb = %v, want none", got)
	}
}

// TestStaleOrder: two empty A100s of MIG on demand, TestRankMIG's
// workload. A 4g.40gb takes GPU 0 at slot 0 under either order (the empty
// node's ranking of 4g: GPU 0 first). A 2g.20gb next: in the fresh order
// GPU 1 at slot 4 (TestRankMIG); in the order published before the 4g
// was prepared (the empty node's: GPU 0 at 4, GPU 1 at 4, ...; slot 4 of
// GPU 0 is still free) GPU 0 at slot 4, beside the 4g, stranding slot 6.
func TestStaleOrder(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{migPod(3), migPod(5)}, 1)
	for _, tc := range []struct {
		order   DRAOrder
		gpu, at int
	}{{CoreOrder, 1, 4}, {StaleOrder, 0, 4}} {
		c := &cluster.Cluster{Nodes: []cluster.Node{*dynNode(t, 2, nil)}}
		pol := WithDRAOrder(FGD{Target: tw}, DRA, tc.order, tw)
		for _, k := range []int{5, 3} {
			p := migPod(k)
			gs := pol.SelectGPUs(nil, &c.Nodes[0], &p, nil)
			if err := Allocate(pol, c, 0, &p, gs); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.Nodes[0].DynamicMIGStarts(tc.gpu, 3); !slices.Equal(got, []int{tc.at}) {
			t.Errorf("%s: 2g starts on GPU %d = %v, want [%d]", tc.order, tc.gpu, got, tc.at)
		}
		if got := c.Nodes[0].DynamicMIGStarts(0, 5); !slices.Equal(got, []int{0}) {
			t.Errorf("%s: 4g starts on GPU 0 = %v, want [0]", tc.order, got)
		}
	}
	if o, err := ParseDRAOrder("stale"); err != nil || o != StaleOrder || o.String() != "stale" {
		t.Errorf("ParseDRAOrder(stale) = %v, %v", o, err)
	}
}
