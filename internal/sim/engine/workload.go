// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/gpuplane/gpuplane/internal/cluster"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Workload is a prepared cluster template and pod list.
type Workload struct {
	podsFile  string
	gpuDemand int64 // Σ GPU requests of the trace's pods, milli-GPU
	template  *cluster.Cluster
	pods      []cluster.Pod
	specs     []trace.PodSpec
	target    *placement.TargetWorkload
	prices    []float64 // USD per GPU-hour by cluster model ID
	priceList *cost.Prices
	// partitions are the AMD nodes of a partition mode's run
	// (partitioned), by model.
	partitions []PartitionUse
	// unfit[i] is why pod i fits no node of the empty cluster
	// (ReasonTooLarge, ReasonNoModel, ReasonNoGPUNodes), "" if it fits one.
	unfit []string
	// unfitWhy[i] says why, in words, for the pods unfit names.
	unfitWhy map[int]string
	warnings []string
	// sharing is the mode of a workload made by WithSharing (zero
	// otherwise: no sharing metrics); training[i] says pod i asked for
	// whole GPUs.
	sharing  Sharing
	training []bool
	// asked are the pods as the trace asks for them, before WithSharing
	// (nil: pods): fill's arrived demand counts these, so that every mode
	// sees the same pods arrive.
	asked []cluster.Pod
	bound bool // Bind put pods on the template
	// noDynamicMIG[i] marks node i a DRA node whose GPUs publish no MIG
	// placements (trace.NodeSpec.NoDynamicMIG): MIG on demand leaves it
	// whole. nil: none.
	noDynamicMIG []bool
	// migMode[i] is node i's trace.NodeSpec.MIGModeGPUs (nil: none set).
	migMode []uint64
}

// askedPods returns the pods as the trace asks for them.
func (w *Workload) askedPods() []cluster.Pod {
	if w.asked != nil {
		return w.asked
	}
	return w.pods
}

// maxUnfitListed is how many pods that fit no node Warnings names one by
// one.
const maxUnfitListed = 5

// Prepare builds a workload from node and pod specs, its GPUs priced by
// prices (nil: cost.Default()). nodesFile and podsFile name the inputs in
// errors and warnings. A pod that fits no node of the empty cluster is no
// error: every run counts it as arrived demand and as a failed pod, with
// its reason, as the paper's simulator does (hkust-adsl/
// kubernetes-scheduler-simulator, pkg/simulator/simulator.go, SchedulePods:
// a pod adds to arrPodGpuMilli before it is created and, unscheduled, goes
// to the failed pods); Warnings lists the first few. GPU model names
// compare case-insensitively (gpu.ModelID); a node's model is shown as the
// node list first writes it.
func Prepare(nodesFile string, nodes []trace.NodeSpec, podsFile string, pods []trace.PodSpec, popularity float64, prices *cost.Prices) (*Workload, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no nodes", nodesFile)
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("%s: no pods", podsFile)
	}
	if prices == nil {
		prices = cost.Default()
	}
	c, err := templateCluster(nodesFile, nodes)
	if err != nil {
		return nil, err
	}
	w := &Workload{podsFile: podsFile, template: c, specs: pods, pods: make([]cluster.Pod, len(pods)), unfit: make([]string, len(pods)), unfitWhy: map[int]string{}}
	for i, n := range nodes {
		if n.MIGModeGPUs != 0 {
			if w.migMode == nil {
				w.migMode = make([]uint64, len(nodes))
			}
			w.migMode[i] = n.MIGModeGPUs
		}
		if n.NoDynamicMIG {
			if w.noDynamicMIG == nil {
				w.noDynamicMIG = make([]bool, len(nodes))
			}
			w.noDynamicMIG[i] = true
		}
	}
	if err := w.preparePods(nodesFile, podsFile); err != nil {
		return nil, err
	}
	w.target = placement.NewTargetWorkload(w.pods, popularity)
	w.prices, w.priceList = modelPrices(c, prices), prices
	return w, nil
}

// templateCluster builds the empty cluster of nodes; a node's model is
// shown as the node list first writes it.
func templateCluster(nodesFile string, nodes []trace.NodeSpec) (*cluster.Cluster, error) {
	c := cluster.New()
	spelling := map[int]string{}    // model ID -> the node list's first spelling
	mode := map[int]gpu.Partition{} // model ID -> its nodes' partition mode
	for _, n := range nodes {
		i, err := c.AddNode(n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", nodesFile, n.Line, err)
		}
		c.Nodes[i].Shared, c.Nodes[i].Serving, c.Nodes[i].MIGAsGPU, c.Nodes[i].ReplicaMilli = n.Shared, n.Serving, n.MIGAsGPU, n.ReplicaMilli
		if err := vendorNode(&c.Nodes[i], n, mode); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", nodesFile, n.Line, err)
		}
		c.Nodes[i].MIGServed = n.MIGServed
		c.Nodes[i].Labels, c.Nodes[i].Taints, c.Nodes[i].Unschedulable = n.Labels, n.Taints, n.Unschedulable
		if n.MIG != nil && n.GPUs > 0 {
			// The GPUs MIG-enabled in the cluster read (a snapshot's), or
			// given a layout (a cluster YAML's): the first ones until
			// Bind puts the running pods in place.
			k := n.GPUs
			if n.MIGGPUs > 0 {
				k = n.MIGGPUs
			}
			c.Nodes[i].MIGOnly = cluster.GPUSet(1<<uint(k) - 1)
			if k == 64 {
				c.Nodes[i].MIGOnly = ^cluster.GPUSet(0)
			}
		}
		if n.MIG == nil && n.MIGModeGPUs != 0 {
			// A DRA node's GPUs in MIG mode: they serve MIG claims only.
			c.Nodes[i].MIGOnly = cluster.GPUSet(n.MIGModeGPUs)
		}
		if id := c.Nodes[i].ModelID; id >= 0 {
			if _, ok := spelling[id]; !ok {
				spelling[id] = n.Model
			}
			c.Nodes[i].Model = spelling[id]
		}
	}
	return c, nil
}

// vendorNode gives node n of the template the vendor and partition mode
// its spec says (a vendor other than NVIDIA for a model the catalog
// lacks: NewNode took the catalog's). Every node of one model must be in
// one mode (mode, by model ID), as a model's GPUs have one price
// (modelPrices: a partition costs its share of the device).
func vendorNode(n *cluster.Node, s trace.NodeSpec, mode map[int]gpu.Partition) error {
	if s.Vendor != gpu.NVIDIA {
		n.Vendor = s.Vendor
	}
	n.Partition = s.Partition
	if n.ModelID < 0 {
		return nil
	}
	if m, seen := mode[n.ModelID]; seen && m != s.Partition {
		return fmt.Errorf("node %s: model %s in partition modes %s and %s: give the nodes of one model one mode", n.Name, n.Model, modeName(m), modeName(s.Partition))
	}
	mode[n.ModelID] = s.Partition
	return nil
}

// modeName is a partition mode in an error: "CPX/NPS1", or "none".
func modeName(p gpu.Partition) string {
	if p == (gpu.Partition{}) {
		return "none"
	}
	return p.String()
}

// preparePods turns w's pod specs into pods, finds those that fit no node
// of the empty cluster, and warns of them and of GPU models no node has.
func (w *Workload) preparePods(nodesFile, podsFile string) error {
	c := w.template
	var clusterModels cluster.ModelSet
	for i := range c.Nodes {
		if c.Nodes[i].ModelID >= 0 {
			clusterModels |= 1 << uint(c.Nodes[i].ModelID)
		}
	}
	absent := absentModels{byID: map[int]*absentModel{}}
	fitsSome := map[cluster.Pod]bool{}
	var unfit []string
	nUnfit := 0
	for i, s := range w.specs {
		p, err := podOf(podsFile, &s)
		if err != nil {
			return err
		}
		w.pods[i] = p
		w.gpuDemand += p.TotalGPUMilli()
		if p.Models&^clusterModels != 0 {
			absent.add(&s, clusterModels)
		}
		if fitsSomeNode(c, p, fitsSome) {
			continue
		}
		reason, why, ok := filterUnfit(c, &p)
		if !ok {
			reason, why = unfitReason(c, &p, &s, clusterModels, nodesFile)
		}
		w.unfit[i] = reason
		w.unfitWhy[i] = why
		nUnfit++
		if len(unfit) < maxUnfitListed {
			unfit = append(unfit, fmt.Sprintf("%s:%d: pod %s (cpu_milli %d, memory_mib %d, num_gpu %d, gpu_milli %d) %s: %s",
				podsFile, s.Line, trace.Quote(s.Name), s.CPUMilli, s.MemoryMiB, s.NumGPU, s.GPUMilli, why, w.unfit[i]))
		}
	}
	w.warnings = append(w.warnings, absent.warnings(nodesFile, podsFile)...)
	w.warnings = append(w.warnings, unfit...)
	if nUnfit > 0 {
		w.warnings = append(w.warnings, fmt.Sprintf("%d of %d pods of %s fit no node of %s even when it is empty (%d listed above): each run counts them as arrived demand and as failed pods",
			nUnfit, len(w.specs), podsFile, nodesFile, len(unfit)))
	}
	return nil
}

// podOf is the pod that spec s asks for.
func podOf(podsFile string, s *trace.PodSpec) (cluster.Pod, error) {
	p, err := s.Pod(podsFile)
	if err != nil {
		return cluster.Pod{}, err
	}
	if err := p.Validate(); err != nil {
		return cluster.Pod{}, fmt.Errorf("%s:%d: pod %s: %w", podsFile, s.Line, trace.Quote(s.Name), err)
	}
	return p, nil
}

// fitsSomeNode reports whether p fits some node of the empty cluster c,
// remembered in seen by the pod's shape.
func fitsSomeNode(c *cluster.Cluster, p cluster.Pod, seen map[cluster.Pod]bool) bool {
	key := p
	key.Name = ""
	ok, known := seen[key]
	if !known {
		for j := range c.Nodes {
			if cluster.Feasible(&c.Nodes[j], &p) {
				ok = true
				break
			}
		}
		seen[key] = ok
	}
	return ok
}

// unfitReason is why pod p of spec s fits no node of nodesFile (the empty
// cluster c): the reason and, for the warning, the words.
func unfitReason(c *cluster.Cluster, p *cluster.Pod, s *trace.PodSpec, clusterModels cluster.ModelSet, nodesFile string) (reason, why string) {
	switch {
	case p.NumGPU > 0 && clusterModels == 0:
		return ReasonNoGPUNodes, "requests GPUs and no node of " + nodesFile + " has any"
	case p.Models != 0 && p.Models&clusterModels == 0:
		return ReasonNoModel, fmt.Sprintf("allows GPU models %s, none of which %s has", trace.Quote(s.GPUSpec), nodesFile)
	case p.NumGPU > 0 && !servedKind(c, p):
		return ReasonNoResource, resourceWhy(p, nodesFile)
	}
	why = "is larger than every node of " + nodesFile
	if p.NumGPU > 0 && p.Models != 0 {
		why += " with a GPU model it allows (" + trace.Quote(s.GPUSpec) + ")"
	}
	return ReasonTooLarge, why
}

// servedKind reports whether some node of c with a GPU model p allows
// serves the resource kind p asks for (cluster.Node.ServesKind).
func servedKind(c *cluster.Cluster, p *cluster.Pod) bool {
	for j := range c.Nodes {
		if n := &c.Nodes[j]; cluster.ModelAllowed(n, p) && n.ServesKind(p) {
			return true
		}
	}
	return false
}

// resourceWhy says, for the warning of ReasonNoResource, what pod p asks
// for that no node of nodesFile serves.
func resourceWhy(p *cluster.Pod, nodesFile string) string {
	switch {
	case p.Claim && p.Resource == cluster.ResourceMIG:
		return "asks by ResourceClaim for a MIG device (class mig.nvidia.com) and no node of " + nodesFile + " with a GPU model it allows publishes one in its ResourceSlices (a GPU in MIG mode)"
	case p.Claim:
		return "asks for GPUs by ResourceClaim (class gpu.nvidia.com) and no node of " + nodesFile + " with a GPU model it allows publishes GPUs not in MIG mode in its ResourceSlices"
	case p.Resource == cluster.ResourceAny:
		return "accepts GPUs of " + p.AcceptedVendors().String() + " only (its vendors) and no node of " + nodesFile + " with a GPU model it allows is of them"
	case p.Resource == cluster.ResourceGPU:
		return "asks for nvidia.com/gpu and no node of " + nodesFile + " with a GPU model it allows serves it (a device plugin, or DRA through a DeviceClass's extendedResourceName)"
	case p.Resource == cluster.ResourceMIG:
		return "asks for a MIG device (nvidia.com/mig-<profile>) and no node of " + nodesFile + " with a GPU model it allows has a MIG-enabled GPU"
	case p.Resource == cluster.ResourceShared:
		return "asks for nvidia.com/gpu.shared and no node of " + nodesFile + " with a GPU model it allows serves time-sliced replicas"
	}
	return "asks for " + p.Resource.Name() + " and no node of " + nodesFile + " with a GPU model it allows serves it"
}

// absentModels are the models that gpu_spec names and no node has: pods,
// first line, spelling, in the order first named.
type absentModels struct {
	byID map[int]*absentModel
	ids  []int
}

type absentModel struct {
	pods, line int
	name       string
}

// add counts the models of s that the cluster lacks.
func (a *absentModels) add(s *trace.PodSpec, clusterModels cluster.ModelSet) {
	for _, m := range strings.Split(s.GPUSpec, "|") {
		m = strings.TrimSpace(m)
		id, err := gpu.ModelID(m)
		if m == "" || err != nil || clusterModels&(1<<uint(id)) != 0 {
			continue
		}
		if a.byID[id] == nil {
			a.byID[id] = &absentModel{line: int(s.Line), name: m}
			a.ids = append(a.ids, id)
		}
		a.byID[id].pods++
	}
}

// warnings names each absent model.
func (a *absentModels) warnings(nodesFile, podsFile string) []string {
	names := "gpu_spec names"
	if nodesFile == podsFile { // a Kubernetes snapshot gives both
		names = "the GPU model constraints (annotation, nodeSelector, node affinity) name"
	}
	var ws []string
	for _, id := range a.ids {
		m := a.byID[id]
		ws = append(ws, fmt.Sprintf("%s has no GPU model %s, which %s in %d pods (first %s:%d)",
			nodesFile, trace.Quote(m.name), names, m.pods, podsFile, m.line))
	}
	return ws
}

// modelPrices maps the model IDs of c to prices, looked up by the
// catalog's spelling; a model without a price costs 0.
func modelPrices(c *cluster.Cluster, prices *cost.Prices) []float64 {
	byID := make([]float64, 64)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.ModelID >= 0 {
			// A partition of an AMD GPU costs its share of the device
			// (an MI300X in CPX: 1/8); every node of a model is in one
			// mode (vendorNode).
			byID[n.ModelID] = prices.PartitionUSDPerHour(gpu.ModelName(n.ModelID), n.Partition)
		}
	}
	return byID
}

// Prices returns the price of each GPU model of the cluster in USD per
// GPU-hour, by the name the node list writes.
func (w *Workload) Prices() map[string]float64 {
	out := map[string]float64{}
	for i := range w.template.Nodes {
		if n := &w.template.Nodes[i]; n.ModelID >= 0 {
			out[n.Model] = w.prices[n.ModelID]
		}
	}
	return out
}

// Warnings returns what Prepare found questionable but not wrong: pods
// that fit no node (the first few, then a count), and GPU models that
// gpu_spec names and no node has.
func (w *Workload) Warnings() []string { return w.warnings }

// UnfitPods returns how many of the trace's pods fit no node even of the
// empty cluster (Warnings lists the first few).
func (w *Workload) UnfitPods() int {
	n := 0
	for _, u := range w.unfit {
		if u != "" {
			n++
		}
	}
	return n
}

// UnfitPod is a pod that fits no node of the empty cluster, and why.
type UnfitPod struct {
	// Pod is "file:line: pod name".
	Pod string `json:"pod"`
	// Reason is the failure reason runs give it (ReasonNoModel, ...);
	// Why says it in words ("allows GPU models "X", none of which ... has").
	Reason string `json:"reason"`
	Why    string `json:"why"`
}

// Unfit returns the first n of the pods that UnfitPods counts, and why.
func (w *Workload) Unfit(n int) []UnfitPod {
	var out []UnfitPod
	for i, u := range w.unfit {
		if u == "" {
			continue
		}
		if len(out) == n {
			break
		}
		out = append(out, UnfitPod{Pod: fmt.Sprintf("%s:%d: pod %s", w.podsFile, w.specs[i].Line, trace.Quote(w.specs[i].Name)), Reason: u, Why: w.unfitWhy[i]})
	}
	return out
}

// FitsNoNode returns how many of the workload's pods, as they are asked
// (after WithSharing: rounded up, or turned into a MIG profile), fit no
// node of its empty cluster as laid out (MIG-enabled GPUs serve only MIG
// pods). Unlike UnfitPods, which Prepare counts once, it counts anew.
// first names the first such pod as "file:line: pod name" ("" if none).
func (w *Workload) FitsNoNode() (n int, first string) {
	fits := map[cluster.Pod]bool{}
	for i := range w.pods {
		key := w.pods[i]
		key.Name = ""
		ok, seen := fits[key]
		if !seen {
			for j := range w.template.Nodes {
				if cluster.Feasible(&w.template.Nodes[j], &w.pods[i]) {
					ok = true
					break
				}
			}
			fits[key] = ok
		}
		if !ok {
			if n == 0 {
				first = fmt.Sprintf("%s:%d: pod %s", w.podsFile, w.specs[i].Line, trace.Quote(w.specs[i].Name))
			}
			n++
		}
	}
	return n, first
}

// price returns the price of one GPU of the cluster's model id (a node's
// ModelID; -1 for a node without GPUs), in USD per GPU-hour.
func (w *Workload) price(id int) float64 {
	if id < 0 {
		return 0
	}
	return w.prices[id]
}

// Target returns the workload's target workload (FGD's and the
// fragmentation metric's).
func (w *Workload) Target() *placement.TargetWorkload { return w.target }

// newCluster returns a fresh copy of the empty cluster with its nodes in
// a random order drawn from rng. Under placement.TieFirst the order decides
// ties, as the random node-name prefixes of the openb simulator do (it
// names node i "%04d-<name>" after a random permutation and its scheduler
// takes the lexicographically smallest of equally scored nodes).
func (w *Workload) newCluster(rng *rand.Rand) *cluster.Cluster {
	c := *w.template
	c.Nodes = make([]cluster.Node, len(w.template.Nodes))
	for i, j := range rng.Perm(len(c.Nodes)) {
		c.Nodes[i] = w.template.Nodes[j]
		c.Nodes[i].GPUFree = append([]int64(nil), w.template.Nodes[j].GPUFree...)
		if w.template.Nodes[j].MIG != nil {
			c.Nodes[i].MIG = append([]cluster.MIGGPU(nil), w.template.Nodes[j].MIG...)
		}
	}
	return &c
}

// check checks the workload as a whole for the experiment mode, before
// any policy runs; fill with once (Config.Once) needs no GPU demand.
func (w *Workload) check(mode string, once bool) error {
	if mode == "fill" {
		if w.template.TotalGPUMilli() == 0 {
			return errors.New("fill needs a cluster with GPUs: arrived demand is measured against GPU capacity")
		}
		if w.gpuDemand == 0 && !once {
			return errors.New("fill needs pods that request GPUs: the arrived GPU demand could never reach --inflate × capacity")
		}
		return nil
	}
	for _, s := range w.specs {
		if math.IsNaN(s.Creation) {
			return fmt.Errorf("%s:%d: column creation_time: pod %s has none, and replay needs it", w.podsFile, s.Line, trace.Quote(s.Name))
		}
	}
	return nil
}
