// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestRandomScoresZero(t *testing.T) {
	runScores(t, Random{}, []scoreCase{
		{"share", handNode(t), sharePod, 0},
		{"pod without GPUs", handNode(t), cpuPod, 0},
	})
	if _, ok := Policy(Random{}).(UniformRandom); !ok {
		t.Error("Random is not UniformRandom")
	}
}

func TestRandomSelectGPUs(t *testing.T) {
	// GPUs free [1000, 300, 1000, 0]: a 300 share fits GPUs 0, 1 and 2.
	n := node(t, "T4", 96000, 393216, 4,
		binding{cluster.Pod{NumGPU: 1, GPUMilli: 700}, 1 << 1},
		binding{cluster.Pod{NumGPU: 1, GPUMilli: 1000}, 1 << 3})
	rng := rand.New(rand.NewPCG(5, 6))
	t.Run("share: uniform over fitting GPUs", func(t *testing.T) {
		seen := map[cluster.GPUSet]int{}
		for i := 0; i < 3000; i++ {
			seen[Random{}.SelectGPUs(nil, n, &sharePod, rng)]++
		}
		// Each of the three is expected 1000 times; 800 is over 7 standard
		// deviations below.
		for _, g := range []cluster.GPUSet{1 << 0, 1 << 1, 1 << 2} {
			if seen[g] < 800 {
				t.Errorf("GPU set %b chosen %d times of 3000, want about 1000: %v", uint64(g), seen[g], seen)
			}
		}
		if len(seen) != 3 {
			t.Errorf("chose a GPU the share does not fit: %v", seen)
		}
	})
	t.Run("whole GPUs: the first free", func(t *testing.T) {
		if got := (Random{}).SelectGPUs(nil, n, &cluster.Pod{NumGPU: 2, GPUMilli: 1000}, rng); got != 1<<0|1<<2 {
			t.Errorf("GPUs = %b, want GPUs 0 and 2", uint64(got))
		}
	})
	t.Run("no GPUs", func(t *testing.T) {
		if got := (Random{}).SelectGPUs(nil, n, &cpuPod, rng); got != 0 {
			t.Errorf("GPUs = %b for a pod without GPUs", uint64(got))
		}
	})
}
