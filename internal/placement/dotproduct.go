// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// DotProduct is the Tetris-style alignment score of the openb simulator
// (DotProductScore with "merge" dimensions and "max" normalisation):
//
//	dot   = (cpuFree/128000 · cpu/128000 + gpuFree/8000 · gpu/8000) / 2
//	score = ⌊100 · (1 − dot)⌋
//
// where cpuFree (millicores) and gpuFree (milli-GPU) are the node's free
// resources and cpu and gpu the pod's requests. GPUs are chosen best-fit.
// Source: github.com/hkust-adsl/kubernetes-scheduler-simulator.
type DotProduct struct{}

func (DotProduct) Name() string                { return "dotproduct" }
func (DotProduct) PreScore(*cluster.Pod) State { return nil }
func (DotProduct) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	dot := float64(n.CPUFree)/maxSpecCPU*float64(p.CPUMilli)/maxSpecCPU +
		float64(n.GPUFreeTotal())/maxSpecGPU*float64(p.TotalGPUMilli())/maxSpecGPU
	dot /= 2
	return int64(MaxNodeScore * (1 - dot))
}
func (DotProduct) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
