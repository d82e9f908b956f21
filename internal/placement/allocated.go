// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import "github.com/gpuplane/gpuplane/internal/cluster"

// allocatedScore is the scorer LeastAllocated and MostAllocated share, as
// kube-scheduler's NodeResourcesFit strategies share resourceAllocationScorer:
// CPU (millicores), memory (MiB) and GPU (milli-GPU) with equal weights;
// per resource, with requested including the pod,
//
//	least = ⌊(capacity − requested) · 100 / capacity⌋
//	most  = ⌊requested · 100 / capacity⌋
//
// a resource of capacity 0 (or requested beyond it) scores 0, and the node
// score is the integer mean over the three. Source: kube-scheduler
// pkg/scheduler/framework/plugins/noderesources/{least,most}_allocated.go.
func allocatedScore(n *cluster.Node, p *cluster.Pod, most bool) int64 {
	res := [3][2]int64{
		{n.CPUMilli - n.CPUFree + p.CPUMilli, n.CPUMilli},
		{n.MemoryMiB - n.MemoryFree + p.MemoryMiB, n.MemoryMiB},
		{int64(n.GPUs())*cluster.MilliGPU - n.GPUFreeTotal() + p.TotalGPUMilli(), int64(n.GPUs()) * cluster.MilliGPU},
	}
	var sum int64
	for _, r := range res {
		req, capa := r[0], r[1]
		if capa == 0 || req > capa {
			continue
		}
		if most {
			sum += req * MaxNodeScore / capa
		} else {
			sum += (capa - req) * MaxNodeScore / capa
		}
	}
	return sum / int64(len(res))
}
