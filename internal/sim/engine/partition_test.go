// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func TestParseSharingPartition(t *testing.T) {
	for in, want := range map[string]string{
		"partition:CPX/NPS1":        "partition:CPX/NPS1",
		"partition:cpx":             "partition:CPX/NPS1", // NPS1 when left out
		"partition:cpx_nps4":        "partition:CPX/NPS4", // AMD's label spelling
		"exclusive+partition:QPX":   "partition:QPX/NPS1",
		"mig+partition:DPX/NPS1":    "mig+partition:DPX/NPS1",
		"partition:CPX+timeslice:4": "timeslice:4+partition:CPX/NPS1",
	} {
		s, err := ParseSharing(in)
		if err != nil || len(s) != 1 || s[0].String() != want {
			t.Errorf("ParseSharing(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	// SPX/NPS4: NPS4 needs QPX or CPX on every AMD model; two NVIDIA
	// modes, two partition modes, or an unknown one are errors.
	for _, in := range []string{"partition:SPX/NPS4", "partition:XPX", "mig+fractional", "partition:CPX+partition:QPX", "partition:"} {
		if s, err := ParseSharing(in); err == nil {
			t.Errorf("ParseSharing(%q) = %v, want an error", in, s)
		}
	}
}

// partitionNodes are 8 nodes of 2 MI300X, one of 8 H100-80GB and one
// MI250X node of 4 devices (8 GPUs: two GCDs each, no partition modes).
func partitionNodes() []trace.NodeSpec {
	var nodes []trace.NodeSpec
	for i := range 8 {
		nodes = append(nodes, trace.NodeSpec{Name: "mi" + string(rune('0'+i)), CPUMilli: 96000, MemoryMiB: 1 << 20, GPUs: 2, Model: "MI300X", Line: i + 2})
	}
	return append(nodes,
		trace.NodeSpec{Name: "h100", CPUMilli: 96000, MemoryMiB: 1 << 20, GPUs: 8, Model: "H100-80GB", Line: 10},
		trace.NodeSpec{Name: "mi250", CPUMilli: 96000, MemoryMiB: 1 << 20, GPUs: 8, Model: "MI250X", Line: 11})
}

// TestPartitionLayout: 2 MI300X × 8 nodes are 16 GPUs as the node list
// gives them (SPX) and 2 × 8 × 8 = 128 in CPX/NPS1, each of 192 GiB / 8 =
// 196,608 / 8 = 24,576 MiB (AMD's MI300X partitioning overview: a CPX
// partition is one XCD and, in NPS1, an eighth of the HBM to it) and
// priced 6.00 / 8 = 0.75 USD/h (the catalog's MI300X price). A 100
// milli-GPU share fits a partition (100 ≤ 1000/8 = 125); a 500 one does
// not; a pod of 2 whole devices takes 2 × 8 = 16 partitions, a node's
// all. The H100 and the MI250X nodes keep their 8 GPUs.
func TestPartitionLayout(t *testing.T) {
	pods := []trace.PodSpec{{Name: "p", CPUMilli: 1000, NumGPU: 1, GPUMilli: 100, Creation: 0, Deletion: math.NaN(), Scheduled: math.NaN(), Line: 2}}
	w, err := Prepare("nodes.csv", partitionNodes(), "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	gpus := func(v *Workload, model string) (n int) {
		for i := range v.template.Nodes {
			if v.template.Nodes[i].Model == model {
				n += v.template.Nodes[i].GPUs()
			}
		}
		return n
	}
	ex, _ := ParseSharing("exclusive,partition:CPX/NPS1")
	spx, _, err := w.WithSharing(ex[0], nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	cpx, _, err := w.WithSharing(ex[1], nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := gpus(spx, "MI300X"), gpus(cpx, "MI300X"); a != 16 || b != 128 {
		t.Errorf("MI300X GPUs: exclusive %d, CPX/NPS1 %d; want 16, 128", a, b)
	}
	if a, b := gpus(cpx, "H100-80GB"), gpus(cpx, "MI250X"); a != 8 || b != 8 {
		t.Errorf("CPX/NPS1: H100 %d, MI250X %d GPUs; want 8, 8 (as given)", a, b)
	}
	ps := cpx.Partitions()
	if len(ps) != 2 {
		t.Fatalf("partitions %+v, want MI300X and MI250X", ps)
	}
	if u := ps[0]; u.Model != "MI300X" || u.Nodes != 8 || u.DevicesPerNode != 2 || u.GPUsPerNode != 16 || u.GPUMemoryMiB != 24576 ||
		math.Abs(u.USDPerGPUHour-0.75) > 1e-12 || u.MaxShareMilli != 125 || u.Partition != "CPX/NPS1" {
		t.Errorf("MI300X: %+v", u)
	}
	if u := ps[1]; u.Model != "MI250X" || u.Partition != "" || u.NoMode == "" {
		t.Errorf("MI250X: %+v, want left as given, with why", u)
	}
	n := &cpx.template.Nodes[0]
	for _, tc := range []struct {
		numGPU int
		milli  int64
		fits   bool
		takes  int // partitions
	}{
		{1, 100, true, 1},
		{1, 125, true, 1},
		{1, 126, false, 0},
		{1, 500, false, 0},
		{2, 1000, true, 16},
	} {
		p := cluster.Pod{Name: "x", CPUMilli: 1000, NumGPU: tc.numGPU, GPUMilli: tc.milli}
		var buf cluster.Pod
		got := n.Served(&p, &buf)
		if cluster.Feasible(n, &p) != tc.fits || (tc.fits && got.NumGPU != tc.takes) {
			t.Errorf("%d × %d milli: fits %v, served %+v; want fits %v, %d partitions", tc.numGPU, tc.milli, cluster.Feasible(n, &p), got, tc.fits, tc.takes)
		}
		var buf2 cluster.Pod
		if again := n.Served(got, &buf2); *again != *got {
			t.Errorf("%d × %d milli: Served of the served pod %+v, want itself %+v", tc.numGPU, tc.milli, again, got)
		}
	}
}

// TestPartitionModeByHand replays five pods that never leave, one second
// apart, on one node of 2 MI300X: a 100 milli-GPU, b 125, c 500, d one
// whole device, e 100; best fit. Worked out by hand:
//   - exclusive: a and b take a device each; c, d, e fail. 2 placed,
//     served 100 + 125 = 225, padding 2000 − 225 = 1775, 2 GPUs needed at
//     6.00: 12.00 USD/h;
//   - partition:CPX/NPS1 (16 partitions of 125 milli of a device): a, b
//     one each; c fails (500 > 125: no partition holds it); d takes 8; e
//     one. 4 placed, 11 partitions: 11 × 125 = 1375 allocated, served 100
//   - 125 + 1000 + 100 = 1325, padding 50, 11/8 = 1.375 GPUs needed at
//     0.75: 8.25 USD/h.
//
// Arrived is 1825 in both, as asked. Fragmentation at the end (the
// target workload is the five pods' four shapes, a's and e's 2/5, each
// other 1/5): exclusive has no free GPU; in CPX the 5 free partitions
// (5000 milli of partitions, 625 of the devices) serve the 100 and 125
// shapes, c's shape is served by none (1/5 × 5000) and d's needs 8 (1/5 ×
// 5000): 2000 / 8 = 250 of the devices, 250 / 625 = 0.4 of the free.
func TestPartitionModeByHand(t *testing.T) {
	nan := math.NaN()
	nodes := []trace.NodeSpec{{Name: "mi", CPUMilli: 96000, MemoryMiB: 1 << 20, GPUs: 2, Model: "MI300X", Line: 2}}
	var pods []trace.PodSpec
	for i, p := range []struct {
		n int8
		m int16
	}{{1, 100}, {1, 125}, {1, 500}, {1, 1000}, {1, 100}} {
		pods = append(pods, trace.PodSpec{Name: string(rune('a' + i)), CPUMilli: 1000, NumGPU: p.n, GPUMilli: p.m, Creation: float64(i), Deletion: nan, Scheduled: nan, Line: int32(i + 2)})
	}
	w, err := Prepare("nodes.csv", nodes, "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode                   string
		placed                 int
		alloc, served, padding int64
		needed, usd, frag      float64
	}{
		{"exclusive", 2, 2000, 225, 1775, 2, 12, 0},
		{"partition:CPX/NPS1", 4, 1375, 1325, 50, 1.375, 8.25, 0.4},
	} {
		ss, _ := ParseSharing(tc.mode)
		v, _, err := w.WithSharing(ss[0], nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), v, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Seed: 1, TieBreak: placement.TieFirst})
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		s := r.Sharing
		if s == nil || s.PlacedPods != tc.placed || r.AllocatedGPUMilli != tc.alloc || r.ServedGPUMilli != tc.served || r.PaddingGPUMilli != tc.padding || r.ArrivedGPUMilli != 1825 {
			t.Errorf("%s: placed %v, allocated %d, served %d, padding %d, arrived %d; want %d, %d, %d, %d, 1825",
				tc.mode, s, r.AllocatedGPUMilli, r.ServedGPUMilli, r.PaddingGPUMilli, r.ArrivedGPUMilli, tc.placed, tc.alloc, tc.served, tc.padding)
			continue
		}
		if math.Abs(r.FragmentationRatio-tc.frag) > 1e-12 {
			t.Errorf("%s: fragmentation ratio %v, want %v", tc.mode, r.FragmentationRatio, tc.frag)
		}
		if math.Abs(s.GPUsNeeded-tc.needed) > 1e-12 || math.Abs(s.GPUsNeededUSDPerHour-tc.usd) > 1e-9 {
			t.Errorf("%s: %v GPUs needed at %v USD/h; want %v at %v", tc.mode, s.GPUsNeeded, s.GPUsNeededUSDPerHour, tc.needed, tc.usd)
		}
	}
}

// TestPartitionRefused: a partition mode lays out whole devices, so it is
// refused where that cannot be honest: an MI300X node given in CPX/NPS1
// already (its pods' amd.com/gpu count partitions of that layout), a
// cluster with no AMD node of a model that has the mode (an H100 node),
// and a pod claiming AMD devices by DRA (AMD's driver publishes its own
// partitions).
func TestPartitionRefused(t *testing.T) {
	pod := trace.PodSpec{Name: "p", CPUMilli: 1000, NumGPU: 1, GPUMilli: 100, Creation: 0, Deletion: math.NaN(), Scheduled: math.NaN(), Line: 2}
	cpx, _ := ParseSharing("partition:CPX/NPS1")
	given := partitionNodes()[:1]
	given[0].GPUs, given[0].Partition = 16, cpx[0].Partition
	claim := pod
	claim.NumGPU, claim.GPUMilli, claim.Resource = 1, 1000, cluster.ResourceAMD|cluster.ResourceClaimed
	for _, tc := range []struct {
		nodes []trace.NodeSpec
		pod   trace.PodSpec
		want  string
	}{
		{given, pod, "node mi0: its MI300X are given in CPX/NPS1, each amd.com/gpu a partition"},
		{partitionNodes()[8:9], pod, "no node of the cluster is of an AMD model that has partition mode CPX/NPS1"},
		{partitionNodes()[:1], claim, "pod p claims AMD devices by DRA"},
	} {
		w, err := Prepare("nodes.csv", tc.nodes, "pods.csv", []trace.PodSpec{tc.pod}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.WithSharing(cpx[0], nil, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
