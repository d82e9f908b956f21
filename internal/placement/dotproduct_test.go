// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestDotProductScore(t *testing.T) {
	big := node(t, "G3", 128000, 786432, 8)
	runScores(t, DotProduct{}, []scoreCase{
		// dot = (12000/128000·2000/128000 + 1400/8000·300/8000)/2 = 0.0035644…; 100·(1−dot) = 99.64
		{"share on a used node", handNode(t), sharePod, 99},
		// dot = (0.09375·0.015625 + 0.175·0.125)/2 = 0.0116699…; 100·(1−dot) = 98.83
		{"whole GPU on a used node", handNode(t), wholePod, 98},
		// dot = (128000/128000·64000/128000 + 8000/8000·8000/8000)/2 = 0.75
		{"8 GPUs on a free 128-core node", big, cluster.Pod{CPUMilli: 64000, NumGPU: 8, GPUMilli: 1000}, 25},
		// dot = (1·1 + 1·0)/2 = 0.5
		{"all CPU, no GPU", big, cluster.Pod{CPUMilli: 128000}, 50},
	})
}

func TestDotProductSelectsBestFit(t *testing.T) {
	// GPUs free [400, 1000]: a 300 share goes to GPU 0, the fuller one.
	if got := (DotProduct{}).SelectGPUs(nil, handNode(t), &sharePod, nil); got != 1<<0 {
		t.Errorf("GPUs = %b, want GPU 0", uint64(got))
	}
}
