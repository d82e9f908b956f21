// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestGPUPackingScore(t *testing.T) {
	share := func(milli int64) cluster.Pod { return cluster.Pod{NumGPU: 1, GPUMilli: milli} }
	// 4 GPUs free [300, 700, 1000, 1000].
	fourGPUs := node(t, "V100M16", 32000, 131072, 4,
		binding{share(700), 1 << 0}, binding{share(300), 1 << 1})
	runScores(t, GPUPacking{}, []scoreCase{
		// The share takes GPU 0 with 40% free: 100 − 40/10.
		{"share on a partly used GPU", handNode(t), sharePod, 96},
		// The least free fitting GPU is GPU 0 (30% free): 100 − 30/10.
		{"share on the fullest GPU", fourGPUs, share(200), 97},
		// A free GPU on a used node: 50 − 1.
		{"whole GPU on a used node", handNode(t), wholePod, 49},
		// Two free GPUs on a used node: max(50 − 2, 33).
		{"two whole GPUs on a used node", fourGPUs, cluster.Pod{NumGPU: 2, GPUMilli: 1000}, 48},
		// max(33 − 8, 8) and max(33 − 1, 1).
		{"wholly free 8-GPU node", node(t, "G2", 96000, 393216, 8), wholePod, 25},
		{"wholly free 1-GPU node", node(t, "G2", 96000, 393216, 1), wholePod, 32},
		{"pod without GPUs", handNode(t), cpuPod, 0},
	})
}
