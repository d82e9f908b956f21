// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// LeastAllocated is kube-scheduler's default spreading score
// (NodeResourcesFit, LeastAllocated) on CPU, memory and GPU:
//
//	score = ⌊Σ_r ⌊(capacity_r − requested_r) · 100 / capacity_r⌋ / 3⌋
//
// over r in CPU, memory, GPU, requested including the pod (see
// allocatedScore). GPUs are chosen best-fit. Source: kube-scheduler
// pkg/scheduler/framework/plugins/noderesources/least_allocated.go.
type LeastAllocated struct{}

func (LeastAllocated) Name() string                { return "leastallocated" }
func (LeastAllocated) PreScore(*cluster.Pod) State { return nil }
func (LeastAllocated) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	return allocatedScore(n, p, false)
}
func (LeastAllocated) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
