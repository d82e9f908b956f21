// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestFGDCMByHand: the target workload of TestFragCMByHand, A (4 CPU,
// 8 GiB, 500 milli-GPU) and B (1 CPU, 16 GiB, one whole GPU), asking for
// 10/3 millicores and 16.384 MiB per milli-GPU, on T4 nodes of 16 cores and
// 64 GiB with both GPUs free.
func TestFGDCMByHand(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{
		{CPUMilli: 4000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 1000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 1000},
	}, 1)
	pol, err := New("fgdcm", tw)
	if err != nil {
		t.Fatal(err)
	}
	fgd, _ := New("fgd", tw)
	free := node(t, "T4", 16000, 65536, 2)
	// 10 cores and 8 GiB held by a CPU-only pod: 6 cores, 56 GiB free.
	// FragCM 200: its CPU serves 1800 of the 2000 idle milli-GPU.
	short := node(t, "T4", 16000, 65536, 2, binding{cluster.Pod{CPUMilli: 10000, MemoryMiB: 8192}, 0})
	a := cluster.Pod{CPUMilli: 4000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 500}
	b := cluster.Pod{CPUMilli: 1000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 1000}
	c := cluster.Pod{CPUMilli: 4000, MemoryMiB: 4096}
	for _, tc := range []struct {
		name      string
		node      *cluster.Node
		pod       cluster.Pod
		fgd, want int64
		gpus      cluster.GPUSet
	}{
		// 0 before; after [0, 1000], 15 cores, 48 GiB: A and B fit, 1000
		// served (min(1000, 4500, 3000)): 0. ⌊100·σ(0)⌋ = 50, as FGD.
		{"B on the free node", free, b, 50, 50, 1 << 0},
		// 200 before; after [0, 1000], 5 cores, 40 GiB: min(1000, 1500,
		// 2500) served, 0. ⌊100·σ(0.2)⌋ = ⌊54.98⌋. FGD sees 0 before and
		// after: 50, a tie with the free node; FGDCM puts B where CPU
		// would strand GPU capacity.
		{"B where CPU is short", short, b, 50, 54, 1 << 0},
		// After [500, 1000], 12 cores, 56 GiB: B sees GPU 0 below its
		// share, ½·500; 1500 served. ⌊100·σ(−0.25)⌋ = 43, as FGD.
		{"A on the free node", free, a, 43, 43, 1 << 0},
		// 200 before; after [500, 1000], 2 cores: A cannot run, ½·1500,
		// B ½·500; min(1500, 600, 3000) served, 900 more: 1900.
		// ⌊100·σ(−1.7)⌋ = ⌊15.4⌋. FGD: 0 before, 1000 after, ⌊100·σ(−1)⌋
		// = ⌊26.9⌋.
		{"A where CPU is short", short, a, 26, 15, 1 << 0},
		// A CPU-only pod leaving 2 cores: A cannot run, ½·2000; 600
		// served, 1400 more: from 200 to 2400, ⌊100·σ(−2.2)⌋ = ⌊9.97⌋.
		// FGD: ⌊100·σ(−1)⌋ = 26.
		{"CPU pod where CPU is short", short, c, 26, 9, 0},
		// 12 cores, 60 GiB left: all served, nothing changes: 50.
		{"CPU pod on the free node", free, c, 50, 50, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok, why := cluster.Fits(tc.node, &tc.pod); !ok {
				t.Fatalf("test pod does not fit: %s", why)
			}
			if got := fgd.Score(nil, tc.node, &tc.pod); got != tc.fgd {
				t.Errorf("fgd score = %d, want %d", got, tc.fgd)
			}
			s := pol.PreScore(&tc.pod)
			if got := pol.Score(s, tc.node, &tc.pod); got != tc.want {
				t.Errorf("fgdcm score = %d, want %d", got, tc.want)
			}
			if got := pol.SelectGPUs(s, tc.node, &tc.pod, nil); got != tc.gpus {
				t.Errorf("GPUs = %b, want %b", uint64(got), uint64(tc.gpus))
			}
		})
	}
}

// TestFGDCMScoreDoesNotAllocate: as FGD's.
func TestFGDCMScoreDoesNotAllocate(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{sharePod, wholePod, {CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000}}, 1)
	f, _ := NewFGDCM(tw)
	n := handNode(t)
	for _, p := range []cluster.Pod{sharePod, wholePod, cpuPod} {
		if a := testing.AllocsPerRun(100, func() { f.Score(nil, n, &p) }); a != 0 {
			t.Errorf("FGDCM Score of %+v allocates %v times", p, a)
		}
	}
}
