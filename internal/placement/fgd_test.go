// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestFGDByHand: target workload of two equally frequent shapes, A (1 CPU,
// 500 milli-GPU) and B (1 CPU, one whole GPU), on T4 nodes. Fragmentation
// values are those of TestNodeFragByHand.
func TestFGDByHand(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000},
	}, 1)
	f, err := NewFGD(tw)
	if err != nil {
		t.Fatal(err)
	}
	// GPUs free [600, 1000], 10 cores free: F = ½·600 = 300.
	used := node(t, "T4", 16000, 65536, 2, binding{cluster.Pod{CPUMilli: 6000, NumGPU: 1, GPUMilli: 400}, 1 << 0})
	// Both GPUs free: F = 0.
	free := node(t, "T4", 16000, 65536, 2)
	for _, tc := range []struct {
		name  string
		node  *cluster.Node
		pod   cluster.Pod
		score int64
		gpus  cluster.GPUSet
	}{
		// On GPU 0 it leaves [100, 1000]: F = ½·100 + ½·100 = 100,
		// ⌊100·σ((300−100)/1000)⌋ = ⌊54.98⌋. On GPU 1 it leaves [600, 500]:
		// B fits nowhere, F = ½·1100 = 550, ⌊100·σ(−0.25)⌋ = 43. GPU 0 wins.
		{"share takes the GPU that fragments least", used, cluster.Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500}, 54, 1 << 0},
		// Whole GPU 1 leaves [600, 0]: B fits nowhere, F = ½·600 = 300,
		// unchanged: ⌊100·σ(0)⌋ = 50.
		{"whole GPU takes the first free", used, cluster.Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000}, 50, 1 << 1},
		// [500, 1000] from [1000, 1000]: A sees nothing, B sees 500:
		// F = 250, ⌊100·σ(−0.25)⌋ = 43. Both GPUs are alike: GPU 0.
		{"share on a free node", free, cluster.Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500}, 43, 1 << 0},
		// Both GPUs taken: no idle GPU, F = 0; ⌊100·σ(0)⌋ = 50.
		{"two whole GPUs fill the node", free, cluster.Pod{CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000}, 50, 0b11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := f.PreScore(&tc.pod)
			if got := f.Score(s, tc.node, &tc.pod); got != tc.score {
				t.Errorf("score = %d, want %d", got, tc.score)
			}
			if got := f.SelectGPUs(s, tc.node, &tc.pod, nil); got != tc.gpus {
				t.Errorf("GPUs = %b, want %b", uint64(got), uint64(tc.gpus))
			}
		})
	}
}

// TestFGDScoreDoesNotAllocate: FGD's scratch copy of a node's GPUs is on
// the stack.
func TestFGDScoreDoesNotAllocate(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{sharePod, wholePod, {CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000}}, 1)
	f, _ := NewFGD(tw)
	n := handNode(t)
	for _, p := range []cluster.Pod{sharePod, wholePod} {
		if a := testing.AllocsPerRun(100, func() { f.Score(nil, n, &p) }); a != 0 {
			t.Errorf("FGD Score of %+v allocates %v times", p, a)
		}
	}
}
