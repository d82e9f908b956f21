// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import "testing"

func TestMostAllocatedScore(t *testing.T) {
	runScores(t, MostAllocated{}, []scoreCase{
		// CPU 6000·100/16000 = 37, memory 24576·100/65536 = 37,
		// GPU 900·100/2000 = 45; 119/3 = 39
		{"share on a used node", handNode(t), sharePod, 39},
		// GPU 1600·100/2000 = 80; (37+37+80)/3 = 51
		{"whole GPU on a used node", handNode(t), wholePod, 51},
		// CPU 1000·100/8000 = 12, memory 1024·100/32768 = 3, GPU 0; 15/3 = 5
		{"CPU-only node", node(t, "", 8000, 32768, 0), cpuPod, 5},
	})
}
