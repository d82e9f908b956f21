// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// GPUClustering puts pods of the same kind (shared GPU, or k whole GPUs)
// together. With u = ⌊25 · (8000 − gpuFree) / 8000⌋, gpuFree the node's
// free milli-GPU:
//
//	u + 75  on a node holding only pods of that kind
//	u + 50  on a node holding that kind among others
//	u + 25  on a node holding no GPU pod
//	u       on a node holding other kinds only
//
// A pod without GPUs scores 0 everywhere. GPUs are chosen best-fit. Source:
// the openb simulator's GpuClusteringScore plugin
// (github.com/hkust-adsl/kubernetes-scheduler-simulator).
type GPUClustering struct{}

func (GPUClustering) Name() string                { return "gpuclustering" }
func (GPUClustering) PreScore(*cluster.Pod) State { return nil }
func (GPUClustering) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	k, ok := cluster.AffinityKey(p)
	if !ok {
		return 0
	}
	u := int64(MaxNodeScore/4) * (maxSpecGPU - n.GPUFreeTotal()) / maxSpecGPU
	switch {
	case n.Affinity[k] > 0 && n.AffinityKinds == 1:
		return u + MaxNodeScore*3/4
	case n.Affinity[k] > 0:
		return u + MaxNodeScore*2/4
	case n.AffinityKinds == 0:
		return u + MaxNodeScore/4
	}
	return u
}
func (GPUClustering) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
