// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// BestFit prefers the node left with the least free CPU and GPU:
//
//	raw   = ⌊100 · (1 − ((cpuFree−cpu)/128000 · ½ + (gpuFree−gpu)/8000 · ½))⌋
//	score = ⌊(raw − min) · 100 / (max − min)⌋   over the fitting nodes
//
// (0 everywhere when max = min), with cpuFree (millicores) and gpuFree
// (milli-GPU) the node's free resources and cpu and gpu the pod's requests.
// GPUs are chosen best-fit. Source: the openb simulator's BestFitScore
// plugin and its min-max NormalizeScore
// (github.com/hkust-adsl/kubernetes-scheduler-simulator).
type BestFit struct{}

func (BestFit) Name() string                { return "bestfit" }
func (BestFit) PreScore(*cluster.Pod) State { return nil }
func (BestFit) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	s := float64(n.CPUFree-p.CPUMilli)/maxSpecCPU*0.5 +
		float64(n.GPUFreeTotal()-p.TotalGPUMilli())/maxSpecGPU*0.5
	return int64((1 - s) * MaxNodeScore)
}
func (BestFit) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}

// NormalizeScores rescales raw scores min-max to 0..100.
func (BestFit) NormalizeScores(scores []int64) { minMaxNormalize(scores) }

func minMaxNormalize(scores []int64) {
	if len(scores) == 0 {
		return
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi == lo {
			scores[i] = 0
		} else {
			scores[i] = (s - lo) * MaxNodeScore / (hi - lo)
		}
	}
}
