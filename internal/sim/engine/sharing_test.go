// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// sharingWorkload is one A100-80GB node with 2 GPUs and four pods arriving
// one second apart that never leave: a (300 milli-GPU), b (600), c (one
// whole GPU), d (300).
func sharingWorkload(t *testing.T) *Workload {
	t.Helper()
	nodes := []trace.NodeSpec{{Name: "a100", CPUMilli: 64000, MemoryMiB: 1 << 20, GPUs: 2, Model: "A100-80GB", Line: 2}}
	nan := math.NaN()
	pods := []trace.PodSpec{
		{Name: "a", CPUMilli: 1000, NumGPU: 1, GPUMilli: 300, Creation: 0, Deletion: nan, Scheduled: nan, Line: 2},
		{Name: "b", CPUMilli: 1000, NumGPU: 1, GPUMilli: 600, Creation: 1, Deletion: nan, Scheduled: nan, Line: 3},
		{Name: "c", CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000, Creation: 2, Deletion: nan, Scheduled: nan, Line: 4},
		{Name: "d", CPUMilli: 1000, NumGPU: 1, GPUMilli: 300, Creation: 3, Deletion: nan, Scheduled: nan, Line: 5},
	}
	w, err := Prepare("nodes.csv", nodes, "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Worked out by hand, best-fit GPU choice (the fitting GPU with the least
// free share, lowest index on ties):
//   - fractional: a, b on GPU 0 (300 + 600), c on GPU 1, d fits nowhere
//     (100 free): 1900/2000, 3 placed, a and b share;
//   - exclusive: a GPU 0, b GPU 1, c and d fail: 2000/2000, none share;
//   - timeslice:2 (replicas of 500): a takes a replica of GPU 0, b (600 >
//     500) GPU 1 whole, c fails, d the second replica of GPU 0: 2000/2000,
//     3 placed, a and d share;
//   - timeslice:4 (250): a and b (300, 600 > 250) take whole GPUs, c and d
//     fail;
//   - mig with GPU 0 given as 3g.40gb + 3g.40gb and GPU 1 whole: a (300 →
//     3g, 3/7 = 428.6) takes a 3g instance, b (600 → 7g) GPU 1 whole, c
//     fails (no whole GPU left), d the other 3g: (round(6000/7) + 1000) /
//     2000 = 1857/2000, 3 placed, a and d share GPU 0.
//
// Served is what the placed pods asked; padding what they hold beyond it:
// fractional 300 + 600 + 1000 = 1900 served, none padded; exclusive a and
// b, 900 served, 700 + 400 padded; timeslice:2 a, b, d, 1200 served, a
// and d padded to 500 (200 each) and b to 1000 (400): 800; timeslice:4 a
// and b whole: 900 and 1100; mig a and d as 3g (428, 128 padded each) and
// b as 7g (1000, 400 padded): 1200 and 656.
func TestSharingModesByHand(t *testing.T) {
	w := sharingWorkload(t)
	given := func(node, g int) []string {
		if g == 0 {
			return []string{"3g.40gb", "3g.40gb"}
		}
		return nil
	}
	for _, tc := range []struct {
		mode                 string
		alloc                int64
		placed, failed, shar int
		training             int // c placed
		served, padding      int64
	}{
		{"fractional", 1900, 3, 1, 2, 1, 1900, 0},
		{"exclusive", 2000, 2, 2, 0, 0, 900, 1100},
		{"timeslice:2", 2000, 3, 1, 2, 0, 1200, 800},
		{"timeslice:4", 2000, 2, 2, 0, 0, 900, 1100},
		{"mig", 1857, 3, 1, 2, 0, 1200, 656},
	} {
		ss, err := ParseSharing(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		var g GivenMIG
		if ss[0].Mode == "mig" {
			g = given
		}
		v, _, err := w.WithSharing(ss[0], g, 1)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), v, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Seed: 1, TieBreak: placement.TieFirst})
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		s := r.Sharing
		if r.AllocatedGPUMilli != tc.alloc || r.FailedPods != tc.failed || s == nil || s.PlacedPods != tc.placed || s.SharedPods != tc.shar || s.GPUsNeeded != 2 {
			t.Errorf("%s: allocated %d, failed %d, sharing %+v; want %d, %d, placed %d, shared %d, 2 GPUs",
				tc.mode, r.AllocatedGPUMilli, r.FailedPods, s, tc.alloc, tc.failed, tc.placed, tc.shar)
			continue
		}
		if r.ServedGPUMilli != tc.served || r.PaddingGPUMilli != tc.padding || r.ArrivedGPUMilli != 2200 {
			t.Errorf("%s: served %d, padding %d, arrived %d; want %d, %d, 2200 (as asked)", tc.mode, r.ServedGPUMilli, r.PaddingGPUMilli, r.ArrivedGPUMilli, tc.served, tc.padding)
		}
		// c, the only pod of a whole GPU, never shares a GPU.
		if s.TrainingOnSharedGPU != 0 || s.TrainingPods != tc.training {
			t.Errorf("%s: training %d, on shared GPU %d", tc.mode, s.TrainingPods, s.TrainingOnSharedGPU)
		}
		// 2 GPUs needed at the peak, at the catalog's A100-80GB price.
		if want := 2 * prices.Default().USDPerHour("A100-80GB"); want == 0 || math.Abs(s.GPUsNeededUSDPerHour-want) > 1e-9 {
			t.Errorf("%s: %v USD per hour, want %v", tc.mode, s.GPUsNeededUSDPerHour, want)
		}
	}
}

// ChooseMIGLayouts on the hand workload: b's profile is 7g (600 > 4/7 of
// a GPU), served as well by a whole GPU, so it counts with c as whole-GPU
// demand (2 GPUs); a and d (3g.40gb) hold 4 + 4 of a GPU's 8 memory
// slots, 1 GPU, so f = 1 / (1 + 2) and round(2/3) = 1 of the A100 GPUs is
// MIG-enabled. Only 3g is asked: 3g + 3g (slices all 3g, distance 0) is
// chosen.
func TestChooseMIGLayoutsByHand(t *testing.T) {
	w := sharingWorkload(t)
	v, uses, err := w.WithSharing(Sharing{Mode: "mig"}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []MIGLayoutUse{{Model: "A100-80GB", Nodes: 1, NodeNames: []string{"a100"}, MIGGPUsPerNode: 1, GPUsPerNode: 2, Layout: []string{"3g.40gb", "3g.40gb"}, Source: "chosen"}}
	if !reflect.DeepEqual(uses, want) {
		t.Errorf("layouts %+v, want %+v", uses, want)
	}
	if v.template.Nodes[0].MIGGPUs != 1 {
		t.Errorf("MIG GPUs %b, want GPU 0", v.template.Nodes[0].MIGGPUs)
	}
	// The workload itself is unchanged.
	if w.template.Nodes[0].MIGGPUs != 0 || w.pods[0].MIGProfile != 0 {
		t.Error("WithSharing changed its workload")
	}
}

// Fractional under --sharing gives today's numbers on the built-in
// scenario (fill, 2 seeds, every policy): it only adds the sharing
// metrics.
func TestFractionalIsToday(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 16 simulations")
	}
	w, err := Prepare("built-in", trace.BuiltinNodes(4), "built-in", trace.BuiltinPods(2400, 42, 10, 24*3600), 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Mode: "fill", Policies: placement.Names, Seeds: 2, Seed: 42, Inflate: 1.3, TieBreak: placement.TieFirst}
	a, err := Run(context.Background(), w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := w.WithSharing(Sharing{Mode: "fractional"}, nil, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), v, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Results {
		x, y := a.Results[i], b.Results[i]
		if y.Sharing == nil || y.Sharing.PlacedPods != x.Pods-x.FailedPods {
			t.Errorf("%s seed %d: sharing %+v, placed want %d", x.Policy, x.Seed, y.Sharing, x.Pods-x.FailedPods)
		}
		x.WallSeconds, y.WallSeconds, y.Sharing = 0, 0, nil
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s seed %d: fractional under --sharing differs from today", x.Policy, x.Seed)
		}
	}
}

func TestParseSharing(t *testing.T) {
	got, err := ParseSharing("exclusive, fractional,mig,timeslice:4,exclusive")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Sharing{{Mode: "exclusive"}, {Mode: "fractional"}, {Mode: "mig"}, {Mode: "timeslice", Replicas: 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"timeslice:3", "timeslice:1", "timeslice:x", "mps", ""} {
		if _, err := ParseSharing(bad); err == nil || !strings.Contains(err.Error(), "sharing") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

// Chosen MIG GPUs are packed on the fewest nodes: 2 A100 nodes of 2 GPUs,
// four 300 milli-GPU pods (3g: 4 × 3/7 = 12/7 GPUs) and one pod of 2
// whole GPUs: f = (12/7) / (12/7 + 2) = 6/13, round(6/13 × 4 GPUs) = 2
// MIG GPUs, both on the first node; the second keeps its 2 GPUs whole for
// the 2-GPU pod.
func TestChosenMIGPacked(t *testing.T) {
	nodes := []trace.NodeSpec{
		{Name: "n0", CPUMilli: 64000, MemoryMiB: 1 << 20, GPUs: 2, Model: "A100-80GB", Line: 2},
		{Name: "n1", CPUMilli: 64000, MemoryMiB: 1 << 20, GPUs: 2, Model: "A100-80GB", Line: 3},
	}
	var pods []trace.PodSpec
	for i := range 4 {
		pods = append(pods, trace.PodSpec{Name: string(rune('a' + i)), CPUMilli: 1000, NumGPU: 1, GPUMilli: 300, Line: int32(2 + i)})
	}
	pods = append(pods, trace.PodSpec{Name: "two", CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000, Line: 6})
	w, err := Prepare("nodes.csv", nodes, "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, uses, err := w.WithSharing(Sharing{Mode: "mig"}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []MIGLayoutUse{{Model: "A100-80GB", Nodes: 1, NodeNames: []string{"n0"}, MIGGPUsPerNode: 2, GPUsPerNode: 2, Layout: []string{"3g.40gb", "3g.40gb"}, Source: "chosen"}}
	if !reflect.DeepEqual(uses, want) || v.template.Nodes[0].MIGGPUs != 0b11 || v.template.Nodes[1].MIGGPUs != 0 {
		t.Errorf("layouts %+v, MIG GPUs %b %b", uses, v.template.Nodes[0].MIGGPUs, v.template.Nodes[1].MIGGPUs)
	}
	// Fill places every pod: four 3g instances on n0, the 2-GPU pod on n1.
	rep, err := Run(context.Background(), v, Config{Mode: "fill", Policies: []string{"bestfit"}, Seeds: 1, Seed: 1, Inflate: 0.8, TieBreak: placement.TieFirst})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.FailedPods != 0 {
		t.Errorf("%d pods failed: %+v", r.FailedPods, r.Failed)
	}
}

// TestMIGCountMemorySlots: 2 nodes of 8 A100-80GB; 7 pods of 400
// milli-GPU (3g.40gb: 3 of 7 compute slices, 4 of 8 memory slots) and 5 of
// a whole GPU. Counted in memory slots the MIG demand is 7 × 4/8 = 3.5
// GPUs, f = 3.5 / 8.5 and round(f × 16) = round(6.59) = 7 MIG GPUs (in
// compute slices it would be 7 × 3/7 = 3, f = 3/8, 6). No pod asks for
// several GPUs, so the 7 are spread over both nodes, the first one more:
// 4 and 3. The same in the static layouts (3g + 3g) and on demand. With a
// pod of 2 GPUs added, the whole-GPU demand is 7 GPUs, f = 3.5 / 10.5 and
// round(16 / 3) = 5 MIG GPUs, packed on the first node; the same pod
// asking for a T4 counts for neither (4 and 3 again).
func TestMIGCountMemorySlots(t *testing.T) {
	nan := math.NaN()
	var pods []trace.PodSpec
	for i := range 12 {
		milli := int16(400)
		if i >= 7 {
			milli = 1000
		}
		pods = append(pods, trace.PodSpec{Name: fmt.Sprintf("p%d", i), CPUMilli: 1000, NumGPU: 1, GPUMilli: milli, Creation: float64(i), Deletion: nan, Scheduled: nan, Line: int32(i + 2)})
	}
	var nodes []trace.NodeSpec
	for i := range 2 {
		nodes = append(nodes, trace.NodeSpec{Name: fmt.Sprintf("n%d", i), CPUMilli: 128000, MemoryMiB: 1 << 21, GPUs: 8, Model: "A100-80GB", Line: i + 2})
	}
	two := append(append([]trace.PodSpec(nil), pods...), trace.PodSpec{Name: "two", CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000, Creation: 12, Deletion: nan, Scheduled: nan, Line: 14})
	// A pod of 2 GPUs that only a T4 may run counts for neither.
	twoT4 := append(append([]trace.PodSpec(nil), pods...), trace.PodSpec{Name: "two", CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000, GPUSpec: "T4", Creation: 12, Deletion: nan, Scheduled: nan, Line: 14})
	for _, tc := range []struct {
		pods []trace.PodSpec
		per  []int // MIG GPUs per node, a layout use each
	}{{pods, []int{4, 3}}, {two, []int{5}}, {twoT4, []int{4, 3}}} {
		w, err := Prepare("nodes.csv", nodes, "pods.csv", tc.pods, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, onDemand := range []bool{false, true} {
			_, uses, err := w.WithSharing(Sharing{Mode: "mig", OnDemand: onDemand}, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			layout, src := []string{"3g.40gb", "3g.40gb"}, "chosen"
			if onDemand {
				layout, src = []string{"MIG on demand"}, "on demand"
			}
			var want []MIGLayoutUse
			for i, m := range tc.per {
				want = append(want, MIGLayoutUse{Model: "A100-80GB", Nodes: 1, NodeNames: []string{fmt.Sprintf("n%d", i)}, MIGGPUsPerNode: m, GPUsPerNode: 8, Layout: layout, Source: src})
			}
			if !reflect.DeepEqual(uses, want) {
				t.Errorf("%d pods, on demand %v: layouts %+v, want %+v", len(tc.pods), onDemand, uses, want)
			}
		}
	}
}

// TestMIGPerNode: where migPerNode puts a model's MIG GPUs, worked out by
// hand on 10 nodes of 8 GPUs: packed, all of a node's GPUs on the fewest
// nodes; spread, one a node in turn.
func TestMIGPerNode(t *testing.T) {
	c := &cluster.Cluster{}
	for range 10 {
		c.Nodes = append(c.Nodes, cluster.Node{ModelID: 0, GPUFree: make([]int64, 8)})
	}
	all := func(int) bool { return true }
	notFirst := func(i int) bool { return i != 0 }
	for _, tc := range []struct {
		name   string
		left   int
		spread bool
		ok     func(int) bool
		want   []int
	}{
		{"packed", 23, false, all, []int{8, 8, 7, 0, 0, 0, 0, 0, 0, 0}},
		// 23 over 10: 3 (20 left), 3 over 9 (17), 3 over 8 (14), then 2s.
		{"spread", 23, true, all, []int{3, 3, 3, 2, 2, 2, 2, 2, 2, 2}},
		{"all", 80, true, all, []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8}},
		{"packed, node 0 refused", 10, false, notFirst, []int{0, 8, 2, 0, 0, 0, 0, 0, 0, 0}},
		// 10 over the 9 others: 2 (8 left over 8), then 1s.
		{"spread, node 0 refused", 10, true, notFirst, []int{0, 2, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"nothing", 0, true, all, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"more than the GPUs", 90, true, all, []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8}},
	} {
		if got := migPerNode(c, map[int]int{0: tc.left}, func(int) bool { return tc.spread }, tc.ok); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Nodes of 8, 2, 2 and 2 GPUs, 14 to spread: two rounds give each 2
	// (6 left), then only the first has room: 8, 2, 2, 2 in either
	// order of the nodes. 5 spread: 2, 1, 1, 1.
	spread := func(int) bool { return true }
	for _, caps := range [][]int{{8, 2, 2, 2}, {2, 2, 2, 8}} {
		c := &cluster.Cluster{}
		for _, n := range caps {
			c.Nodes = append(c.Nodes, cluster.Node{ModelID: 0, GPUFree: make([]int64, n)})
		}
		if got := migPerNode(c, map[int]int{0: 14}, spread, all); !reflect.DeepEqual(got, caps) {
			t.Errorf("14 over nodes of %v GPUs: %v, want all of them", caps, got)
		}
		want := []int{2, 1, 1, 1}
		if got := migPerNode(c, map[int]int{0: 5}, spread, all); !reflect.DeepEqual(got, want) {
			t.Errorf("5 over nodes of %v GPUs: %v, want %v", caps, got, want)
		}
	}
}

// TestMIGLayoutUsesGiven: given layouts that differ between a node's GPUs,
// or on GPUs other than its first ones, are kept per GPU (GPULayouts), and
// Groups gives them by layout; nodes of the same layouts are one use, in
// node order. 3 nodes of 4 A100-80GB: n0 and n2 with GPUs 0-1 as 2 ×
// 3g.40gb, GPU 2 whole, GPU 3 as 7 × 1g.10gb; n1 with GPU 1 alone as 2 ×
// 3g.40gb (not the first GPU).
func TestMIGLayoutUsesGiven(t *testing.T) {
	var nodes []trace.NodeSpec
	for i := range 3 {
		nodes = append(nodes, trace.NodeSpec{Name: fmt.Sprintf("n%d", i), CPUMilli: 64000, MemoryMiB: 1 << 20, GPUs: 4, Model: "A100-80GB", Line: i + 2})
	}
	w, err := Prepare("nodes.csv", nodes, "pods.csv", []trace.PodSpec{{Name: "a", CPUMilli: 1000, NumGPU: 1, GPUMilli: 300, Line: 2}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	g3, g1 := []string{"3g.40gb", "3g.40gb"}, slices.Repeat([]string{"1g.10gb"}, 7)
	given := func(node, g int) []string {
		if node == 1 {
			return map[int][]string{1: g3}[g]
		}
		return map[int][]string{0: g3, 1: g3, 3: g1}[g]
	}
	_, uses, err := w.WithSharing(Sharing{Mode: "mig"}, given, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []MIGLayoutUse{
		{Model: "A100-80GB", Nodes: 2, NodeNames: []string{"n0", "n2"}, MIGGPUsPerNode: 3, GPUsPerNode: 4, GPULayouts: [][]string{g3, g3, nil, g1}, Source: "given"},
		{Model: "A100-80GB", Nodes: 1, NodeNames: []string{"n1"}, MIGGPUsPerNode: 1, GPUsPerNode: 4, GPULayouts: [][]string{nil, g3, nil, nil}, Source: "given"},
	}
	if !reflect.DeepEqual(uses, want) {
		t.Fatalf("uses %+v, want %+v", uses, want)
	}
	wantGroups := [][]GPUGroup{
		{{GPUs: []int{0, 1}, Layout: g3}, {GPUs: []int{2}}, {GPUs: []int{3}, Layout: g1}},
		{{GPUs: []int{0, 2, 3}}, {GPUs: []int{1}, Layout: g3}},
	}
	for i, u := range uses {
		if got := u.Groups(); !reflect.DeepEqual(got, wantGroups[i]) {
			t.Errorf("use %d: groups %+v, want %+v", i, got, wantGroups[i])
		}
	}
	if got := LayoutText(append(slices.Clone(g3), g1...)); got != "2 × 3g.40gb + 7 × 1g.10gb" {
		t.Errorf("LayoutText %q", got)
	}
	if got := GPUList([]int{0, 1, 2, 4, 6, 7}); got != "GPUs 0-2, 4, 6-7" {
		t.Errorf("GPUList %q", got)
	}
	if got := GPUList([]int{3}); got != "GPU 3" {
		t.Errorf("GPUList %q", got)
	}
}

// TestMIGCountPerModel: a model's MIG GPUs are counted from the pods that
// may run on it. One node of 8 A100-80GB, one of 8 H100-80GB; 4 pods of
// 400 milli-GPU that ask for an H100-80GB (3g.40gb: 4 of 8 memory slots,
// 2 GPUs in all) and 4 of one whole A100-80GB. H100: f = 2 / 2 = 1, all 8
// GPUs; A100: no MIG pod may run there, none (counted over all pods, f =
// 2 / 6 would have put 3 of each model's GPUs in MIG mode, the A100s'
// for no pod).
func TestMIGCountPerModel(t *testing.T) {
	nan := math.NaN()
	var pods []trace.PodSpec
	for i := range 8 {
		p := trace.PodSpec{Name: fmt.Sprintf("p%d", i), CPUMilli: 1000, NumGPU: 1, GPUMilli: 400, GPUSpec: "H100-80GB", Creation: float64(i), Deletion: nan, Scheduled: nan, Line: int32(i + 2)}
		if i >= 4 {
			p.GPUMilli, p.GPUSpec = 1000, "A100-80GB"
		}
		pods = append(pods, p)
	}
	nodes := []trace.NodeSpec{
		{Name: "a", CPUMilli: 128000, MemoryMiB: 1 << 21, GPUs: 8, Model: "A100-80GB", Line: 2},
		{Name: "h", CPUMilli: 128000, MemoryMiB: 1 << 21, GPUs: 8, Model: "H100-80GB", Line: 3},
	}
	w, err := Prepare("nodes.csv", nodes, "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, uses, err := w.WithSharing(Sharing{Mode: "mig"}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []MIGLayoutUse{{Model: "H100-80GB", Nodes: 1, NodeNames: []string{"h"}, MIGGPUsPerNode: 8, GPUsPerNode: 8, Layout: []string{"3g.40gb", "3g.40gb"}, Source: "chosen"}}
	if !reflect.DeepEqual(uses, want) {
		t.Errorf("layouts %+v, want %+v", uses, want)
	}
}
