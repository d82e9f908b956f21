// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// firstFreeGPUs returns the first k fully free GPUs of n in index order,
// which is how the openb simulator's Open-Gpu-Share plugin places pods of
// whole GPUs (AllocateExclusiveGpuId). MIG-enabled GPUs, of MIG on demand
// too, are never whole (cluster.Node.FreeAfter).
func firstFreeGPUs(n *cluster.Node, p *cluster.Pod) cluster.GPUSet {
	var s cluster.GPUSet
	k := p.NumGPU
	for i, f := range n.GPUFree {
		if k == 0 {
			break
		}
		if f == cluster.MilliGPU && !n.MIGGPUs.Has(i) && (n.Uniform(p) || n.FreeAfterOK(p, i)) {
			s |= 1 << uint(i)
			k--
		}
	}
	return s
}

// bestFitGPUs places a GPU-sharing pod on the GPU with the least free share
// that still fits it (cluster.Node.FreeAfter; lowest index on ties; for a
// pod asking for a MIG profile, the fullest GPU with a free instance of it,
// else a whole GPU), and a pod of whole GPUs on the
// first free GPUs. Source: Open-Gpu-Share's "best" GPU selection in
// github.com/hkust-adsl/kubernetes-scheduler-simulator.
func bestFitGPUs(n *cluster.Node, p *cluster.Pod) cluster.GPUSet {
	if p.NumGPU == 0 {
		return 0
	}
	if !p.IsGPUShare() {
		return firstFreeGPUs(n, p)
	}
	best := -1
	for i, f := range n.GPUFree {
		if _, ok := n.FreeAfter(p, i); ok && (best < 0 || f < n.GPUFree[best]) {
			best = i
		}
	}
	if best < 0 {
		return 0
	}
	return 1 << uint(best)
}

// randomFitGPUs places a GPU-sharing pod on a GPU chosen uniformly among
// those it fits, and a pod of whole GPUs on the first free GPUs.
func randomFitGPUs(n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	if p.NumGPU == 0 {
		return 0
	}
	if !p.IsGPUShare() {
		return firstFreeGPUs(n, p)
	}
	pick, cnt := -1, 0
	for i := range n.GPUFree {
		if _, ok := n.FreeAfter(p, i); ok {
			cnt++
			if rng.IntN(cnt) == 0 {
				pick = i
			}
		}
	}
	if pick < 0 {
		return 0
	}
	return 1 << uint(pick)
}
