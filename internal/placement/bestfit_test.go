// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"slices"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestBestFitScore(t *testing.T) {
	runScores(t, BestFit{}, []scoreCase{
		// s = 10000/128000·½ + 1100/8000·½ = 0.1078125; 100·(1−s) = 89.22
		{"share on a used node", handNode(t), sharePod, 89},
		// s = 10000/128000·½ + 400/8000·½ = 0.0640625; 100·(1−s) = 93.59
		{"whole GPU on a used node", handNode(t), wholePod, 93},
		// s = 0/128000·½ + 0/8000·½ = 0: the node is left full.
		{"fills the node", node(t, "G3", 128000, 786432, 8), cluster.Pod{CPUMilli: 128000, NumGPU: 8, GPUMilli: 1000}, 100},
	})
}

func TestBestFitNormalizeScores(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []int64
	}{
		// (s−40)·100/50
		{"min-max", []int64{40, 90, 65, 40}, []int64{0, 100, 50, 0}},
		// (s−10)·100/3: 33.3 and 66.6 round down.
		{"rounds down", []int64{10, 11, 12, 13}, []int64{0, 33, 66, 100}},
		{"all equal", []int64{7, 7}, []int64{0, 0}},
		{"one node", []int64{93}, []int64{0}},
		{"no node", []int64{}, []int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := slices.Clone(tc.in)
			BestFit{}.NormalizeScores(s)
			if !slices.Equal(s, tc.want) {
				t.Errorf("NormalizeScores(%v) = %v, want %v", tc.in, s, tc.want)
			}
		})
	}
}
