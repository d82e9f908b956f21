// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestBestFitGPUs(t *testing.T) {
	share := func(milli int64) cluster.Pod { return cluster.Pod{NumGPU: 1, GPUMilli: milli} }
	// GPUs free [1000, 300, 1000, 0, 500, 300].
	n := node(t, "G2", 96000, 393216, 6,
		binding{share(700), 1 << 1}, binding{share(1000), 1 << 3},
		binding{share(500), 1 << 4}, binding{share(700), 1 << 5})
	for _, tc := range []struct {
		name string
		pod  cluster.Pod
		want cluster.GPUSet
	}{
		// Least free share that fits: 300 on GPUs 1 and 5; the lower index.
		{"share: fullest fitting GPU, lowest index", share(300), 1 << 1},
		// 500 fits GPUs 0, 2 (1000) and 4 (500): GPU 4.
		{"share: skips GPUs it does not fit", share(500), 1 << 4},
		{"share: a whole free GPU when nothing else fits", share(501), 1 << 0},
		{"one whole GPU: the first free", share(1000), 1 << 0},
		{"two whole GPUs: the first two free", cluster.Pod{NumGPU: 2, GPUMilli: 1000}, 1<<0 | 1<<2},
		{"no GPUs", cluster.Pod{CPUMilli: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bestFitGPUs(n, &tc.pod); got != tc.want {
				t.Errorf("bestFitGPUs = %b, want %b", uint64(got), uint64(tc.want))
			}
		})
	}
}
