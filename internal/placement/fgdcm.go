package placement

import (
	"errors"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// FGDCM is FGD that also sees the GPUs a node strands for want of CPU or
// memory. Two changes to FGD (Weng et al., USENIX ATC 2023):
//
//   - a pod that requests GPUs is scored as by FGD, but with fragmentation
//     measured by TargetWorkload.FragMem: a target shape also counts all
//     the node's idle GPU capacity as fragmented when the node lacks the
//     shape's memory (its pods' mean request), not only its CPU;
//
//   - a pod that requests no GPU, which FGD scores 50 on most nodes
//     (it changes fragmentation only where it crosses a shape's CPU
//     request), goes where CPU is least needed by GPUs:
//
//     score = 100                                  on a node with no idle GPU
//     score = min(99, ⌊2 · (cpuFree − cpu) / idle⌋) otherwise
//
//     with cpuFree and cpu in millicores and idle the node's free
//     milli-GPU: twice the cores left per idle GPU.
//
// GPUs are chosen as FGD chooses them, with FragMem. Score depends only
// on the node's free resources and the pod. This project's policy; its
// measurements against FGD are in docs/simulate.md, "Beyond FGD".
type FGDCM struct {
	fgd FGD
}

// NewFGDCM returns FGDCM for target workload tw.
func NewFGDCM(tw *TargetWorkload) (Policy, error) {
	if tw == nil {
		return nil, errors.New("policy fgdcm needs a target workload")
	}
	return FGDCM{fgd: FGD{Target: tw, mem: true}}, nil
}

func (FGDCM) Name() string                { return "fgdcm" }
func (FGDCM) PreScore(*cluster.Pod) State { return nil }

func (f FGDCM) Score(s State, n *cluster.Node, p *cluster.Pod) int64 {
	if p.NumGPU == 0 {
		idle := n.GPUFreeTotal()
		if idle == 0 {
			return MaxNodeScore
		}
		return min(MaxNodeScore-1, 2*(n.CPUFree-p.CPUMilli)/idle)
	}
	return f.fgd.Score(s, n, p)
}

func (f FGDCM) SelectGPUs(s State, n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	if p.NumGPU == 0 {
		return 0
	}
	return f.fgd.SelectGPUs(s, n, p, rng)
}
