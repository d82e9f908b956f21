// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// nodeState is the placement core's view of one node, built from a
// scheduler snapshot's NodeInfo: capacity from the Node's allocatable and
// labels, then every pod on it added with the GPUs it holds.
type nodeState struct {
	node cluster.Node
	// reason is why the node cannot take GPU pods ("" when it can, or when
	// it has no GPUs at all).
	reason string
	// uuids are the node's GPU UUIDs in index order, when it publishes them.
	uuids []string
	// unhealthy are the GPUs the node agent reports unhealthy
	// (gpuresource.AnnotationNodeUnhealthyGPUs), or on a DRA node the
	// GPUs with a device taint; they are held, so never chosen.
	unhealthy cluster.GPUSet
	// dra is set for a node whose GPUs DRA serves (dra_node.go): their
	// use comes from allocated claims, and DynamicResources allocates
	// them, not this plugin. devices are their device names by GPU
	// index; shares reports GPUs published shared (milliGPU).
	dra     bool
	devices []string
	shares  bool
	// plain is the milli-GPU a claim asking no capacity holds of the
	// node's shared GPUs (the largest of draGPU.plain); 0 when none is
	// shared.
	plain int64
}

// catalog is the built-in GPU catalog; read only.
var catalog = gpu.Default()

// nodeModel returns the catalog model of a node's gpu-feature-discovery
// product label: a catalog name ("V100M16", as the openb node lists and
// gpuplane's kwok nodes write it) or an NVML product name
// ("NVIDIA-A100-SXM4-80GB", matched with '-' read as ' ' too). A product
// the catalog lacks is its own model, usable by pods without a model
// constraint.
func nodeModel(product string) string { return gpu.ModelOfProduct(product) }

// buildNode makes a nodeState from a NodeInfo. held returns the scheduler's
// record of the GPUs a pod holds (what it reserved and bound, or the
// annotation it first saw), which wins over the pod's annotation; a pod
// whose annotation claims other GPUs holds those too.
func buildNode(ni fwk.NodeInfo, skip types.UID, held func(types.UID) (cluster.GPUSet, bool)) (*nodeState, error) {
	return buildNodeWith(ni, skip, held, nil)
}

// buildNodeWith is buildNode with the node's DRA state dn (nil: none): a
// node with a pool of gpu.nvidia.com and no nvidia.com/gpu allocatable is
// a DRA node (buildDRANode).
func buildNodeWith(ni fwk.NodeInfo, skip types.UID, held func(types.UID) (cluster.GPUSet, bool), dn *draNode) (*nodeState, error) {
	n := ni.Node()
	if n == nil {
		return nil, fmt.Errorf("node not found")
	}
	if _, dp := n.Status.Allocatable[gpuresource.GPU]; dn != nil && !dp {
		return buildDRANode(ni, dn)
	}
	st, node, err := devicePluginNode(ni, n)
	if err != nil {
		return nil, err
	}
	b := nodeBuild{node: &node, held: held}
	b.report, b.reporting = unplacedPods(n)
	for _, pi := range ni.GetPods() {
		if p := pi.GetPod(); p.UID != skip {
			if err := b.addPod(p); err != nil {
				return nil, err
			}
		}
	}
	b.finish(st.unhealthy)
	st.node = node
	return st, nil
}

// nodeBuild counts a device-plugin node's pods on its GPUs (buildNodeWith).
// The node agent's report of the pods the scheduler did not place
// (gpuresource.AnnotationNodeUnplacedPods) is the node's truth: those
// pods are counted on the GPUs the kubelet gave them. While the node
// carries the report, a GPU pod bound to it that is neither placed by
// the scheduler nor reported yet makes every GPU no pod is known to
// hold held (unattributed): it may run on any. Without the report,
// pods whose GPUs are unknown (bound by another scheduler, or reserved
// in a gang cycle before Reserve) are added after the known ones, on
// the first GPUs that hold them: the node is never over-committed.
type nodeBuild struct {
	node         *cluster.Node
	held         func(types.UID) (cluster.GPUSet, bool)
	report       unplacedReport
	reporting    bool
	unattributed bool
	unknown      []*cluster.Pod
	claims       []claim
}

// addPod counts pod p: on the GPUs the scheduler's record, its annotation
// or the report give it, else later (unknown, unattributed).
func (b *nodeBuild) addPod(p *v1.Pod) error {
	req, err := podRequest(p)
	_, reported := b.report[p.Namespace+"/"+p.Name]
	if err != nil {
		// A pod already on the node with a request we would refuse
		// (bound by another scheduler): count CPU and memory only,
		// and its GPUs from the report, if any.
		req.NumGPU, req.GPUMilli, req.Models = 0, 0, 0
		if b.reporting && !reported && isGPUPod(p) && !terminal(p) {
			b.unattributed = true
		}
	}
	if req.NumGPU == 0 {
		return b.node.Add(&req, 0)
	}
	set, ok, err := parseAssignment(p)
	if err != nil {
		// A hand-edited annotation must not stop scheduling on the
		// node: count the pod on the first GPUs that hold it.
		klog.ErrorS(err, "Ignoring the GPU choice of a pod")
		ok = false
	}
	// The scheduler's own record (what it bound, or the annotation it
	// first saw) wins over the annotation; when they disagree, the GPUs
	// the annotation claims are held too (conflict.go).
	if rec, recorded := b.held(p.UID); recorded {
		if ok && set != rec {
			b.claims = append(b.claims, claim{pod: req, gpus: set &^ rec})
		}
		set, ok = rec, true
	}
	switch {
	case reported:
		// Its GPUs are held from the report (finish); what its record or
		// annotation names besides is held too (either may be stale).
		if ok {
			b.claims = append(b.claims, claim{pod: req, gpus: set &^ b.report[p.Namespace+"/"+p.Name].gpus()})
		}
	case !ok && b.reporting:
		b.unattributed = b.unattributed || !terminal(p)
	case !ok || b.node.Add(&req, set) != nil:
		b.unknown = append(b.unknown, &req)
		return nil
	default:
		return nil
	}
	req.NumGPU, req.GPUMilli, req.Models = 0, 0, 0
	return b.node.Add(&req, 0)
}

// finish holds, after every pod is counted, the reported pods' GPUs, the
// unknown pods' first-fit GPUs, the GPUs annotations claim against the
// record, the unhealthy GPUs and, while a GPU pod is unattributed, every
// GPU.
func (b *nodeBuild) finish(unhealthy cluster.GPUSet) {
	node := b.node
	for _, r := range b.report.sorted() {
		for _, g := range r.held {
			holdMilli(node, r.pod+" (reported by the node agent)", g.gpu, g.milli)
		}
	}
	for _, p := range b.unknown {
		p.Models = 0
		if err := node.Add(p, firstFit(node, p)); err != nil {
			// The node is over-committed already (a pod we did not place):
			// account its CPU and memory, and leave its GPUs.
			p.NumGPU, p.GPUMilli = 0, 0
			_ = node.Add(p, 0)
		}
	}
	// Last, the GPUs that annotations claim against the record: held on
	// whatever share of them is still free, so that neither the recorded nor
	// the claimed GPUs are handed out again.
	for _, c := range b.claims {
		holdClaim(node, &c)
	}
	if unhealthy != 0 {
		holdClaim(node, &claim{pod: cluster.Pod{Name: "unhealthy GPUs", GPUMilli: cluster.MilliGPU}, gpus: unhealthy})
	}
	if b.unattributed {
		holdClaim(node, &claim{pod: cluster.Pod{Name: "GPUs of pods the node agent has not reported yet", GPUMilli: 1000}, gpus: cluster.GPUSet(1)<<uint(len(node.GPUFree)) - 1})
	}
}

// devicePluginNode makes the empty state of device-plugin node n (of
// ni): its GPUs from allocatable nvidia.com/gpu read as NVIDIA's device
// plugin serves them (pluginDevices: replicas, single-strategy MIG
// instances), with the unhealthy ones its agent names, their model from
// the product label, their UUIDs from the agent's annotation; st.reason
// says why a node with GPUs offers none.
func devicePluginNode(ni fwk.NodeInfo, n *v1.Node) (*nodeState, cluster.Node, error) {
	alloc := ni.GetAllocatable()
	if st, node, ok, err := vendorPluginNode(alloc, n); ok {
		return st, node, err
	}
	st := &nodeState{}
	setup, d, reason := pluginDevices(n)
	gpus := int(d.GPUs)
	if bad, total, ok := unhealthyGPUs(n); ok {
		// The kubelet's allocatable leaves the unhealthy GPUs out, so its
		// count would renumber the GPUs: count them all and hold those.
		st.unhealthy, gpus = bad, total
	}
	model := ""
	switch {
	case reason != "":
		st.reason, gpus = reason, 0
	case gpus > cluster.MaxGPUsPerNode:
		st.reason = fmt.Sprintf("node has %d GPUs, more than %d", gpus, cluster.MaxGPUsPerNode)
		gpus = 0
	case gpus > 0 && setup.Product == "":
		st.reason = fmt.Sprintf("node has no GPU labels (%s)", gpuresource.LabelGPUProduct)
		gpus = 0
	case gpus > 0:
		model = nodeModel(setup.Product)
	}
	node, err := cluster.NewNode(n.Name, model, alloc.GetMilliCPU(), alloc.GetMemory()>>20, gpus)
	if err != nil {
		return nil, node, err
	}
	if gpus > 0 {
		// A pod of nvidia.com/gpu: k holds k replicas or k instances'
		// share of one GPU here, as the kubelet gives it (cluster.Node.Served).
		node.ReplicaMilli = d.ReplicaMilli
		node.Shared = d.Replicas
		if d.MIGProfile != "" {
			// Every GPU serves only its instances, as nvidia.com/gpu.
			node.MIGAsGPU, node.MIGOnly = true, cluster.GPUSet(1)<<uint(gpus)-1
		}
	}
	if s := n.Annotations[gpuresource.AnnotationNodeGPUUUIDs]; s != "" {
		if u := strings.Split(s, ","); len(u) == gpus {
			st.uuids = u
		}
	}
	return st, node, nil
}

// vendorPluginNode makes the empty state of node n (allocatable alloc)
// when AMD's or Intel's device plugin serves its accelerators
// (allocatable amd.com/gpu or habana.ai/gaudi): one GPU per device the
// plugin advertises (a partition of a partitioned AMD GPU being one), of
// the vendor, model and partition mode its labels give as the snapshot
// reader reads them (gpu.ReadVendorDevices); st.reason says why such a
// node offers none (two vendors' resources, a label refused, more than
// cluster.MaxGPUsPerNode). ok is false for a node of neither resource.
func vendorPluginNode(alloc fwk.Resource, n *v1.Node) (st *nodeState, node cluster.Node, ok bool, err error) {
	count := func(name v1.ResourceName) int64 {
		q := n.Status.Allocatable[name]
		return q.Value()
	}
	amd, gaudi, nvidia := count(gpuresource.AMDGPU), count(gpuresource.Gaudi), count(gpuresource.GPU)
	st = &nodeState{}
	v, devices := gpu.AMD, amd
	switch {
	case amd <= 0 && gaudi <= 0:
		return nil, node, false, nil
	case amd > 0 && gaudi > 0 || nvidia > 0:
		st.reason, devices = "node serves accelerators of two vendors", 0
	case gaudi > 0:
		v, devices = gpu.Intel, gaudi
	}
	if devices > cluster.MaxGPUsPerNode {
		st.reason, devices = fmt.Sprintf("node has %d accelerators, more than %d", devices, cluster.MaxGPUsPerNode), 0
	}
	d, lerr := gpu.ReadVendorDevices(v, n.Labels)
	if lerr != nil && devices > 0 {
		st.reason, devices = lerr.Error(), 0
	}
	node, err = cluster.NewNode(n.Name, d.Model, alloc.GetMilliCPU(), alloc.GetMemory()>>20, int(devices))
	if err != nil && devices > 0 {
		// A model the process cannot take (more than gpu.MaxModels
		// names): the node offers none, and says why.
		st.reason = err.Error()
		node, err = cluster.NewNode(n.Name, "", alloc.GetMilliCPU(), alloc.GetMemory()>>20, 0)
	}
	if err == nil && st.reason == "" {
		node.Vendor, node.Partition = d.Vendor, d.Partition
	}
	return st, node, true, err
}

// pluginDevices reads node n's allocatable nvidia.com/gpu as NVIDIA's
// device plugin serves it, by its gpu-feature-discovery labels
// (gpu.DevicePluginSetup.Devices, the rule the snapshot reader applies):
// time-slicing or MPS replicas under the default naming, 1/replicas of a
// GPU each; single-strategy MIG instances of the product's profile; else
// one device per GPU. reason is why a node with devices offers none: a
// count of replicas that does not divide them, or single-strategy MIG
// devices the catalog cannot lay out on the model ("-MIG-INVALID", an
// unknown profile).
func pluginDevices(n *v1.Node) (setup gpu.DevicePluginSetup, d gpu.PluginDevices, reason string) {
	setup = gpu.ReadDevicePluginSetup(n.Labels)
	q, ok := n.Status.Allocatable[gpuresource.GPU]
	if !ok || q.Value() <= 0 {
		return setup, d, ""
	}
	devices := q.Value()
	if setup.Replicas > 1 && devices%int64(setup.Replicas) != 0 {
		return setup, d, fmt.Sprintf("node has %d %s devices, not a multiple of its %s %d", devices, gpuresource.GPU, gpuresource.LabelGPUReplicas, setup.Replicas)
	}
	d, ok = setup.Devices(nodeModel(setup.Product), devices)
	if !ok {
		return setup, d, fmt.Sprintf("node's %s devices are MIG instances (%s=%s) the scheduler cannot lay out", gpuresource.GPU, gpuresource.LabelGPUProduct, n.Labels[gpuresource.LabelGPUProduct])
	}
	return setup, d, ""
}

// unplacedReport is a node's gpuresource.AnnotationNodeUnplacedPods: the
// GPUs each reported pod ("namespace/name") holds.
type unplacedReport map[string]unplacedPod

// unplacedPod is one reported pod's GPUs, by index, with the milli-GPU it
// holds on each (1..1000).
type unplacedPod struct {
	pod  string
	held []heldGPU
}

type heldGPU struct {
	gpu   int
	milli int64
}

// gpus returns the set of the pod's GPUs.
func (u unplacedPod) gpus() cluster.GPUSet {
	var s cluster.GPUSet
	for _, g := range u.held {
		s |= 1 << uint(g.gpu)
	}
	return s
}

// sorted returns the reported pods by name.
func (r unplacedReport) sorted() []unplacedPod {
	out := make([]unplacedPod, 0, len(r))
	for _, u := range r {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod < out[j].pod })
	return out
}

// unplacedPods reads the node agent's report of n; reporting is whether n
// carries one that parses. A GPU index out of 0..cluster.MaxGPUsPerNode-1
// or a milli-GPU out of 1..1000 is left out (logged); a malformed value is
// no report.
func unplacedPods(n *v1.Node) (r unplacedReport, reporting bool) {
	s, ok := n.Annotations[gpuresource.AnnotationNodeUnplacedPods]
	if !ok {
		return nil, false
	}
	var v gpuresource.UnplacedPods
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		klog.ErrorS(err, "Ignoring a malformed report of the pods the scheduler did not place", "node", n.Name, "annotation", gpuresource.AnnotationNodeUnplacedPods)
		return nil, false
	}
	r = make(unplacedReport, len(v))
	for pod, gpus := range v {
		u := unplacedPod{pod: pod}
		for k, milli := range gpus {
			g, err := strconv.Atoi(k)
			if err != nil || g < 0 || g >= cluster.MaxGPUsPerNode || milli < 1 || milli > 1000 {
				klog.InfoS("Ignoring a GPU of a reported pod", "node", n.Name, "pod", pod, "gpu", k, "milli", milli)
				continue
			}
			u.held = append(u.held, heldGPU{gpu: g, milli: milli})
		}
		sort.Slice(u.held, func(i, j int) bool { return u.held[i].gpu < u.held[j].gpu })
		r[pod] = u
	}
	return r, true
}

// holdMilli holds milli-GPU of GPU g of n for the named pod, or what is
// left of it; a GPU the node lacks, or a full one, is skipped.
func holdMilli(n *cluster.Node, name string, g int, milli int64) {
	if g >= len(n.GPUFree) || n.GPUFree[g] <= 0 {
		return
	}
	p := cluster.Pod{Name: name, NumGPU: 1, GPUMilli: min(milli, n.GPUFree[g])}
	if err := n.Add(&p, 1<<uint(g)); err != nil {
		klog.ErrorS(err, "Holding a GPU of a reported pod", "pod", name, "gpu", g)
	}
}

// firstFit returns the first GPUs of n with p's share free.
func firstFit(n *cluster.Node, p *cluster.Pod) cluster.GPUSet {
	var s cluster.GPUSet
	k := p.NumGPU
	for i, f := range n.GPUFree {
		if k > 0 && f >= p.GPUMilli {
			s |= 1 << uint(i)
			k--
		}
	}
	return s
}

// nodeCache keeps each node's state until its NodeInfo generation or the
// reservations on it change, so a scheduling cycle rebuilds only the nodes
// that changed since the last.
type nodeCache struct {
	mu    sync.RWMutex
	nodes map[string]cacheEntry
	// reserved holds the GPUs of pods reserved by this scheduler, or first
	// seen bound with an annotation, until they are deleted: the
	// scheduler's record of what each pod holds. epoch counts changes of
	// reservations per node.
	reserved map[types.UID]reservation
	epoch    map[string]uint64
	// changed lists the nodes whose epoch moved since the last
	// drainChanged, when track is set (the node index reads it).
	track   bool
	changed []string
	// dra is the DRA state of the nodes with a gpu.nvidia.com pool, as
	// updateDRA last left it.
	dra draView
}

type cacheEntry struct {
	generation int64
	epoch      uint64
	state      *nodeState
}

type reservation struct {
	node string
	gpus cluster.GPUSet
}

func newNodeCache() *nodeCache {
	return &nodeCache{nodes: map[string]cacheEntry{}, reserved: map[types.UID]reservation{}, epoch: map[string]uint64{}}
}

// get returns the state of a NodeInfo, from the cache when current.
func (c *nodeCache) get(ni fwk.NodeInfo) (*nodeState, error) {
	name := ni.Node().Name
	gen := ni.GetGeneration()
	c.mu.RLock()
	e, ok := c.nodes[name]
	ep := c.epoch[name]
	dn := c.dra[name]
	c.mu.RUnlock()
	if ok && e.generation == gen && e.epoch == ep {
		return e.state, nil
	}
	st, err := buildNodeWith(ni, "", c.held, dn)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.epoch[name] == ep {
		c.nodes[name] = cacheEntry{generation: gen, epoch: ep, state: st}
	}
	c.mu.Unlock()
	return st, nil
}

func (c *nodeCache) held(uid types.UID) (cluster.GPUSet, bool) {
	c.mu.RLock()
	r, ok := c.reserved[uid]
	c.mu.RUnlock()
	return r.gpus, ok
}

// reserve records that pod uid holds gpus on node.
func (c *nodeCache) reserve(uid types.UID, node string, gpus cluster.GPUSet) {
	c.mu.Lock()
	c.reserved[uid] = reservation{node: node, gpus: gpus}
	c.bump(node)
	c.mu.Unlock()
}

// bump moves a node's epoch; c.mu is held.
func (c *nodeCache) bump(node string) {
	c.epoch[node]++
	if c.track {
		c.changed = append(c.changed, node)
	}
}

// drainChanged returns the nodes whose epoch moved since its last call.
func (c *nodeCache) drainChanged() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.changed
	c.changed = nil
	return out
}

// recordFirstSeen makes gpus the record of pod uid on node when there is
// none: after a restart the scheduler has no memory of what it bound, and
// the annotation it first sees is the record. The node's state is
// unchanged (it was built from that annotation), so the epoch is too. It
// returns the record, and whether there was one already.
func (c *nodeCache) recordFirstSeen(uid types.UID, node string, gpus cluster.GPUSet) (cluster.GPUSet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.reserved[uid]; ok {
		return r.gpus, true
	}
	c.reserved[uid] = reservation{node: node, gpus: gpus}
	return gpus, false
}

// updateDRA applies the nodes whose DRA state changed (draCache.update:
// the new state, nil for a node gone) and moves their epochs, so their
// cached states are rebuilt and the node index refreshes them.
func (c *nodeCache) updateDRA(changed draView) {
	if len(changed) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dra == nil {
		c.dra = draView{}
	}
	for name, dn := range changed {
		if dn == nil {
			delete(c.dra, name)
		} else {
			c.dra[name] = dn
		}
		c.bump(name)
	}
}

// draNode returns a node's DRA state, nil when it has none.
func (c *nodeCache) draNode(name string) *draNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.dra[name]
}

// forget drops pod uid's reservation, if any.
func (c *nodeCache) forget(uid types.UID) {
	c.mu.Lock()
	if r, ok := c.reserved[uid]; ok {
		delete(c.reserved, uid)
		c.bump(r.node)
	}
	c.mu.Unlock()
}

// forgetNode drops a deleted node's cached state.
func (c *nodeCache) forgetNode(name string) {
	c.mu.Lock()
	delete(c.nodes, name)
	c.bump(name)
	c.mu.Unlock()
}

// uuidsOf returns the UUIDs of gpus on a node, or nil when unknown.
func (st *nodeState) uuidsOf(gpus cluster.GPUSet) []string {
	if st.uuids == nil {
		return nil
	}
	var out []string
	for _, i := range gpus.Indices() {
		out = append(out, st.uuids[i])
	}
	return out
}

// unhealthyGPUs reads the node agent's unhealthy GPUs of n
// (gpuresource.AnnotationNodeUnhealthyGPUs) and the node's GPU count: the
// number of UUIDs it publishes (gpuresource.AnnotationNodeGPUUUIDs), which
// must equal its nvidia.com/gpu capacity (one device per GPU: not
// time-sliced, not MIG). ok is false, and the annotation ignored, when the
// node lists no unhealthy GPU or the annotation does not fit the node.
func unhealthyGPUs(n *v1.Node) (bad cluster.GPUSet, total int, ok bool) {
	s := n.Annotations[gpuresource.AnnotationNodeUnhealthyGPUs]
	u := n.Annotations[gpuresource.AnnotationNodeGPUUUIDs]
	if s == "" || u == "" {
		return 0, 0, false
	}
	total = len(strings.Split(u, ","))
	capacity := n.Status.Capacity[gpuresource.GPU]
	if capacity.Value() != int64(total) || total > cluster.MaxGPUsPerNode {
		return 0, 0, false
	}
	for _, f := range strings.Split(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= total {
			klog.InfoS("Ignoring a malformed unhealthy-GPU annotation", "node", n.Name, "annotation", gpuresource.AnnotationNodeUnhealthyGPUs, "value", s)
			return 0, 0, false
		}
		bad |= 1 << uint(i)
	}
	return bad, total, true
}

// terminal reports whether the pod has finished (its containers hold no
// devices).
func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// isGPUPod reports whether a pod asks for any GPU resource: NVIDIA's
// nvidia.com/gpu or gpuplane.io/gpu-milli, or another vendor's
// accelerators (amd.com/gpu, habana.ai/gaudi).
func isGPUPod(p *v1.Pod) bool {
	names := []v1.ResourceName{gpuresource.GPU, gpuresource.GPUMilli, gpuresource.AMDGPU, gpuresource.Gaudi}
	for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			for _, name := range names {
				_, req := cs[i].Resources.Requests[name]
				_, lim := cs[i].Resources.Limits[name]
				if req || lim {
					return true
				}
			}
		}
	}
	return false
}

// claim is the GPUs a pod's annotation names beyond the scheduler's record
// of it.
type claim struct {
	pod  cluster.Pod
	gpus cluster.GPUSet
}

// holdClaim takes, on each claimed GPU of the node, the pod's share or what
// is left of it: GPUs the node lacks and GPUs already full are skipped.
// The claim holds no CPU or memory (the pod's are held once, on its
// record).
func holdClaim(n *cluster.Node, c *claim) {
	for _, g := range c.gpus.Indices() {
		if g >= len(n.GPUFree) || n.GPUFree[g] <= 0 {
			continue
		}
		p := cluster.Pod{Name: c.pod.Name + " (claimed by annotation)", NumGPU: 1, GPUMilli: min(c.pod.GPUMilli, n.GPUFree[g])}
		if err := n.Add(&p, 1<<uint(g)); err != nil {
			klog.ErrorS(err, "Holding a GPU claimed by annotation", "pod", c.pod.Name, "gpu", g)
		}
	}
}
