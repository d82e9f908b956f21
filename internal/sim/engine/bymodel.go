// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"math"
	"sort"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// ModelUse is the GPU allocation of the nodes of one GPU model at the end
// of a run.
type ModelUse struct {
	// Model is the GPU model as the node list writes it.
	Model string `json:"model"`
	Nodes int    `json:"nodes"`
	GPUs  int    `json:"gpus"`
	// AllocatedGPUMilli is the model's allocated capacity, in milli-GPU.
	AllocatedGPUMilli int64 `json:"allocated_gpu_milli"`
	// AllocationRatio is AllocatedGPUMilli / (GPUs × 1000), 0..1.
	AllocationRatio float64 `json:"gpu_allocation_ratio"`
	// NodeAllocation is each node's allocated share of its GPUs, in 1/1000
	// (rounded), most allocated first: the per-node picture of the HTML
	// report. It is kept only with Config.NodeDetail, for the first seed.
	NodeAllocation []int `json:"node_allocation_permille,omitempty"`
}

// byModel sums c's GPU nodes by model, models by name.
func byModel(c *cluster.Cluster) []ModelUse {
	idx := map[string]int{}
	var out []ModelUse
	for i := range c.Nodes {
		n := &c.Nodes[i]
		g := len(n.GPUFree)
		if g == 0 {
			continue
		}
		k, ok := idx[n.Model]
		if !ok {
			k = len(out)
			idx[n.Model] = k
			out = append(out, ModelUse{Model: n.Model})
		}
		alloc := int64(g)*cluster.MilliGPU - n.GPUFreeTotal()
		m := &out[k]
		m.Nodes++
		m.GPUs += g
		m.AllocatedGPUMilli += alloc
		m.NodeAllocation = append(m.NodeAllocation, int(math.Round(float64(alloc)/float64(g))))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Model < out[b].Model })
	for i := range out {
		m := &out[i]
		m.AllocationRatio = float64(m.AllocatedGPUMilli) / float64(int64(m.GPUs)*cluster.MilliGPU)
		sort.Sort(sort.Reverse(sort.IntSlice(m.NodeAllocation)))
	}
	return out
}
