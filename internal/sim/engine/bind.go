// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Bound is a pod already running on a node, as a Kubernetes snapshot
// lists it: every run starts with it in place.
type Bound struct {
	Node string
	Pod  trace.PodSpec
	// GPUs are the GPU indices it holds (gpuplane-scheduler's
	// gpuplane.io/gpus annotation, or its DRA claims' allocation); nil:
	// chosen by Bind.
	GPUs []int
	// MIGProfile and MIGStart are the MIG placement a DRA claim allocated
	// it (snapshot.Pod): under mig, on a GPU of MIG on demand, it
	// holds that profile at that start (MIGStart -1: the first free one).
	// "": none.
	MIGProfile string
	MIGStart   int
}

// Bind puts bound pods on the workload's nodes before any run, so that
// every fill run starts from that state (Run refuses replay after Bind:
// its GPU-hour meters start from an empty cluster). On a workload of
// WithSharing, a pod asking for a share gets what the mode gives it (a
// whole GPU under exclusive, a replica, a MIG instance), and a GPU given
// a MIG layout takes only pods of its profiles. A pod of whole GPUs
// without GPUs given takes the first free GPUs; a GPU share the fitting
// GPU with the least free share (best fit), as the placement core does. A
// pod that does not fit its node (an over-committed snapshot: allocatable
// shrank under it) is left out with a warning; so are its GPUs when they
// are not free, and then Bind chooses. Its GPU model constraint is not
// checked: it runs there already. An unknown node is an error.
func (w *Workload) Bind(file string, bound []Bound) ([]string, error) {
	index := map[string]int{}
	for i := range w.template.Nodes {
		index[w.template.Nodes[i].Name] = i
	}
	var warnings []string
	lay := w.newMIGOnlyLayout()
	defer lay.after()
	for _, b := range bound {
		i, ok := index[b.Node]
		if !ok {
			return warnings, fmt.Errorf("%s: pod %s is bound to node %s, which the node list lacks", file, trace.Quote(b.Pod.Name), trace.Quote(b.Node))
		}
		n := &w.template.Nodes[i]
		kind, claim := b.Pod.Resource.SplitClaim()
		p := cluster.Pod{Name: b.Pod.Name, CPUMilli: b.Pod.CPUMilli, MemoryMiB: b.Pod.MemoryMiB, NumGPU: int(b.Pod.NumGPU), GPUMilli: int64(b.Pod.GPUMilli), Resource: kind, Claim: claim}
		if err := p.Validate(); err != nil {
			return warnings, fmt.Errorf("%s: pod %s: %w", file, trace.Quote(b.Pod.Name), err)
		}
		p.NoteMIGDevice()
		w.sharing.convert(&p)
		if done, msg := bindMIGAt(n, &p, b); done {
			w.bound = true
			continue
		} else if msg != "" {
			warnings = append(warnings, file+":"+msg)
		}
		lay.during(i, &p)
		gpus, msg := boundGPUs(file, n, &p, b)
		if msg != "" {
			warnings = append(warnings, msg)
		}
		if gpus.Count() != p.NumGPU || p.CPUMilli > n.CPUFree || p.MemoryMiB > n.MemoryFree {
			warnings = append(warnings, fmt.Sprintf("%s: pod %s does not fit what node %s has left (cpu %d of %d millicores, memory %d of %d MiB, %d GPUs of %d milli-GPU): left out",
				file, trace.Quote(p.Name), trace.Quote(n.Name), p.CPUMilli, n.CPUFree, p.MemoryMiB, n.MemoryFree, p.NumGPU, p.GPUMilli))
			continue
		}
		if err := n.Add(&p, gpus); err != nil { // p.Models is 0: it runs there already
			return warnings, fmt.Errorf("%s: %w", file, err)
		}
		lay.held(i, &p, gpus)
		w.bound = true
	}
	return warnings, nil
}

// boundGPUs returns the GPUs of node n the bound pod p (b) holds: those
// its annotation names, if they are p's count, on n and free for it; else
// chosen again (chooseGPUs), with a warning that says why.
func boundGPUs(file string, n *cluster.Node, p *cluster.Pod, b Bound) (gpus cluster.GPUSet, msg string) {
	given := len(b.GPUs) == p.NumGPU && p.NumGPU > 0
	outside := false
	for _, g := range b.GPUs {
		outside = outside || g >= n.GPUs()
		if outside {
			given = false
		} else if _, fits := n.FreeAfter(p, g); !fits {
			given = false
		}
		gpus |= 1 << uint(g)
	}
	if !given || gpus.Count() != p.NumGPU {
		switch {
		case len(b.GPUs) > 0 && (len(b.GPUs) != p.NumGPU || gpus.Count() != len(b.GPUs)):
			msg = fmt.Sprintf("%s:%d: pod %s: its GPU indices %v (annotation gpuplane.io/gpus) name %d distinct GPUs, and it asks for %d; chosen again", file, b.Pod.Line, trace.Quote(p.Name), b.GPUs, gpus.Count(), p.NumGPU)
		case outside:
			msg = fmt.Sprintf("%s:%d: pod %s: its GPU indices %v (annotation gpuplane.io/gpus) go past node %s's %d GPUs; chosen again", file, b.Pod.Line, trace.Quote(p.Name), b.GPUs, trace.Quote(n.Name), n.GPUs())
		case len(b.GPUs) > 0:
			msg = fmt.Sprintf("%s:%d: pod %s: GPUs %v of node %s are not free for it; chosen again", file, b.Pod.Line, trace.Quote(p.Name), b.GPUs, trace.Quote(n.Name))
		}
		gpus = chooseGPUs(n, p)
	}
	return gpus, msg
}

// bindMIGAt puts bound pod b (p as the mode gives it) on its own MIG
// placement when a DRA claim allocated it one and the mode is mig: p asks
// for b's profile (its model's index), and on a GPU of MIG on demand it
// takes b's start (cluster.Node.AddDynamicMIGAt). It reports whether p is
// in place; otherwise Bind places p as it places the others, and a
// warning (line: text) says why when b's placement was refused.
func bindMIGAt(n *cluster.Node, p *cluster.Pod, b Bound) (bool, string) {
	if b.MIGProfile == "" || p.MIGProfile == 0 || n.ModelID < 0 {
		return false, ""
	}
	k, ok := gpu.MIGProfileIndex(gpu.ModelName(n.ModelID), b.MIGProfile)
	if !ok {
		return false, fmt.Sprintf("%d: pod %s: MIG profile %s is not one of model %s's: simulated as the smallest profile that holds its share", b.Pod.Line, trace.Quote(p.Name), trace.Quote(b.MIGProfile), trace.Quote(n.Model))
	}
	p.MIGProfile, p.GPUMilli = int8(k+1), cluster.MIGMilli(k)
	if len(b.GPUs) != 1 || b.MIGStart < 0 || b.GPUs[0] >= n.GPUs() || !n.MIGGPUs.Has(b.GPUs[0]) || !n.MIG[b.GPUs[0]].Dynamic {
		return false, ""
	}
	if err := n.AddDynamicMIGAt(p, b.GPUs[0], b.MIGStart); err != nil {
		return false, fmt.Sprintf("%d: %v: its placement is chosen again", b.Pod.Line, err)
	}
	return true, ""
}

// chooseGPUs returns GPUs of n for p: the first ones it fits
// (cluster.Node.FreeAfter) for whole GPUs, the fitting GPU with the least
// left free after it for a share; 0 if none.
func chooseGPUs(n *cluster.Node, p *cluster.Pod) cluster.GPUSet {
	var s cluster.GPUSet
	if p.NumGPU == 0 {
		return 0
	}
	if p.IsGPUShare() {
		best, least := -1, int64(0)
		for g := range n.GPUFree {
			if free, ok := n.FreeAfter(p, g); ok && (best < 0 || free < least) {
				best, least = g, free
			}
		}
		if best < 0 {
			return 0
		}
		return 1 << uint(best)
	}
	for g := range n.GPUFree {
		if _, ok := n.FreeAfter(p, g); ok && s.Count() < p.NumGPU {
			s |= 1 << uint(g)
		}
	}
	if s.Count() < p.NumGPU {
		return 0
	}
	return s
}

// migOnlyLayout is where Bind keeps a workload's MIGOnly GPUs while it
// puts the running pods in place (nothing under mig: MIGGPUs rule there).
// A DRA node's GPUs in MIG mode (trace.NodeSpec.MIGModeGPUs) stay where
// they are (fixed); on any other node MIGOnly counts count[i] GPUs,
// cleared while the pods are put in place and then laid out again: those
// a running pod of a MIG device holds (migHeld), then the first that no
// running pod of whole GPUs holds (wholeHeld), as the simulator's CLI lays
// out a snapshot's MIG GPUs.
type migOnlyLayout struct {
	nodes                     []cluster.Node
	mig                       bool // sharing mode mig
	count                     []int
	fixed, wholeHeld, migHeld []cluster.GPUSet
}

// newMIGOnlyLayout takes w's template's MIGOnly GPUs into a layout.
func (w *Workload) newMIGOnlyLayout() *migOnlyLayout {
	nodes := w.template.Nodes
	l := &migOnlyLayout{nodes: nodes, mig: w.sharing.Mode == "mig", count: make([]int, len(nodes)),
		fixed: make([]cluster.GPUSet, len(nodes)), wholeHeld: make([]cluster.GPUSet, len(nodes)), migHeld: make([]cluster.GPUSet, len(nodes))}
	for i := range nodes {
		l.count[i] = nodes[i].MIGOnly.Count()
		if w.migMode != nil && nodes[i].MIG == nil && !l.mig {
			l.fixed[i] = cluster.GPUSet(w.migMode[i])
		}
		nodes[i].MIGOnly = l.fixed[i]
	}
	return l
}

// during sets node i's MIGOnly GPUs for running pod p: its fixed ones,
// or, for a pod of a MIG device by its share, any that no pod of whole
// GPUs holds (it runs on a MIG-enabled GPU), else none.
func (l *migOnlyLayout) during(i int, p *cluster.Pod) {
	n := &l.nodes[i]
	n.MIGOnly = l.fixed[i]
	if l.fixed[i] == 0 && p.Resource == cluster.ResourceMIG && p.MIGProfile == 0 {
		n.MIGOnly = ^l.wholeHeld[i]
	}
}

// held notes that running pod p holds gpus of node i.
func (l *migOnlyLayout) held(i int, p *cluster.Pod, gpus cluster.GPUSet) {
	if !p.IsGPUShare() {
		l.wholeHeld[i] |= gpus
	}
	if l.nodes[i].MIGOnly != 0 && l.fixed[i] == 0 {
		l.migHeld[i] |= gpus
	}
}

// after lays out every node's MIGOnly GPUs once the running pods are in
// place: the fixed ones, or those running MIG pods hold, then the first
// that no running pod of whole GPUs holds, count in all (or more where
// more hold MIG pods).
func (l *migOnlyLayout) after() {
	for i := range l.nodes {
		n := &l.nodes[i]
		n.MIGOnly = l.fixed[i]
		if l.mig || l.fixed[i] != 0 {
			continue
		}
		n.MIGOnly = l.migHeld[i]
		left := l.count[i] - l.migHeld[i].Count()
		for g := 0; g < n.GPUs() && left > 0; g++ {
			if !l.wholeHeld[i].Has(g) && !l.migHeld[i].Has(g) {
				n.MIGOnly |= 1 << uint(g)
				left--
			}
		}
	}
}
