// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"sort"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TargetPod is one pod shape of a target workload with its frequency.
type TargetPod struct {
	CPUMilli int64
	NumGPU   int
	GPUMilli int64
	Models   cluster.ModelSet
	// Freq is the shape's share of the target workload, 0..1.
	Freq float64
	// Count is how many pods of the source workload have this shape.
	Count int
	// MemoryMiB is the mean memory request of the shape's pods in MiB,
	// rounded down. Memory is not part of a shape, as in the paper; only
	// FragCM reads it.
	MemoryMiB int64
}

// TargetWorkload is the set of pod shapes fragmentation is measured against
// (Weng et al., USENIX ATC 2023, §3): the most popular shapes that together
// make up a given share of the pods, with their frequencies renormalised to
// sum to 1. It is not changed after NewTargetWorkload, so any number of
// goroutines may call its methods at once.
type TargetWorkload struct {
	Pods []TargetPod
	// groups gathers the shapes by GPU request; within a group the CPU
	// requests are sorted with cumulative frequencies.
	groups []fragGroup
	// cpuPerGPU and memPerGPU are the millicores and MiB the shapes that
	// request GPUs ask for per milli-GPU, frequency-weighted (0 if none).
	cpuPerGPU, memPerGPU float64
}

type fragGroup struct {
	numGPU   int
	gpuMilli int64
	models   cluster.ModelSet
	cpu      []int64   // ascending
	cum      []float64 // cum[i] = Σ freq of cpu[0..i]
	total    float64
}

// NewTargetWorkload builds the target workload of pods: shapes (CPU, GPU
// count, GPU share, GPU models; memory is not part of a shape) sorted by
// descending count, taken one by one until they cover popularity (0..1, the
// paper uses 0.95) of all pods. Ties in count are ordered as the openb
// simulator orders them (larger CPU, share, count first), so the cut is the
// same.
func NewTargetWorkload(pods []cluster.Pod, popularity float64) *TargetWorkload {
	type key struct {
		cpu    int64
		milli  int64
		num    int
		models cluster.ModelSet
	}
	counts := map[key]int{}
	mem := map[key]int64{} // Σ MemoryMiB
	for i := range pods {
		p := &pods[i]
		k := key{p.CPUMilli, p.GPUMilli, p.NumGPU, p.Models}
		counts[k]++
		mem[k] += p.MemoryMiB
	}
	shapes := make([]TargetPod, 0, len(counts))
	for k, c := range counts {
		shapes = append(shapes, TargetPod{CPUMilli: k.cpu, GPUMilli: k.milli, NumGPU: k.num, Models: k.models, Count: c, MemoryMiB: mem[k] / int64(c)})
	}
	sort.Slice(shapes, func(i, j int) bool {
		a, b := shapes[i], shapes[j]
		switch {
		case a.Count != b.Count:
			return a.Count > b.Count
		case a.CPUMilli != b.CPUMilli:
			return a.CPUMilli > b.CPUMilli
		case a.GPUMilli != b.GPUMilli:
			return a.GPUMilli > b.GPUMilli
		case a.NumGPU != b.NumGPU:
			return a.NumGPU > b.NumGPU
		}
		return a.Models > b.Models
	})
	total := float64(len(pods))
	want := popularity * total
	cum := 0.0
	n := 0
	for n < len(shapes) && cum < want {
		cum += float64(shapes[n].Count)
		n++
	}
	tw := &TargetWorkload{Pods: shapes[:n]}
	for i := range tw.Pods {
		tw.Pods[i].Freq = float64(tw.Pods[i].Count) / cum
	}
	tw.index()
	return tw
}

func (tw *TargetWorkload) index() {
	tw.groups = tw.groups[:0]
	var cpu, mem, milli float64
	for _, p := range tw.Pods {
		if p.NumGPU > 0 {
			cpu += p.Freq * float64(p.CPUMilli)
			mem += p.Freq * float64(p.MemoryMiB)
			milli += p.Freq * float64(int64(p.NumGPU)*p.GPUMilli)
		}
	}
	if milli > 0 {
		tw.cpuPerGPU, tw.memPerGPU = cpu/milli, mem/milli
	}
	byGroup := map[[3]int64][]int{}
	var order [][3]int64
	for i, p := range tw.Pods {
		k := [3]int64{int64(p.NumGPU), p.GPUMilli, int64(p.Models)}
		if _, ok := byGroup[k]; !ok {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], i)
	}
	for _, k := range order {
		idx := byGroup[k]
		sort.Slice(idx, func(a, b int) bool { return tw.Pods[idx[a]].CPUMilli < tw.Pods[idx[b]].CPUMilli })
		g := fragGroup{numGPU: int(k[0]), gpuMilli: k[1], models: cluster.ModelSet(k[2])}
		for _, i := range idx {
			g.total += tw.Pods[i].Freq
			g.cpu = append(g.cpu, tw.Pods[i].CPUMilli)
			g.cum = append(g.cum, g.total)
		}
		tw.groups = append(tw.groups, g)
	}
}

// Frag returns the expected fragmented GPU capacity of a node, in
// milli-GPU, for a node of GPU model modelID (-1 for none) with cpuFree
// millicores and per-GPU free shares gpuFree. For each target shape m with
// frequency p_m, the node's idle GPU capacity counts as fragmented:
//   - all of it, when m cannot run on the node (too little CPU, a GPU model
//     m may not use, too few GPUs with m's share free) or m needs no GPU;
//   - otherwise only the GPUs whose free share is below m's share.
//
// Frag = Σ p_m · fragmented_m. Source: Weng et al., "Beware of
// Fragmentation", USENIX ATC 2023, §3.2, as implemented by
// NodeGpuShareFragAmount in github.com/hkust-adsl/kubernetes-scheduler-simulator.
func (tw *TargetWorkload) Frag(modelID int, cpuFree int64, gpuFree []int64) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	if idle == 0 {
		return 0
	}
	L := float64(idle)
	frag := 0.0
	for gi := range tw.groups {
		g := &tw.groups[gi]
		if g.gpuMilli == 0 || !modelOK(g.models, modelID) {
			frag += g.total * L
			continue
		}
		cnt := 0
		var below int64
		for _, f := range gpuFree {
			if f >= g.gpuMilli {
				cnt++
			} else {
				below += f
			}
		}
		if cnt < g.numGPU {
			frag += g.total * L
			continue
		}
		// Shapes whose CPU fits see only the GPUs below their share as
		// fragments; the others see all idle GPU capacity.
		k := sort.Search(len(g.cpu), func(i int) bool { return g.cpu[i] > cpuFree })
		fit := 0.0
		if k > 0 {
			fit = g.cum[k-1]
		}
		frag += fit*float64(below) + (g.total-fit)*L
	}
	return frag
}

// FragCM is Frag plus the idle GPU capacity that the node's free CPU and
// memory cannot serve, for FGDCM (this project's extension of Weng et al.,
// §3.2). With L the node's idle GPU capacity (milli-GPU) and the target
// workload's CPU and memory per milli-GPU (its GPU shapes' requests,
// frequency-weighted: millicores and MiB per milli-GPU), the capacity
// they can serve is
//
//	S = min(L, cpuFree / (CPU per milli-GPU), memFree / (memory per milli-GPU))
//
// and FragCM = Frag + (L − S), in milli-GPU. Frag counts a node's GPUs as
// usable by a shape as soon as its CPU fits one pod; FragCM also sees the
// GPUs that CPU or memory will strand before they are used (at the end of
// an FGD fill of the openb default trace, seed 42, 354 nodes hold idle
// GPUs with under 4 cores free).
func (tw *TargetWorkload) FragCM(modelID int, cpuFree, memFree int64, gpuFree []int64) float64 {
	f := tw.Frag(modelID, cpuFree, gpuFree)
	var idle int64
	for _, g := range gpuFree {
		idle += g
	}
	L := float64(idle)
	s := L
	if tw.cpuPerGPU > 0 {
		s = min(s, float64(max(cpuFree, 0))/tw.cpuPerGPU)
	}
	if tw.memPerGPU > 0 {
		s = min(s, float64(max(memFree, 0))/tw.memPerGPU)
	}
	return f + L - s
}

func modelOK(models cluster.ModelSet, modelID int) bool {
	if models == 0 {
		return true
	}
	return modelID >= 0 && models&(1<<uint(modelID)) != 0
}

// NodeFrag returns Frag for node n's current free resources, as fragView
// shows its GPUs.
func (tw *TargetWorkload) NodeFrag(n *cluster.Node) float64 {
	if n.MIGGPUs == 0 {
		return tw.Frag(n.ModelID, n.CPUFree, n.GPUFree)
	}
	var buf [cluster.MaxGPUsPerNode]int64
	return tw.Frag(n.ModelID, n.CPUFree, fragView(n, buf[:0]))
}

// fragView appends n's free share per GPU to buf as fragmentation sees it:
// a MIG-enabled GPU (of MIG on demand too) shows at most 999 milli-GPU
// free, since no pod of a whole GPU can use it; its free slices count as
// one free share.
func fragView(n *cluster.Node, buf []int64) []int64 {
	buf = append(buf, n.GPUFree...)
	for g := range buf {
		if n.MIGGPUs.Has(g) {
			buf[g] = min(buf[g], cluster.MilliGPU-1)
		}
	}
	return buf
}
