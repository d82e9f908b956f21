// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"sort"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TargetPod is one pod shape of a target workload with its frequency.
type TargetPod struct {
	CPUMilli int64
	NumGPU   int
	GPUMilli int64
	Models   cluster.ModelSet
	// MIGProfile is the MIG profile the shape asks for, as
	// cluster.Pod.MIGProfile (0: none; k+1: gpu.MIGProfiles' index k).
	MIGProfile int8
	// DeviceMilli is the share of one whole device the shape asked for
	// before a sharing mode changed GPUMilli (cluster.Pod.DeviceMilli; 0:
	// GPUMilli), by which a node of partitions serves it (PartitionFrag).
	DeviceMilli int64
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
	// migProfiles has bit k when a shape of one shared GPU is served by
	// MIG profile k (fragGroup.mig): what the workload asks of a
	// MIG-enabled GPU.
	migProfiles uint8
}

// WasteWeight is how many times capacity that no pod of the target
// workload can ever use counts in the fragmentation FGD and FGDCM choose
// by (Waste, FGD's padding term), on top of its fragment, which some
// shapes may still use: the idle slices of
// a MIG GPU where no profile the workload asks for is placeable
// (stranded: with 4g.40gb at slot 0 and 2g.20gb at 4 on an A100, slot 6
// takes only a 1g), and the rest of a whole GPU a MIG pod is padded to.
// 8 makes one stranded slice (⌊1000/7⌋ = 142 milli-GPU, × 8 = 1,136)
// outweigh any difference in fragment on one GPU (at most its 1,000
// milli-GPU), so FGD strands or pads only where every choice does.
// This project's rule (issue 37), not the paper's; figures in
// docs/simulate-validation.md, "DRA figures".
const WasteWeight = 8

type fragGroup struct {
	numGPU   int
	gpuMilli int64
	models   cluster.ModelSet
	// mig is the MIG profile (gpu.MIGProfiles' index) that serves the
	// shape on a MIG-enabled GPU: the smallest whose compute slices hold
	// its share (gpu.SmallestMIGProfile, as `--sharing mig` converts a
	// share); -1 for a shape of whole GPUs, which no MIG GPU serves.
	mig int
	// migPod: the shape asks for MIG profile mig; on a GPU without MIG
	// it takes the whole GPU (cluster.Node.FreeAfter).
	migPod bool
	// deviceMilli: TargetPod.DeviceMilli.
	deviceMilli int64
	cpu         []int64   // ascending
	cum         []float64 // cum[i] = Σ freq of cpu[0..i]
	total       float64
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
		mig    int8
		device int64
	}
	counts := map[key]int{}
	mem := map[key]int64{} // Σ MemoryMiB
	for i := range pods {
		p := &pods[i]
		k := key{p.CPUMilli, p.GPUMilli, p.NumGPU, p.Models, p.MIGProfile, p.DeviceMilli}
		counts[k]++
		mem[k] += p.MemoryMiB
	}
	shapes := make([]TargetPod, 0, len(counts))
	for k, c := range counts {
		shapes = append(shapes, TargetPod{CPUMilli: k.cpu, GPUMilli: k.milli, NumGPU: k.num, Models: k.models, MIGProfile: k.mig, DeviceMilli: k.device, Count: c, MemoryMiB: mem[k] / int64(c)})
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
		case a.Models != b.Models:
			return a.Models > b.Models
		case a.MIGProfile != b.MIGProfile:
			return a.MIGProfile > b.MIGProfile
		}
		return a.DeviceMilli > b.DeviceMilli
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
	tw.migProfiles = 0
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
	byGroup := map[[5]int64][]int{}
	var order [][5]int64
	for i, p := range tw.Pods {
		k := [5]int64{int64(p.NumGPU), p.GPUMilli, int64(p.Models), int64(p.MIGProfile), p.DeviceMilli}
		if _, ok := byGroup[k]; !ok {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], i)
	}
	for _, k := range order {
		idx := byGroup[k]
		sort.Slice(idx, func(a, b int) bool { return tw.Pods[idx[a]].CPUMilli < tw.Pods[idx[b]].CPUMilli })
		g := fragGroup{numGPU: int(k[0]), gpuMilli: k[1], models: cluster.ModelSet(k[2]), mig: -1, migPod: k[3] != 0, deviceMilli: k[4]}
		if g.migPod {
			g.mig = int(k[3]) - 1
		} else if g.numGPU == 1 && g.gpuMilli > 0 && g.gpuMilli < cluster.MilliGPU {
			// Every MIG model has A100's slice grid (internal/gpu).
			g.mig, _ = gpu.SmallestMIGProfile("A100-80GB", g.gpuMilli, 0)
		}
		for _, i := range idx {
			g.total += tw.Pods[i].Freq
			g.cpu = append(g.cpu, tw.Pods[i].CPUMilli)
			g.cum = append(g.cum, g.total)
		}
		if g.mig >= 0 && g.numGPU == 1 {
			tw.migProfiles |= 1 << uint(g.mig)
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
	return tw.FragMIG(modelID, cpuFree, gpuFree, nil)
}

// FragMIG is Frag on a node with MIG-enabled GPUs, measured in MIG
// profiles and slots rather than in free shares: mig[g] is 0 for a GPU
// without MIG, else MIGView's byte (bit 7 set, bit k when MIG profile k
// has a free instance or placement; cluster.Node.MIGPlaceable), and
// gpuFree[g] its free share below a whole GPU (fragView). For each shape:
//   - a MIG GPU serves a shape of one shared GPU when the shape's profile
//     (the one it asks for, TargetPod.MIGProfile, else the smallest whose
//     compute slices hold its share) is placeable there, whatever its
//     free share; otherwise its free share is the shape's fragment. So a
//     GPU of MIG on demand with a 3g.40gb at slot 0 (slots 0-3 held)
//     is a fragment for a 4g shape, whose only start is slot 0, and not
//     for a 3g one (start 4);
//   - a MIG GPU is outside the view of a shape of whole GPUs: it can
//     never serve one (MIG mode is the administrator's), so its free
//     share is neither usable nor a fragment for it (counted as a
//     fragment, FGD would gain by filling MIG GPUs with 7g instances that
//     a whole GPU serves as well, and MIG pods would then take whole GPUs
//     padded);
//   - a shape asking for a MIG profile fits a GPU without MIG only when
//     the GPU is wholly free (it takes it whole, cluster.Node.FreeAfter).
//
// nil mig is Frag. FGD and FGDCM choose by FragMIG + Waste.
func (tw *TargetWorkload) FragMIG(modelID int, cpuFree int64, gpuFree []int64, mig []uint8) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	if idle == 0 {
		return 0
	}
	frag := 0.0
	for gi := range tw.groups {
		frag += tw.groups[gi].frag(modelID, cpuFree, gpuFree, mig, float64(idle))
	}
	return frag
}

// Waste returns WasteWeight × the stranded capacity of a node whose GPUs
// FragMIG sees as gpuFree and mig: the idle milli-GPU of its MIG-enabled
// GPUs (mig[g] != 0) where no MIG profile the workload asks for is
// placeable (with a 4g.40gb and a 2g.20gb on an A100, slot 6 takes a 1g
// only). FGD and FGDCM add it to FragMIG when they choose; the
// fragmentation a run reports (NodeFrag) leaves it out.
func (tw *TargetWorkload) Waste(gpuFree []int64, mig []uint8) float64 {
	var s int64
	for g, m := range mig {
		if m != 0 && m&tw.migProfiles == 0 {
			s += gpuFree[g]
		}
	}
	return WasteWeight * float64(s)
}

// frag is FragMIG's term of shape group g on a node of idle GPU capacity
// L (Σ gpuFree).
func (g *fragGroup) frag(modelID int, cpuFree int64, gpuFree []int64, mig []uint8, L float64) float64 {
	if g.gpuMilli == 0 || !g.models.Allows(modelID) {
		return g.total * L
	}
	cnt := 0
	var below int64
	Lg := L
	for i, f := range gpuFree {
		fits := f >= g.gpuMilli
		switch {
		case g.mig < 0 && mig != nil && mig[i] != 0:
			Lg -= float64(f) // outside a shape of whole GPUs' view
			continue
		case mig != nil && mig[i] != 0:
			fits = g.mig >= 0 && mig[i]&(1<<uint(g.mig)) != 0
		case g.migPod:
			fits = f == cluster.MilliGPU
		}
		if fits {
			cnt++
		} else {
			below += f
		}
	}
	if cnt < g.numGPU {
		return g.total * Lg
	}
	// Shapes whose CPU fits see only the GPUs below their share as
	// fragments; the others see all idle GPU capacity.
	k := sort.Search(len(g.cpu), func(i int) bool { return g.cpu[i] > cpuFree })
	fit := 0.0
	if k > 0 {
		fit = g.cum[k-1]
	}
	return fit*float64(below) + (g.total-fit)*Lg
}

// PartitionFrag is FragMIG, or with cm FragCMMIG, of node n of
// partitions (cluster.Node.PerDevice, laid out by a sharing mode) with
// cpuFree millicores, memFree MiB and partitions gpuFree free: each shape
// as n serves it (cluster.Node.Served: a share of a device by the
// partition that holds it, k devices as k × PerDevice partitions); a
// shape n does not serve at all sees all idle capacity as its fragment.
// In milli-GPU of whole devices (cluster.Node.DeviceMilli), as a node of
// whole GPUs counts its own, so that FGD compares nodes of both.
func (tw *TargetWorkload) PartitionFrag(n *cluster.Node, cpuFree, memFree int64, gpuFree []int64, cm bool) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	per := float64(max(1, n.PerDevice))
	L := float64(idle)
	frag := 0.0
	for gi := range tw.groups {
		g, ok := servedGroup(n, &tw.groups[gi])
		if !ok {
			frag += g.total * L
			continue
		}
		frag += g.frag(n.ModelID, cpuFree, gpuFree, nil, L)
	}
	frag /= per
	if cm {
		L /= per
		frag += L - tw.servable(L, cpuFree, memFree)
	}
	return frag
}

// servedGroup returns shape group g as node n serves its pods
// (cluster.Node.Served), and false when n serves them not at all.
func servedGroup(n *cluster.Node, g *fragGroup) (fragGroup, bool) {
	v := *g
	if g.numGPU == 0 {
		return v, true
	}
	p := cluster.Pod{NumGPU: g.numGPU, GPUMilli: g.gpuMilli, DeviceMilli: g.deviceMilli}
	if g.migPod {
		p.MIGProfile = int8(g.mig + 1)
	}
	if !n.Serves(&p) {
		return v, false
	}
	var buf cluster.Pod
	s := n.Served(&p, &buf)
	v.numGPU, v.gpuMilli, v.mig, v.migPod = s.NumGPU, s.GPUMilli, -1, s.MIGProfile != 0
	return v, true
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
	return tw.FragCMMIG(modelID, cpuFree, memFree, gpuFree, nil)
}

// FragCMMIG is FragCM with FragMIG's view of MIG-enabled GPUs (mig).
func (tw *TargetWorkload) FragCMMIG(modelID int, cpuFree, memFree int64, gpuFree []int64, mig []uint8) float64 {
	f := tw.FragMIG(modelID, cpuFree, gpuFree, mig)
	var idle int64
	for _, g := range gpuFree {
		idle += g
	}
	L := float64(idle)
	return f + L - tw.servable(L, cpuFree, memFree)
}

// servable is the part of idle GPU capacity L (milli-GPU) that cpuFree
// millicores and memFree MiB can serve at the target workload's CPU and
// memory per milli-GPU (FragCM's S).
func (tw *TargetWorkload) servable(L float64, cpuFree, memFree int64) float64 {
	s := L
	if tw.cpuPerGPU > 0 {
		s = min(s, float64(max(cpuFree, 0))/tw.cpuPerGPU)
	}
	if tw.memPerGPU > 0 {
		s = min(s, float64(max(memFree, 0))/tw.memPerGPU)
	}
	return s
}

// NodeFrag returns Frag for node n's current free resources, as fragView
// and MIGView show its GPUs (FragMIG); on a node of partitions,
// PartitionFrag.
func (tw *TargetWorkload) NodeFrag(n *cluster.Node) float64 {
	if n.PerDevice > 0 {
		return tw.PartitionFrag(n, n.CPUFree, n.MemoryFree, n.GPUFree, false)
	}
	if n.MIGGPUs == 0 {
		return tw.Frag(n.ModelID, n.CPUFree, n.GPUFree)
	}
	var buf [cluster.MaxGPUsPerNode]int64
	var mbuf [cluster.MaxGPUsPerNode]uint8
	return tw.FragMIG(n.ModelID, n.CPUFree, fragView(n, buf[:0]), MIGView(n, mbuf[:0]))
}

// fragView appends n's free share per GPU to buf as fragmentation sees it:
// a MIG-enabled GPU (of MIG on demand too) shows at most 999 milli-GPU
// free, since no pod of a whole GPU can use it; which shapes it serves is
// MIGView's.
func fragView(n *cluster.Node, buf []int64) []int64 {
	buf = append(buf, n.GPUFree...)
	for g := range buf {
		if n.MIGGPUs.Has(g) {
			buf[g] = min(buf[g], cluster.MilliGPU-1)
		}
	}
	return buf
}

// MIGView appends, per GPU of n, what FragMIG reads of it to buf: 0 for a
// GPU without MIG, else 1<<7 | n.MIGPlaceable(g). It returns nil when n
// has no MIG-enabled GPU.
func MIGView(n *cluster.Node, buf []uint8) []uint8 {
	if n.MIGGPUs == 0 {
		return nil
	}
	for g := range n.GPUFree {
		var v uint8
		if n.MIGGPUs.Has(g) {
			v = migGPU | n.MIGPlaceable(g)
		}
		buf = append(buf, v)
	}
	return buf
}

// migGPU marks a MIG-enabled GPU in MIGView's bytes.
const migGPU = 1 << 7
