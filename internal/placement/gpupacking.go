// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// GPUPacking prefers, in order:
//
//	GPUs already partly used:      max(100 − Σ freePercent/10, 50)
//	free GPUs on a node in use:    max(50 − freeTaken, 33)
//	a wholly free node of k GPUs:  max(33 − k, k)
//
// where the pod takes the fitting GPUs with the least free share first,
// freePercent is each taken GPU's free share in percent (before the pod)
// and freeTaken the number of wholly free GPUs it takes. A pod without GPUs
// scores 0 everywhere. GPUs are chosen best-fit. Source: the openb
// simulator's GpuPackingScore plugin
// (github.com/hkust-adsl/kubernetes-scheduler-simulator).
type GPUPacking struct{}

func (GPUPacking) Name() string                { return "gpupacking" }
func (GPUPacking) PreScore(*cluster.Pod) State { return nil }
func (GPUPacking) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	if p.NumGPU == 0 {
		return 0
	}
	free := n.FullyFreeGPUs()
	if free == n.GPUs() {
		return max(int64(MaxNodeScore/3-free), int64(free))
	}
	// Take the fitting GPUs with the least free share first.
	var used [cluster.MaxGPUsPerNode]bool
	need, freeTaken := p.NumGPU, 0
	var ratio int64
	for need > 0 {
		pick := -1
		for i, f := range n.GPUFree {
			if _, ok := n.FreeAfter(p, i); ok && !used[i] && (pick < 0 || f < n.GPUFree[pick]) {
				pick = i
			}
		}
		if pick < 0 {
			return 0
		}
		used[pick] = true
		need--
		if n.GPUFree[pick] == cluster.MilliGPU {
			freeTaken++
		}
		ratio += n.GPUFree[pick] * 100 / cluster.MilliGPU
	}
	if freeTaken > 0 {
		return max(int64(MaxNodeScore/2-freeTaken), MaxNodeScore/3)
	}
	return max(MaxNodeScore-ratio/10, MaxNodeScore/2)
}
func (GPUPacking) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
