// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// MostAllocated is kube-scheduler's bin-packing score (NodeResourcesFit,
// MostAllocated) on CPU, memory and GPU:
//
//	score = ⌊Σ_r ⌊requested_r · 100 / capacity_r⌋ / 3⌋
//
// over r in CPU, memory, GPU, requested including the pod (see
// allocatedScore). GPUs are chosen best-fit. Source: kube-scheduler
// pkg/scheduler/framework/plugins/noderesources/most_allocated.go.
type MostAllocated struct{}

func (MostAllocated) Name() string                { return "mostallocated" }
func (MostAllocated) PreScore(*cluster.Pod) State { return nil }
func (MostAllocated) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	return allocatedScore(n, p, true)
}
func (MostAllocated) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
