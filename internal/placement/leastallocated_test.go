// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import "testing"

func TestLeastAllocatedScore(t *testing.T) {
	runScores(t, LeastAllocated{}, []scoreCase{
		// CPU (16000−6000)·100/16000 = 62, memory (65536−24576)·100/65536 = 62,
		// GPU (2000−900)·100/2000 = 55; (62+62+55)/3 = 59
		{"share on a used node", handNode(t), sharePod, 59},
		// GPU (2000−1600)·100/2000 = 20; (62+62+20)/3 = 48
		{"whole GPU on a used node", handNode(t), wholePod, 48},
		// CPU (8000−1000)·100/8000 = 87, memory (32768−1024)·100/32768 = 96,
		// no GPU capacity scores 0; (87+96+0)/3 = 61
		{"CPU-only node", node(t, "", 8000, 32768, 0), cpuPod, 61},
	})
}
