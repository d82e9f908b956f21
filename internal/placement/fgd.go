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
// takes the first free GPUs. Source: FGDScore in
// github.com/hkust-adsl/kubernetes-scheduler-simulator.
//
// A pod asking for a MIG profile is a GPU-sharing pod: on a MIG-enabled
// GPU it takes slices/7 of the GPU (cluster.Node.FreeAfter), and on a GPU
// of MIG on demand it is tried at every free placement (MIGStart).
// Fragmentation sees a MIG GPU by the profiles it can still place
// (TargetWorkload.FragMIG, over the profiles the workload asks for), and
// a MIG pod padded to a whole GPU adds the padding (1000 − its share)
// to the fragmentation after it, 1 + WasteWeight times: a fragment for
// every shape and capacity allocated that no pod uses, as stranded MIG
// slices are (FragMIG). Among
// a MIG pod's GPUs and placements the least fragmentation after it wins
// (the score, rounded, would tie them), the lowest GPU and start of equal
// ones. This project's extension (issue 37); figures in
// docs/simulate-validation.md, "DRA figures".
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
	s, _, _ := f.best(n, p)
	return s
}

func (f FGD) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	_, g, _ := f.best(n, p)
	return g
}

// MIGStart returns the start slot (memory slot 0..7) FGD gives the
// instance of p, a pod asking for a MIG profile, on GPU g of n, a GPU of
// MIG on demand: the free placement after which fragmentation (FragMIG
// over the workload's shapes, whose profiles are those it asks for) is
// lowest, the lowest start of equally good ones. It returns -1 when g is
// no such GPU or p's profile has no free placement there.
func (f FGD) MIGStart(_ State, n *cluster.Node, p *cluster.Pod, g int) int {
	a, ok := n.FreeAfter(p, g)
	if !ok || p.MIGProfile == 0 || n.MIGFreeStarts(g, int(p.MIGProfile)-1) == 0 {
		return -1
	}
	var buf [cluster.MaxGPUsPerNode]int64
	var mbuf [cluster.MaxGPUsPerNode]uint8
	v := fragState{after: fragView(n, buf[:0]), mig: MIGView(n, mbuf[:0]), cpu: n.CPUFree - p.CPUMilli, mem: n.MemoryFree - p.MemoryMiB}
	_, start := f.onGPU(n, p, g, a, &v)
	return start
}

// fragState is a node's view after a pod's CPU and memory are taken
// (fragView, MIGView): scratch that onGPU changes and restores.
type fragState struct {
	after    []int64
	mig      []uint8
	cpu, mem int64
}

// best returns the score and GPUs of p's best placement on n, and on a
// GPU of MIG on demand the start slot of its instance (else -1). A pod
// asking for a MIG profile takes the GPU and placement of least
// fragmentation after it (the score rounds, so it does not break their
// ties); any other share the first GPU of the best score. Its scratch
// copies of the node's GPUs live on the stack, so concurrent calls share
// nothing and nothing is allocated.
func (f FGD) best(n *cluster.Node, p *cluster.Pod) (int64, cluster.GPUSet, int) {
	var buf [cluster.MaxGPUsPerNode]int64
	var mbuf [cluster.MaxGPUsPerNode]uint8
	mig := MIGView(n, mbuf[:0])
	before := f.frag(n, n.CPUFree, n.MemoryFree, fragView(n, buf[:0]), mig)
	v := fragState{after: fragView(n, buf[:0]), mig: mig, cpu: n.CPUFree - p.CPUMilli, mem: n.MemoryFree - p.MemoryMiB}
	if !p.IsGPUShare() {
		g := firstFreeGPUs(n, p)
		for m := uint64(g); m != 0; m &= m - 1 {
			v.after[bits.TrailingZeros64(m)] -= p.GPUMilli
		}
		return fgdScore(before, f.frag(n, v.cpu, v.mem, v.after, mig)), g, -1
	}
	best, bestGPU, bestStart := math.Inf(1), -1, -1
	// Without MIG GPUs, GPUs with the same free share give the same result
	// (the fast path of the openb workloads); with them, the same free share
	// before and after and the same MIG instances.
	uniform := n.Uniform(p)
	for i, free := range n.GPUFree {
		a, ok := free-p.GPUMilli, free >= p.GPUMilli
		if !uniform || p.MIGProfile != 0 {
			a, ok = n.FreeAfter(p, i)
		}
		if !ok || dupGPU(n, p, i, a, uniform) {
			continue
		}
		after, start := f.onGPU(n, p, i, a, &v)
		if p.MIGProfile == 0 {
			// FGD's own rule: the first GPU of the best score.
			after = -float64(fgdScore(before, after))
		}
		if bestGPU < 0 || after < best {
			best, bestGPU, bestStart = after, i, start
		}
	}
	if bestGPU < 0 {
		return 0, 0, -1
	}
	if p.MIGProfile == 0 {
		return int64(-best), 1 << uint(bestGPU), -1
	}
	return fgdScore(before, best), 1 << uint(bestGPU), bestStart
}

// onGPU returns the fragmentation of n after p takes GPU i (a free
// after it), and on a GPU of MIG on demand the start of least
// fragmentation (FragMIG; the lowest of equal ones) with it, else -1.
func (f FGD) onGPU(n *cluster.Node, p *cluster.Pod, i int, a int64, v *fragState) (float64, int) {
	keep := v.after[i]
	defer func() { v.after[i] = keep }()
	if !n.MIGGPUs.Has(i) {
		v.after[i] = a
		fr := f.frag(n, v.cpu, v.mem, v.after, v.mig)
		if p.MIGProfile != 0 {
			// Padded: a MIG instance's share taken as a whole GPU leaves
			// the rest allocated and unused, a fragment for every shape
			// and, as a stranded slice, never used.
			fr += (1 + WasteWeight) * float64(cluster.MilliGPU-p.GPUMilli)
		}
		return fr, -1
	}
	keepM := v.mig[i]
	defer func() { v.mig[i] = keepM }()
	v.after[i] = min(a, cluster.MilliGPU-1)
	k := int(p.MIGProfile) - 1
	starts := n.MIGFreeStarts(i, k)
	if starts == 0 { // a static MIG GPU: no placement to choose
		pl, _ := n.MIGPlaceableAfter(i, k, 0)
		v.mig[i] = migGPU | pl
		return f.frag(n, v.cpu, v.mem, v.after, v.mig), -1
	}
	best, bestStart := 0.0, -1
	for m := starts; m != 0; m &= m - 1 {
		s := bits.TrailingZeros8(m)
		pl, _ := n.MIGPlaceableAfter(i, k, s)
		v.mig[i] = migGPU | pl
		if fr := f.frag(n, v.cpu, v.mem, v.after, v.mig); bestStart < 0 || fr < best {
			best, bestStart = fr, s
		}
	}
	return best, bestStart
}

// dupGPU reports whether an earlier GPU of n than i gives p the same
// result: the same free share before and after (a after p on i) and, on
// a MIG-enabled GPU, the same instances.
func dupGPU(n *cluster.Node, p *cluster.Pod, i int, a int64, uniform bool) bool {
	for j := 0; j < i; j++ {
		if n.GPUFree[j] != n.GPUFree[i] {
			continue
		}
		if uniform {
			return true
		}
		if n.MIGGPUs.Has(i) != n.MIGGPUs.Has(j) || (n.MIGGPUs.Has(i) && n.MIG[i] != n.MIG[j]) {
			continue
		}
		if aj, ok := n.FreeAfter(p, j); ok && aj == a {
			return true
		}
	}
	return false
}

// frag is the fragmentation FGD chooses by of node n with cpu
// millicores, mem MiB and GPU shares gpus free: FragMIG (FragCMMIG for
// FGDCM) and the stranded capacity's Waste.
func (f FGD) frag(n *cluster.Node, cpu, mem int64, gpus []int64, mig []uint8) float64 {
	if n.PerDevice > 0 {
		return f.Target.PartitionFrag(n, cpu, mem, gpus, f.cm)
	}
	w := f.Target.Waste(gpus, mig)
	if f.cm {
		return f.Target.FragCMMIG(n.ModelID, cpu, mem, gpus, mig) + w
	}
	return f.Target.FragMIG(n.ModelID, cpu, gpus, mig) + w
}

func fgdScore(before, after float64) int64 {
	x := (before - after) / 1000
	return int64(1 / (1 + math.Exp(-x)) * MaxNodeScore)
}
