// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// GPUAPI is how a pod's GPUs are given to it on the node the policy
// chose: by the policy (the device plugin path, where gpuplane-scheduler
// names the GPUs) or by upstream's DRA allocator (DRA's path, where
// kube-scheduler's DynamicResources plugin picks the devices inside the
// node).
type GPUAPI int

const (
	// DevicePlugin: the policy's SelectGPUs chooses the GPUs.
	DevicePlugin GPUAPI = iota
	// DRA: the GPUs are those DRAGPUs gives, upstream's allocator's.
	DRA
)

// ParseGPUAPI parses "device-plugin" or "dra".
func ParseGPUAPI(s string) (GPUAPI, error) {
	switch s {
	case "device-plugin":
		return DevicePlugin, nil
	case "dra":
		return DRA, nil
	}
	return 0, fmt.Errorf("unknown GPU API %q (device-plugin or dra)", s)
}

func (a GPUAPI) String() string {
	if a == DRA {
		return "dra"
	}
	return "device-plugin"
}

// DRAGPUs returns the GPUs of n that upstream's DRA allocator gives pod p
// (n fits p; cluster.Fits), as a ResourceClaim of p.NumGPU devices over
// the slices gpuplane's DRA driver publishes (internal/node/dra Build: one
// pool per node, devices in GPU order, each GPU's MIG placements after
// it). The allocator of kube-scheduler v1.37.2
// (k8s.io/dynamic-resource-allocation@v0.37.2/structured/internal/incubating,
// allocator.allocateOne) walks pools sorted by driver and pool name, each
// pool's slices sorted by name (buildPool; the kubelet plugin's slice
// names start with their index, resourceslice controller), and each
// slice's devices in order, taking every device that is free, matches
// the selectors and has the capacity and counters left, until the count
// is met; it backtracks only when a later request or constraint fails,
// which a single request without constraints never does. So:
//   - a pod of whole GPUs gets the first p.NumGPU fully free GPUs in
//     index order (a whole GPU consumes all its counters, or all of a
//     shared GPU's capacity by default);
//   - any other pod (a share, a MIG profile) the first GPU that fits it
//     (cluster.Node.FreeAfter), lowest index.
//
// It returns 0 when no GPU fits or p asks for none.
func DRAGPUs(n *cluster.Node, p *cluster.Pod) cluster.GPUSet {
	if p.NumGPU == 0 {
		return 0
	}
	if !p.IsGPUShare() && p.MIGProfile == 0 {
		return firstFreeGPUs(n, p)
	}
	for i := range n.GPUFree {
		if n.FreeAfterOK(p, i) {
			return 1 << uint(i)
		}
	}
	return 0
}

// DRAOrder is the order in which gpuplane's DRA driver publishes the MIG
// placements of a GPU of MIG on demand, which upstream's allocator takes
// first fit (DRAGPUs).
type DRAOrder int

const (
	// TableOrder: GPU order, then internal/gpu's table order (profile,
	// then start), as internal/node/dra Build publishes them: a MIG
	// instance takes the first GPU and placement that are free.
	TableOrder DRAOrder = iota
	// CoreOrder: each profile's free placements ranked by the placement
	// core (TargetWorkload.RankMIG), as gpuplane's DRA driver publishes
	// them with a target workload (internal/node/dra Options.Rank,
	// republished after each prepare and unprepare): a pod asking for a
	// MIG profile takes the ranking's first on the node the policy chose.
	CoreOrder
	// StaleOrder is CoreOrder one claim behind on every node: each claim
	// sees the order published before the node's previous MIG claim was
	// prepared, and takes its first placement still free (none: the
	// table's first fit, where the driver puts what it did not rank). It
	// measures the stale window (docs/dra.md): claims allocated on a node
	// faster than its kubelet prepares them. Not a driver setting.
	StaleOrder
)

// draOrders are DRAOrder's names, by value.
var draOrders = []string{"table", "core", "stale"}

// ParseDRAOrder parses "table", "core" or "stale".
func ParseDRAOrder(s string) (DRAOrder, error) {
	for i, name := range draOrders {
		if s == name {
			return DRAOrder(i), nil
		}
	}
	return 0, fmt.Errorf("unknown DRA MIG order %q (table, core or stale)", s)
}

func (o DRAOrder) String() string { return draOrders[o] }

// WithGPUAPI returns pol with its GPU choice made by api: pol itself for
// DevicePlugin; for DRA a policy that scores and chooses nodes as pol
// does (it keeps pol's Normalizer and UniformRandom) and takes DRAGPUs
// on the chosen node. Name stays pol's. It is WithDRAOrder(pol, api,
// TableOrder).
func WithGPUAPI(pol Policy, api GPUAPI) Policy {
	return WithDRAOrder(pol, api, TableOrder, nil)
}

// WithDRAOrder is WithGPUAPI with the MIG placements published in order
// (DRAOrder): under CoreOrder, ranked against tw, a pod asking for a MIG
// profile takes the first of tw.RankMIG on the chosen node (where it has
// none, DRAGPUs), every other pod DRAGPUs. Under StaleOrder the policy
// remembers each node's last published order: use it for one run at a
// time.
func WithDRAOrder(pol Policy, api GPUAPI, order DRAOrder, tw *TargetWorkload) Policy {
	if api != DRA {
		return pol
	}
	d := draChoice{Policy: pol}
	if order != TableOrder {
		d.rank = tw
	}
	if order == StaleOrder {
		d.pub = map[string]*migRanks{}
	}
	if nz, ok := pol.(Normalizer); ok {
		return draNormalized{d, nz}
	}
	if _, ok := pol.(UniformRandom); ok {
		return draUniform{d}
	}
	return d
}

// draChoice is a policy whose GPUs are DRA's choice; rank, when set, is
// the target workload the driver ranks MIG placements against
// (CoreOrder).
type draChoice struct {
	Policy
	rank *TargetWorkload
	// pub is, by node name, the order last published (StaleOrder).
	pub map[string]*migRanks
}

// migRanks is a node's RankMIG for every MIG profile.
type migRanks [gpu.NumMIGProfiles][]MIGPlacement

// rankAll ranks every profile's placements on n.
func (d draChoice) rankAll(n *cluster.Node) *migRanks {
	var r migRanks
	for k := range r {
		r[k] = d.rank.RankMIG(n, k)
	}
	return &r
}

// first returns the placement the allocator takes for p on n under the
// driver's ranking, false when p asks for no MIG profile, the order is
// the table's or nothing ranked is free.
func (d draChoice) first(n *cluster.Node, p *cluster.Pod) (MIGPlacement, bool) {
	if d.rank == nil || p.MIGProfile == 0 {
		return MIGPlacement{}, false
	}
	k := int(p.MIGProfile) - 1
	if d.pub == nil {
		r := d.rank.RankMIG(n, k)
		return firstOf(r), len(r) > 0
	}
	pub := d.pub[n.Name]
	if pub == nil { // the node's first publication: nothing held yet
		pub = d.rankAll(n)
		d.pub[n.Name] = pub
	}
	for _, pl := range pub[k] {
		if n.MIGFreeStarts(pl.GPU, k)&(1<<uint(pl.Start)) != 0 {
			return pl, true
		}
	}
	return MIGPlacement{}, false
}

func firstOf(r []MIGPlacement) MIGPlacement {
	if len(r) == 0 {
		return MIGPlacement{}
	}
	return r[0]
}

// SelectGPUs returns DRAGPUs(n, p), or under CoreOrder the GPU of the
// ranking's first for a pod asking for a MIG profile.
func (d draChoice) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	if f, ok := d.first(n, p); ok {
		return 1 << uint(f.GPU)
	}
	return DRAGPUs(n, p)
}

// MIGStart is the ranking's first start under CoreOrder when it is on
// GPU g, else -1: the first free placement in table order. Allocate
// calls it just before the instance is made; under StaleOrder the node's
// order is then republished as of that moment, without this instance,
// which the next claim on the node sees.
func (d draChoice) MIGStart(_ State, n *cluster.Node, p *cluster.Pod, g int) int {
	f, ok := d.first(n, p)
	if d.pub != nil && p.MIGProfile != 0 {
		d.pub[n.Name] = d.rankAll(n)
	}
	if ok && f.GPU == g {
		return f.Start
	}
	return -1
}

type draNormalized struct {
	draChoice
	nz Normalizer
}

func (d draNormalized) NormalizeScores(scores []int64) { d.nz.NormalizeScores(scores) }

type draUniform struct{ draChoice }

func (draUniform) UniformRandom() {}
