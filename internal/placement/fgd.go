// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// FGD is Fragmentation Gradient Descent (Weng et al., "Beware of
// Fragmentation", USENIX ATC 2023): it places a pod where it increases
// the node's fragmentation (TargetWorkload.Frag, milli-GPU) the least:
//
//	score = ⌊100 · σ((F_before − F_after) / 1000)⌋,  σ(x) = 1 / (1 + e^−x)
//
// A GPU-sharing pod is tried on every GPU it fits and scored by the best
// (the lowest-indexed of equally good GPUs is chosen); a pod of whole GPUs
// takes the first free GPUs. A pod asking for a MIG profile is a
// GPU-sharing pod: on a MIG-enabled GPU it takes slices/7 of the GPU
// (cluster.Node.FreeAfter), and fragmentation sees a MIG GPU's free slices
// as one free share below a whole GPU (fragView), an approximation (a free
// 3g instance and three free 1g instances look alike). Source: FGDScore in
// github.com/hkust-adsl/kubernetes-scheduler-simulator.
type FGD struct {
	// Target is the workload fragmentation is measured against; read only.
	Target *TargetWorkload
	// cm measures fragmentation with TargetWorkload.FragCM, for FGDCM.
	cm bool
}

// NewFGD returns FGD for target workload tw.
func NewFGD(tw *TargetWorkload) (Policy, error) {
	if tw == nil {
		return nil, errors.New("policy fgd needs a target workload")
	}
	return FGD{Target: tw}, nil
}

func (FGD) Name() string                { return "fgd" }
func (FGD) PreScore(*cluster.Pod) State { return nil }

func (f FGD) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 {
	s, _ := f.best(n, p)
	return s
}

func (f FGD) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	_, g := f.best(n, p)
	return g
}

// best returns the score and GPUs of p's best placement on n. Its scratch
// copy of the node's GPUs lives on the stack, so concurrent calls share
// nothing and nothing is allocated.
func (f FGD) best(n *cluster.Node, p *cluster.Pod) (int64, cluster.GPUSet) {
	var buf [cluster.MaxGPUsPerNode]int64
	before := f.frag(n, n.CPUFree, n.MemoryFree, fragView(n, buf[:0]))
	after := fragView(n, buf[:0])
	cpu, mem := n.CPUFree-p.CPUMilli, n.MemoryFree-p.MemoryMiB
	if !p.IsGPUShare() {
		g := firstFreeGPUs(n, p)
		for m := uint64(g); m != 0; m &= m - 1 {
			after[bits.TrailingZeros64(m)] -= p.GPUMilli
		}
		return fgdScore(before, f.frag(n, cpu, mem, after)), g
	}
	best, bestGPU := int64(0), -1
	// Without MIG GPUs, GPUs with the same free share give the same result
	// (the fast path of the openb workloads); with them, the same free share
	// before and after.
	mig := !n.Uniform(p)
	for i, free := range n.GPUFree {
		a, ok := free-p.GPUMilli, free >= p.GPUMilli
		if mig || p.MIGProfile != 0 {
			a, ok = n.FreeAfter(p, i)
		}
		if !ok {
			continue
		}
		dup := false
		for j := 0; j < i; j++ {
			if n.GPUFree[j] == free {
				if aj, ok := n.FreeAfter(p, j); !mig || (ok && aj == a) {
					dup = true
					break
				}
			}
		}
		if dup {
			continue
		}
		keep := after[i]
		after[i] = a
		if n.MIGGPUs.Has(i) {
			after[i] = min(a, cluster.MilliGPU-1)
		}
		s := fgdScore(before, f.frag(n, cpu, mem, after))
		after[i] = keep
		if bestGPU < 0 || s > best {
			best, bestGPU = s, i
		}
	}
	if bestGPU < 0 {
		return 0, 0
	}
	return best, 1 << uint(bestGPU)
}

// frag is the fragmentation of node n with cpu millicores, mem MiB and
// GPU shares gpus free.
func (f FGD) frag(n *cluster.Node, cpu, mem int64, gpus []int64) float64 {
	if f.cm {
		return f.Target.FragCM(n.ModelID, cpu, mem, gpus)
	}
	return f.Target.Frag(n.ModelID, cpu, gpus)
}

func fgdScore(before, after float64) int64 {
	x := (before - after) / 1000
	return int64(1 / (1 + math.Exp(-x)) * MaxNodeScore)
}
