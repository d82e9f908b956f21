// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestGPUClusteringScore(t *testing.T) {
	// A T4 node holding a 500 share on GPU 0 and a whole GPU 1: 500 free.
	mixed := node(t, "T4", 16000, 65536, 2,
		binding{cluster.Pod{NumGPU: 1, GPUMilli: 500}, 1 << 0},
		binding{cluster.Pod{NumGPU: 1, GPUMilli: 1000}, 1 << 1})
	runScores(t, GPUClustering{}, []scoreCase{
		// u = ⌊25·(8000−1400)/8000⌋ = 20; only GPU-sharing pods on the node: +75.
		{"same kind only", handNode(t), sharePod, 95},
		// Other kinds only: u.
		{"other kind only", handNode(t), wholePod, 20},
		// u = ⌊25·(8000−500)/8000⌋ = 23; same kind among others: +50.
		{"same kind among others", mixed, cluster.Pod{NumGPU: 1, GPUMilli: 400}, 73},
		// u = ⌊25·(8000−8000)/8000⌋ = 0; no GPU pod: +25.
		{"empty 8-GPU node", node(t, "G2", 96000, 393216, 8), wholePod, 25},
		{"pod without GPUs", handNode(t), cpuPod, 0},
	})
}
