// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// Sharing is how pods share GPUs in a run (gpuplane simulate --sharing).
// A pod of whole GPUs takes whole GPUs in every mode; the modes differ in
// what a pod asking for a share of one GPU gets:
//   - exclusive: a whole GPU (its share rounds up to 1000 milli-GPU);
//   - fractional: its milli-GPU share, packed with others on one GPU (the
//     openb simulator's Open-Gpu-Share, and the workload as given);
//   - mig: on a MIG-enabled GPU, one instance of the smallest MIG profile
//     that holds the share (gpu.SmallestMIGProfile, by compute slices: the
//     traces give no GPU memory per pod), else a whole GPU that is not
//     MIG-enabled (a model without MIG, or a GPU left whole);
//   - timeslice:N: N time-slicing replicas per GPU (the NVIDIA device
//     plugin's sharing.timeSlicing.replicas); a share of at most 1000/N
//     milli-GPU takes one replica, a larger one a whole GPU;
//   - partition:MODE (Partition; joined to one of the above by '+', else
//     with exclusive for the NVIDIA nodes): on the AMD nodes whose model
//     has the AMD partition mode MODE, one partition when it holds the
//     share of the whole device, else none (cluster.Node.Served), and a
//     pod of k whole devices k × the partitions of a device.
//
// Every mode sees the same pods arrive: fill's arrived demand counts the
// pods as the trace asks for them. The allocation ratio counts what each
// pod holds: a whole GPU 1000
// milli-GPU, a share its milli-GPU, a MIG instance its compute slices/7
// of its GPU (cluster.MIGMilli), a replica 1000/N.
type Sharing struct {
	// Mode is exclusive, fractional, mig or timeslice.
	Mode string
	// Replicas is timeslice's N, a divisor of 1000 from 2 (so a replica is
	// a whole number of milli-GPU and N replicas fill a GPU exactly).
	Replicas int
	// OnDemand, mig only, makes the GPUs that fixed layouts would take
	// (ChooseMIGLayouts' count) GPUs of MIG on demand
	// (cluster.Node.EnableDynamicMIG), as DRA's dynamic MIG serves them
	// (--gpu-api dra), instead of fixed layouts.
	OnDemand bool
	// Partition, when set, lays out every AMD node whose model has that
	// partition mode in it, and serves pods there as AMD's device plugin
	// serves partitions (partition:MODE; see Workload.partitioned); Mode
	// is then the NVIDIA nodes' mode, exclusive unless given
	// (mig+partition:MODE). Zero: AMD nodes as the node list gives them.
	Partition gpu.Partition
}

func (s Sharing) String() string {
	m := s.Mode
	if s.Mode == "timeslice" {
		m = "timeslice:" + strconv.Itoa(s.Replicas)
	}
	switch {
	case s.Partition == (gpu.Partition{}):
		return m
	case s.Mode == "exclusive":
		return "partition:" + s.Partition.String()
	}
	return m + "+partition:" + s.Partition.String()
}

// ParseSharing parses a comma-separated list of sharing modes: exclusive,
// fractional, mig, timeslice:N, partition:MODE (an AMD partition mode,
// gpu.ParsePartition: partition:CPX/NPS1), or an NVIDIA mode and a
// partition mode joined by '+' (fractional+partition:CPX/NPS1).
// Duplicates are dropped; the order is kept.
func ParseSharing(list string) ([]Sharing, error) {
	var out []Sharing
	seen := map[Sharing]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		s, err := parseSharing(f)
		if err != nil {
			return nil, err
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sharing mode given")
	}
	return out, nil
}

// parseSharing parses one entry of ParseSharing's list, lower case.
func parseSharing(f string) (Sharing, error) {
	var s Sharing
	for _, w := range strings.Split(f, "+") {
		switch {
		case strings.HasPrefix(w, "partition:") && s.Partition == (gpu.Partition{}):
			p, err := parsePartitionMode(strings.TrimPrefix(w, "partition:"))
			if err != nil {
				return s, fmt.Errorf("sharing %q: %w", f, err)
			}
			s.Partition = p
		case s.Mode != "":
			return s, fmt.Errorf("sharing %q: one NVIDIA mode and one partition mode at most (mig+partition:CPX/NPS1)", f)
		case w == "exclusive" || w == "fractional" || w == "mig":
			s.Mode = w
		case strings.HasPrefix(w, "timeslice:"):
			n, err := strconv.Atoi(strings.TrimPrefix(w, "timeslice:"))
			if err != nil || n < 2 || n > cluster.MilliGPU || cluster.MilliGPU%n != 0 {
				return s, fmt.Errorf("sharing %q: N must be a divisor of 1000 from 2 (2, 4, 5, 8, 10, 20, ...), so that N replicas of 1000/N milli-GPU fill a GPU", f)
			}
			s.Mode, s.Replicas = "timeslice", n
		default:
			return s, fmt.Errorf("unknown sharing mode %q (exclusive, fractional, mig, timeslice:N, partition:MODE such as partition:CPX/NPS1)", f)
		}
	}
	if s.Mode == "" {
		s.Mode = "exclusive" // partition:MODE alone
	}
	return s, nil
}

// parsePartitionMode reads the MODE of partition:MODE, in the canonical
// form (both halves: CPX is CPX/NPS1); a mode that no AMD model has is an
// error.
func parsePartitionMode(m string) (gpu.Partition, error) {
	p, err := gpu.ParsePartition(m)
	if err == nil {
		p, err = gpu.ParsePartition(p.String())
	}
	switch {
	case err != nil:
		return gpu.Partition{}, fmt.Errorf("partition:%s: want COMPUTE/MEMORY, e.g. partition:CPX/NPS1 (%v)", m, err)
	case p == (gpu.Partition{}):
		return gpu.Partition{}, fmt.Errorf("partition:%s: want COMPUTE/MEMORY, e.g. partition:CPX/NPS1", m)
	}
	_, e1 := gpu.Partitions("MI300X", p)
	if _, e2 := gpu.Partitions("MI355X", p); e1 != nil && e2 != nil {
		return gpu.Partition{}, fmt.Errorf("partition:%s: no AMD model has this mode (MI300X, MI325X: SPX, DPX, QPX, CPX with NPS1, QPX or CPX with NPS4; MI355X: NPS1, or NPS2 from DPX)", m)
	}
	return p, nil
}

// MIGLayoutUse is the MIG layout of the nodes of one GPU model in a mig
// run.
type MIGLayoutUse struct {
	Model string `json:"model"`
	Nodes int    `json:"nodes"`
	// NodeNames are the nodes, in the node list's order.
	NodeNames []string `json:"node_names"`
	// MIGGPUsPerNode of each node's GPUs are MIG-enabled, each with
	// Layout when they are the first ones and have one layout; the others
	// are left whole.
	MIGGPUsPerNode int      `json:"mig_gpus_per_node"`
	GPUsPerNode    int      `json:"gpus_per_node"`
	Layout         []string `json:"layout"`
	// GPULayouts, when the MIG GPUs are not the first MIGGPUsPerNode or
	// have different layouts (given ones, --mig-config), is each GPU's
	// layout by index, nil for a whole GPU; Layout is then nil.
	GPULayouts [][]string `json:"gpu_layouts,omitempty"`
	// Source is "given" (cluster YAML mig field or --mig-config),
	// "chosen" (ChooseMIGLayouts) or OnDemandSource.
	Source string `json:"source"`
}

// OnDemandSource is the Source of the MIG GPUs of MIG on demand (--gpu-api
// dra): in MIG mode, with no layout (Layout ["MIG on demand"]).
const OnDemandSource = "on demand"

// GPUGroup is GPUs of a node with one MIG layout (nil: whole GPUs).
type GPUGroup struct {
	GPUs   []int
	Layout []string
}

// Groups returns u's GPUs grouped by layout (whole GPUs one group, Layout
// nil), in order of each group's first GPU.
func (u MIGLayoutUse) Groups() []GPUGroup {
	per := u.GPULayouts
	if per == nil {
		per = make([][]string, u.GPUsPerNode)
		for g := range u.MIGGPUsPerNode {
			per[g] = u.Layout
		}
	}
	var out []GPUGroup
	at := map[string]int{}
	for g, l := range per {
		k := strings.Join(l, "+")
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, GPUGroup{Layout: l})
		}
		out[j].GPUs = append(out[j].GPUs, g)
	}
	return out
}

// GPUList writes GPU indices in runs: 0, 1, 2 and 4 as "GPUs 0-2, 4",
// 3 as "GPU 3".
func GPUList(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	if len(xs) == 1 {
		return "GPU " + parts[0]
	}
	return "GPUs " + strings.Join(parts, ", ")
}

// LayoutText writes a MIG layout with its profiles counted, in order of
// first use: [3g.40gb 2g.20gb 1g.10gb 1g.10gb] as
// "3g.40gb + 2g.20gb + 2 × 1g.10gb".
func LayoutText(l []string) string {
	var order []string
	n := map[string]int{}
	for _, p := range l {
		if n[p]++; n[p] == 1 {
			order = append(order, p)
		}
	}
	for i, p := range order {
		if n[p] > 1 {
			order[i] = strconv.Itoa(n[p]) + " × " + p
		}
	}
	return strings.Join(order, " + ")
}

// GivenMIG gives the MIG layout of GPU g of node i of the node list (in
// Prepare's order): the profile names, or nil to leave the GPU whole.
type GivenMIG func(node, g int) []string

// WithSharing returns the workload under sharing mode s. For mig, given
// (nil: choose) says each GPU's layout; the layouts used are returned.
// Fractional returns a copy of w as it is, with the sharing metrics on.
func (w *Workload) WithSharing(s Sharing, given GivenMIG, popularity float64) (*Workload, []MIGLayoutUse, error) {
	v := *w
	v.sharing = s
	v.asked = w.pods
	v.training = make([]bool, len(w.pods))
	v.pods = append([]cluster.Pod(nil), w.pods...)
	for i := range v.pods {
		p := &v.pods[i]
		v.training[i] = p.NumGPU > 0 && !p.IsGPUShare()
		if s.Partition != (gpu.Partition{}) {
			p.DeviceMilli = p.GPUMilli // what a node of partitions serves
		}
		s.convert(p)
	}
	var layouts []MIGLayoutUse
	if s.Mode != "mig" {
		// Bind puts pods on the template: each mode gets its own.
		v.template = cloneCluster(w.template)
	} else {
		var err error
		if s.OnDemand {
			v.template, layouts, err = v.onDemandCluster()
		} else {
			v.template, layouts, err = v.migCluster(given)
		}
		if err != nil {
			return nil, nil, err
		}
		if len(layouts) == 0 {
			// No MIG GPU: a MIG pod takes a whole GPU anywhere, so it is
			// scored as one too, exactly as in exclusive.
			for i := range v.pods {
				if p := &v.pods[i]; p.MIGProfile != 0 {
					p.MIGProfile, p.GPUMilli = 0, cluster.MilliGPU
				}
			}
		}
	}
	if s.Partition != (gpu.Partition{}) {
		if err := v.partitioned(s.Partition); err != nil {
			return nil, nil, err
		}
	}
	if s.Mode != "fractional" {
		v.target = placement.NewTargetWorkload(v.pods, popularity)
	}
	return &v, layouts, nil
}

// cloneCluster returns a copy of t that shares no GPU state with it.
func cloneCluster(t *cluster.Cluster) *cluster.Cluster {
	c := &cluster.Cluster{Nodes: make([]cluster.Node, len(t.Nodes))}
	for i := range c.Nodes {
		c.Nodes[i] = t.Nodes[i]
		c.Nodes[i].GPUFree = append([]int64(nil), t.Nodes[i].GPUFree...)
		if t.Nodes[i].MIG != nil {
			c.Nodes[i].MIG = append([]cluster.MIGGPU(nil), t.Nodes[i].MIG...)
		}
	}
	return c
}

// convert makes what a pod asking for a share of one GPU gets under s
// (see Sharing); a pod of whole GPUs, and every pod under fractional or
// no mode, is left as it is.
func (s Sharing) convert(p *cluster.Pod) {
	if !p.IsGPUShare() || p.Resource == cluster.ResourceShared {
		// A replica of a time-sliced GPU (nvidia.com/gpu.shared) is one in
		// every mode: only the nodes that serve it take it.
		return
	}
	switch s.Mode {
	case "exclusive":
		p.GPUMilli = cluster.MilliGPU
	case "timeslice":
		if r := int64(cluster.MilliGPU / s.Replicas); p.GPUMilli <= r {
			p.GPUMilli = r
		} else {
			p.GPUMilli = cluster.MilliGPU
		}
	case "mig":
		// Compute slices only: every MIG model has the same slice
		// grid, so the profile index is the same on all of them.
		k, _ := gpu.SmallestMIGProfile("A100-80GB", p.GPUMilli, 0)
		p.MIGProfile, p.GPUMilli = int8(k+1), cluster.MIGMilli(k)
	}
}

// migCluster returns a copy of the template cluster with MIG enabled by
// given, or, when given is nil, by ChooseMIGLayouts.
func (w *Workload) migCluster(given GivenMIG) (*cluster.Cluster, []MIGLayoutUse, error) {
	c := cloneCluster(w.template)
	for i := range c.Nodes {
		c.Nodes[i].MIGOnly = 0 // the layouts given or chosen here rule
	}
	var choose map[int]*chosenMIG
	var per []int // MIG GPUs of each node, when chosen
	if given == nil {
		choose = w.ChooseMIGLayouts()
		left := map[int]int{}
		for id, ch := range choose {
			left[id] = ch.left
		}
		per = migPerNode(c, left, w.spreadMIG, func(int) bool { return true })
	}
	src := "chosen"
	if given != nil {
		src = "given"
	}
	var uses layoutUses
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.ModelID < 0 || (given == nil && len(gpu.MIGProfiles(gpu.ModelName(n.ModelID))) == 0) {
			continue
		}
		model := gpu.ModelName(n.ModelID)
		perGPU := make([][]string, n.GPUs())
		for g := range perGPU {
			if given != nil {
				perGPU[g] = given(i, g)
			} else if ch := choose[n.ModelID]; ch != nil && g < per[i] {
				perGPU[g] = ch.layout.Names(model)
			}
			if perGPU[g] == nil {
				continue
			}
			if err := n.EnableMIG(g, perGPU[g]); err != nil {
				return nil, nil, err
			}
		}
		uses.add(n, perGPU, src)
	}
	return c, uses.list, nil
}

// layoutUses gathers the nodes of the same model, GPUs and per-GPU
// layouts into one MIGLayoutUse each.
type layoutUses struct {
	list []MIGLayoutUse
	at   map[string]int
}

// add counts node n, whose GPU g has layout perGPU[g] (nil: whole), under
// source; a node without a MIG GPU is not counted.
func (u *layoutUses) add(n *cluster.Node, perGPU [][]string, source string) {
	enabled, first, regular := 0, []string(nil), true
	key := []string{n.Model, source}
	for g, l := range perGPU {
		key = append(key, strings.Join(l, "+"))
		if l == nil {
			continue
		}
		if enabled == 0 {
			first = l
		}
		regular = regular && enabled == g && slices.Equal(l, first)
		enabled++
	}
	if enabled == 0 {
		return
	}
	k := strings.Join(key, "|")
	j, ok := u.at[k]
	if !ok {
		if u.at == nil {
			u.at = map[string]int{}
		}
		j = len(u.list)
		u.at[k] = j
		use := MIGLayoutUse{Model: n.Model, GPUsPerNode: n.GPUs(), MIGGPUsPerNode: enabled, Layout: first, Source: source}
		if !regular {
			use.Layout, use.GPULayouts = nil, perGPU
		}
		u.list = append(u.list, use)
	}
	u.list[j].Nodes++
	u.list[j].NodeNames = append(u.list[j].NodeNames, n.Name)
}

// onDemandCluster returns a copy of the template cluster with as many
// GPUs of each MIG-capable model made GPUs of MIG on demand as
// ChooseMIGLayouts would MIG-enable, packed on the fewest nodes in the
// same way; the others are left whole. MIG mode is the administrator's
// per-GPU choice that DRA does not change, and a GPU in MIG mode serves
// no pod of whole GPUs (cluster.Node.EnableDynamicMIG). Its layouts say
// so per model, node size and MIG GPUs (Source "on demand", Layout
// ["MIG on demand"]).
func (w *Workload) onDemandCluster() (*cluster.Cluster, []MIGLayoutUse, error) {
	c := cloneCluster(w.template)
	left := map[int]int{}
	for id, d := range w.migDemand() {
		left[id] = d.gpus
	}
	// A DRA node without MIG placements stays whole; a node its snapshot
	// shows in MIG mode keeps its own (enableMIG).
	dynamic := func(i int) bool {
		return len(gpu.MIGProfiles(c.Nodes[i].Model)) > 0 && (w.noDynamicMIG == nil || !w.noDynamicMIG[i])
	}
	per := migPerNode(c, left, w.spreadMIG, func(i int) bool {
		return dynamic(i) && (w.migMode == nil || w.migMode[i] == 0)
	})
	var uses layoutUses
	for i := range c.Nodes {
		n := &c.Nodes[i]
		n.MIGOnly = 0
		if n.ModelID < 0 || !dynamic(i) {
			continue
		}
		if err := w.enableMIG(n, i, per[i]); err != nil {
			return nil, nil, err
		}
		perGPU := make([][]string, n.GPUs())
		for g := range perGPU {
			if n.MIGGPUs.Has(g) {
				perGPU[g] = []string{"MIG on demand"}
			}
		}
		uses.add(n, perGPU, OnDemandSource)
	}
	return c, uses.list, nil
}

// enableMIG makes GPUs of node n (the i-th) GPUs of MIG on demand: those
// its snapshot's slices show in MIG mode (Workload.migMode), else its
// first count (migPerNode).
func (w *Workload) enableMIG(n *cluster.Node, i, count int) error {
	for g := range n.GPUFree {
		if w.migMode != nil && w.migMode[i] != 0 {
			if w.migMode[i]&(1<<g) == 0 {
				continue
			}
		} else if g >= count {
			break
		}
		if err := n.EnableDynamicMIG(g); err != nil {
			return err
		}
	}
	return nil
}

type chosenMIG struct {
	left   int // MIG GPUs still to enable
	layout gpu.MIGLayout
}

// ChooseMIGLayouts chooses, for each MIG-capable model of the cluster, how
// many GPUs of each node to MIG-enable and one layout for them, from the
// workload's mix (the pods after WithSharing's mig conversion), each
// model's from the pods that may run on it (their GPU models, gpu_spec):
//   - a pod whose profile is 7g (a share above 4/7) is served as well by
//     a whole GPU, and counts as one;
//   - the MIG share f of the GPU demand is Σ over the other MIG pods of
//     their instance's memory slots/8 (gpu.MIGMemorySlots: the placement
//     grid, on which a 3g.40gb takes half a GPU, as a 4g.40gb does, and
//     two 3g.40gb fill one), over that plus the GPUs of the pods of
//     whole GPUs; round(f × the model's GPUs) GPUs are MIG-enabled, packed
//     on the fewest nodes (the model's first nodes in the node list, all
//     their GPUs), so that the other nodes keep every GPU whole for pods
//     of several GPUs, or, when no pod that may run on it asks for
//     several, spread over the model's nodes, one a node in turn
//     (migPerNode);
//   - the layout is gpu.ChooseMIGLayout of the demand per profile: the
//     valid, maximal A100-grid layout whose compute slices are split among
//     the profiles most like the pods' are.
//
// Keyed by model ID; a model whose nodes get no MIG GPU is absent.
func (w *Workload) ChooseMIGLayouts() map[int]*chosenMIG {
	out := map[int]*chosenMIG{}
	for id, d := range w.migDemand() {
		if l, ok := gpu.ChooseMIGLayout(gpu.ModelName(id), d.profiles); ok {
			out[id] = &chosenMIG{left: d.gpus, layout: l}
		}
	}
	return out
}

// spreadMIG reports whether no pod that may run on model id (its GPU
// models, gpu_spec) asks for more than one GPU: then the model's MIG GPUs
// are spread (migPerNode).
func (w *Workload) spreadMIG(id int) bool {
	for i := range w.pods {
		p := &w.pods[i]
		if p.NumGPU > 1 && p.Models.Allows(id) {
			return false
		}
	}
	return true
}

// migPerNode returns how many GPUs of each node of c (by index; the first
// ones) to MIG-enable so that each model gets left[model ID] in all, or
// all of its GPUs on the nodes ok accepts when fewer. Packed (all of a
// node's GPUs, on the fewest nodes, in node order), so that the other
// nodes keep every GPU whole for pods of several GPUs; or, where
// spread(model ID), one GPU a node in turn, in node order, until none is
// left (a node of fewer GPUs stops when full and the others take its
// share), for a model no such pod may use: a MIG GPU holds several pods, each with its
// CPU and memory, and packed eight to a node their CPU ran out before the
// GPUs' slices (docs/simulate-validation.md, "Where the MIG GPUs go").
func migPerNode(c *cluster.Cluster, left map[int]int, spread func(id int) bool, ok func(i int) bool) []int {
	out := make([]int, len(c.Nodes))
	byModel := map[int][]int{}
	for i := range c.Nodes {
		if id := c.Nodes[i].ModelID; id >= 0 && left[id] > 0 && ok(i) {
			byModel[id] = append(byModel[id], i)
		}
	}
	for id, nodes := range byModel {
		m, one := left[id], spread(id)
		for more := true; m > 0 && more; {
			more = false
			for _, i := range nodes {
				q := min(c.Nodes[i].GPUs()-out[i], m)
				if one {
					q = min(q, 1)
				}
				out[i] += q
				m -= q
				more = more || q > 0
			}
		}
	}
	return out
}

// modelMIG is one model's MIG demand (migDemand).
type modelMIG struct {
	// profiles counts the MIG pods (but 7g) that may run on the model,
	// per profile.
	profiles [gpu.NumMIGProfiles]float64
	// gpus is how many of its GPUs to MIG-enable.
	gpus int
}

// migDemand returns, by MIG-capable model ID, the MIG demand of the pods
// that may run on the model (a pod's GPU models, gpu_spec, allow it):
// their MIG pods per profile and round(f × the model's GPUs) GPUs to
// MIG-enable, f the MIG share of their GPU demand (ChooseMIGLayouts); a
// model of none is absent.
func (w *Workload) migDemand() map[int]*modelMIG {
	gpus := map[int]int{} // GPUs per MIG-capable model ID
	for i := range w.template.Nodes {
		if n := &w.template.Nodes[i]; n.ModelID >= 0 && len(gpu.MIGProfiles(gpu.ModelName(n.ModelID))) > 0 {
			gpus[n.ModelID] += n.GPUs()
		}
	}
	out := map[int]*modelMIG{}
	for id, g := range gpus {
		var d modelMIG
		var migGPUs, wholeGPUs float64
		for i := range w.pods {
			p := &w.pods[i]
			if !p.Models.Allows(id) {
				continue
			}
			if k := int(p.MIGProfile) - 1; k >= 0 && gpu.MIGSlices(k) < apidra.MIGComputeSlices {
				d.profiles[k]++
				migGPUs += float64(gpu.MIGMemorySlots(k)) / gpu.MIGGridSlots
			} else {
				wholeGPUs += float64(p.NumGPU)
			}
		}
		if migGPUs == 0 {
			continue
		}
		if d.gpus = int(migGPUs/(migGPUs+wholeGPUs)*float64(g) + 0.5); d.gpus > 0 {
			out[id] = &d
		}
	}
	return out
}

// useTracker follows which pods hold each GPU during a run, for the
// sharing metrics: GPUs holding a pod (now and at the peak, with their
// price) and the pods that shared a GPU with another pod.
type useTracker struct {
	w      *Workload
	offset []int // first slot of each node (by the run's node order)
	on     [][]podRef
	shared []bool // by run id
	placed int
	used   int64   // milli of whole devices of the used GPUs (DeviceMilli)
	usd    float64 // USD per hour of the used GPUs
	peak   int64
	peakUS float64
	// Pods of whole GPUs: placed, and on a GPU shared with another pod.
	training, trainingShared int
}

type podRef struct{ id, pod int32 }

func newUseTracker(w *Workload, c *cluster.Cluster) *useTracker {
	u := &useTracker{w: w, offset: make([]int, len(c.Nodes)+1)}
	for i := range c.Nodes {
		u.offset[i+1] = u.offset[i] + c.Nodes[i].GPUs()
	}
	u.on = make([][]podRef, u.offset[len(c.Nodes)])
	// A GPU with less than all of it free holds pods that Bind put there
	// before the run (a snapshot's running pods): it is needed, and a pod
	// placed on it shares it. They are no pods of the run (boundRef).
	for i := range c.Nodes {
		for g, f := range c.Nodes[i].GPUFree {
			if f < cluster.MilliGPU {
				u.on[u.offset[i]+g] = []podRef{boundRef}
				u.used += c.Nodes[i].DeviceMilli(cluster.MilliGPU)
				u.usd += w.price(c.Nodes[i].ModelID)
			}
		}
	}
	u.peak, u.peakUS = u.used, u.usd
	return u
}

// boundRef stands for the pods Bind put on a GPU.
var boundRef = podRef{-1, -1}

// add notes that run id (pod index pod of the workload) was placed on
// gpus of node.
func (u *useTracker) add(c *cluster.Cluster, node int, gpus cluster.GPUSet, id, pod int) {
	for len(u.shared) <= id {
		u.shared = append(u.shared, false)
	}
	u.placed++
	if u.w.training[pod] {
		u.training++
	}
	for _, g := range gpus.Indices() {
		s := &u.on[u.offset[node]+g]
		if len(*s) == 0 {
			u.used += c.Nodes[node].DeviceMilli(cluster.MilliGPU)
			u.usd += u.w.price(c.Nodes[node].ModelID)
		} else {
			u.mark(id, pod)
			for _, r := range *s {
				u.mark(int(r.id), int(r.pod))
			}
		}
		*s = append(*s, podRef{int32(id), int32(pod)})
	}
	if u.used > u.peak {
		u.peak, u.peakUS = u.used, u.usd
	}
}

func (u *useTracker) mark(id, pod int) {
	if id >= 0 && !u.shared[id] {
		u.shared[id] = true
		if u.w.training[pod] {
			u.trainingShared++
		}
	}
}

// remove notes that run id left gpus of node.
func (u *useTracker) remove(c *cluster.Cluster, node int, gpus cluster.GPUSet, id int) {
	for _, g := range gpus.Indices() {
		s := &u.on[u.offset[node]+g]
		for k, r := range *s {
			if int(r.id) == id {
				(*s)[k] = (*s)[len(*s)-1]
				*s = (*s)[:len(*s)-1]
				break
			}
		}
		if len(*s) == 0 {
			u.used -= c.Nodes[node].DeviceMilli(cluster.MilliGPU)
			u.usd -= u.w.price(c.Nodes[node].ModelID)
		}
	}
}

// result writes the sharing metrics into r: fill reports the GPUs used at
// the end, replay the peak.
func (u *useTracker) result(r *Result, replay bool) {
	s := &SharingStats{Sharing: u.w.sharing.String(), PlacedPods: u.placed, TrainingPods: u.training, TrainingOnSharedGPU: u.trainingShared}
	s.GPUsNeeded, s.GPUsNeededUSDPerHour = float64(u.used)/cluster.MilliGPU, u.usd
	if replay {
		s.GPUsNeeded, s.GPUsNeededUSDPerHour = float64(u.peak)/cluster.MilliGPU, u.peakUS
		if r.Replay != nil {
			s.PlacedPods = r.Replay.Started // a preempted pod starts again
		}
	}
	for _, sh := range u.shared {
		if sh {
			s.SharedPods++
		}
	}
	r.Sharing = s
}

// SharingStats are a run's sharing metrics (gpuplane simulate --sharing).
type SharingStats struct {
	// Sharing is the mode (Sharing.String).
	Sharing string `json:"sharing"`
	// PlacedPods got GPUs or a node (fill: placements, replay: starts).
	PlacedPods int `json:"placed_pods"`
	// GPUsNeeded is the number of GPUs holding at least one pod (a
	// partition of a device laid out by a partition mode 1/its partitions
	// per device: cluster.Node.DeviceMilli): at the end of fill, at the
	// peak of replay; GPUsNeededUSDPerHour their price
	// in USD per hour (internal/cost/prices prices).
	GPUsNeeded           float64 `json:"gpus_needed"`
	GPUsNeededUSDPerHour float64 `json:"gpus_needed_usd_per_hour" round:"cent"`
	// SharedPods ran on a GPU together with another pod at some time: a
	// share, a MIG instance (isolated from the GPU's other instances) or a
	// time-slicing replica (isolating neither memory nor faults).
	SharedPods int `json:"shared_pods"`
	// TrainingPods are the placed pods of whole GPUs (the traces have no
	// job-type column); TrainingOnSharedGPU those of them on a GPU with
	// another pod.
	TrainingPods        int `json:"training_pods"`
	TrainingOnSharedGPU int `json:"training_on_shared_gpu"`
}

// Isolation says what sharing mode mode (Sharing.String) isolates between
// the pods that share one GPU: exclusive and MIG, in hardware; time-slicing
// nothing; fractional (milli-GPU packed on one GPU) nothing on the GPU
// but the scheduler's accounting, unless DRA serves the shares under an
// MPS configuration (compute and memory limits, enforced: docs/dra.md);
// MPS is no mode of the simulator of its own.
//
// A partition mode (partition:MODE) isolates in hardware on AMD's nodes
// (each partition its own compute dies and share of memory) and is
// exclusive on NVIDIA's, or the mode it is joined to (mig+partition:...).
func Isolation(mode string) string {
	if nv, amd, ok := strings.Cut(mode, "+"); ok && strings.HasPrefix(amd, "partition:") {
		return Isolation(nv) + "; AMD: hardware partitions (compute dies, memory)"
	}
	if strings.HasPrefix(mode, "partition:") {
		return Isolation("exclusive") + "; AMD: hardware partitions (compute dies, memory)"
	}
	switch {
	case mode == "exclusive":
		return "hardware: a whole GPU per pod"
	case mode == "mig":
		return "hardware: MIG instances (memory, cache, compute, faults)"
	case strings.HasPrefix(mode, "timeslice"):
		return "nothing: time-slicing shares memory and faults"
	case mode == "fractional":
		return "nothing on the GPU: the scheduler's milli-GPU accounting only (DRA with an MPS configuration enforces compute and memory limits)"
	}
	return ""
}

// SharingReport compares sharing modes (gpuplane simulate --sharing): one
// row per mode and policy, the MIG layouts of the mig mode, and every
// mode's runs.
type SharingReport struct {
	Rows       []SharingRow   `json:"rows"`
	MIGLayouts []MIGLayoutUse `json:"mig_layouts,omitempty"`
	// Partitions are the AMD nodes of each partition mode's run, by
	// model (Workload.Partitions).
	Partitions []PartitionUse `json:"partitions,omitempty"`
	// Modes holds each mode's runs and summary, in the order of the
	// --sharing list; the first is also the report's Results and Summary.
	// The HTML report draws every mode's sections from them. Not in the
	// JSON, which would hold every mode's curves (1.5 MB for 4 modes of
	// the built-in scenario): Rows has each mode and policy's means.
	Modes []ModeRuns `json:"-"`
}

// ModeRuns are the runs of one sharing mode and their summary per policy.
type ModeRuns struct {
	Sharing string    `json:"sharing"`
	Summary []Summary `json:"summary"`
	Results []Result  `json:"results"`
}

// SharingRow is one sharing mode and policy: means over the seeds.
type SharingRow struct {
	Sharing string `json:"sharing"`
	Policy  string `json:"policy"`
	Runs    int    `json:"runs"`
	// GPUAllocationRatio: fill, at the end; replay, time-weighted (0..1).
	// A MIG instance counts its compute slices/7, a replica 1/N.
	GPUAllocationRatio float64 `json:"gpu_allocation_ratio"`
	// GPUAllocationRatioStd and QueueDelayP95StdSeconds are the population
	// standard deviations over the seeds (the spread a recommendation
	// compares its margin with).
	GPUAllocationRatioStd   float64 `json:"gpu_allocation_ratio_std"`
	QueueDelayP95StdSeconds float64 `json:"queue_delay_p95_std_seconds,omitempty" round:"ms"`
	PlacedPods              float64 `json:"placed_pods"`
	FailedPods              float64 `json:"failed_pods"`
	// ArrivedPods arrived (the same in every mode); ServedRatio and its
	// Std are the GPU demand served over the arrived demand (0..1,
	// Result.ServedGPUMilli), ServedGPUs the demand served in GPUs and
	// PaddingGPUs what the placed pods held beyond their demand, in GPUs
	// (waste: Result.PaddingGPUMilli).
	ArrivedPods    float64 `json:"arrived_pods"`
	ServedRatio    float64 `json:"served_ratio"`
	ServedRatioStd float64 `json:"served_ratio_std"`
	ServedGPUs     float64 `json:"served_gpus"`
	PaddingGPUs    float64 `json:"padding_gpus"`
	// USDPerServedGPUHour is USDPerHour (the GPUs holding a pod) per GPU
	// of demand served; 0 when none is served, and in replay (whose served
	// demand sums the starts, not GPU-hours).
	USDPerServedGPUHour float64 `json:"usd_per_served_gpu_hour" round:"cent"`
	// Isolation is what the mode isolates between the pods of one GPU
	// (Isolation).
	Isolation string `json:"isolation"`
	// GPUsNeeded and USDPerHour: SharingStats.GPUsNeeded and its price.
	GPUsNeeded float64 `json:"gpus_needed"`
	USDPerHour float64 `json:"usd_per_hour" round:"cent"`
	// Replay only: queueing delay of started pods, seconds.
	QueueDelayMeanSeconds float64 `json:"queue_delay_mean_seconds,omitempty" round:"ms"`
	QueueDelayP95Seconds  float64 `json:"queue_delay_p95_seconds,omitempty" round:"ms"`
	SharedPods            float64 `json:"shared_pods"`
	// TrainingPods and TrainingOnSharedGPU: SharingStats'.
	TrainingPods        float64 `json:"training_pods"`
	TrainingOnSharedGPU float64 `json:"training_on_shared_gpu"`
}

// SharingRows summarises a report of a workload made by WithSharing: one
// row per policy.
func SharingRows(rep *Report) []SharingRow {
	var out []SharingRow
	for _, s := range rep.Summary {
		row := SharingRow{Policy: s.Policy, GPUAllocationRatio: s.GPUAllocationRatioMean,
			FailedPods: s.FailedPodsMean, ArrivedPods: s.ArrivedPodsMean, ServedRatio: s.ServedRatioMean,
			ServedRatioStd: s.ServedRatioStd, ServedGPUs: s.ServedGPUsMean, PaddingGPUs: s.PaddingGPUsMean, QueueDelayMeanSeconds: s.QueueDelayMeanSeconds, QueueDelayP95Seconds: s.QueueDelayP95Seconds}
		if rep.Mode == "replay" {
			row.GPUAllocationRatio = s.TimeWeightedAllocMean
		}
		var allocs, p95s []float64
		for _, r := range rep.Results {
			if r.Policy != s.Policy || r.Sharing == nil {
				continue
			}
			if r.Replay != nil {
				allocs = append(allocs, r.Replay.TimeWeightedAllocationRatio)
				p95s = append(p95s, r.Replay.QueueDelayP95Seconds)
			} else {
				allocs = append(allocs, r.GPUAllocationRatio)
			}
			row.Sharing = r.Sharing.Sharing
			row.Runs++
			row.PlacedPods += float64(r.Sharing.PlacedPods)
			row.GPUsNeeded += float64(r.Sharing.GPUsNeeded)
			row.USDPerHour += r.Sharing.GPUsNeededUSDPerHour
			row.SharedPods += float64(r.Sharing.SharedPods)
			row.TrainingPods += float64(r.Sharing.TrainingPods)
			row.TrainingOnSharedGPU += float64(r.Sharing.TrainingOnSharedGPU)
		}
		if row.Runs == 0 {
			continue
		}
		_, row.GPUAllocationRatioStd = meanStd(allocs)
		if _, sd := meanStd(p95s); !math.IsNaN(sd) {
			row.QueueDelayP95StdSeconds = sd // NaN when a seed's p95 is unbounded
		}
		n := float64(row.Runs)
		row.PlacedPods /= n
		row.GPUsNeeded /= n
		row.USDPerHour /= n
		row.SharedPods /= n
		row.TrainingPods /= n
		row.TrainingOnSharedGPU /= n
		if row.ServedGPUs > 0 && rep.Mode != "replay" { // replay's served demand sums starts
			row.USDPerServedGPUHour = row.USDPerHour / row.ServedGPUs
		}
		row.Isolation = Isolation(row.Sharing)
		out = append(out, row)
	}
	return out
}
