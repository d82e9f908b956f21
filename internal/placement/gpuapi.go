// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
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
	// CoreOrder: the placement core's preference first, so that the
	// allocator's first fit is the policy's GPU (SelectGPUs) and start
	// (MIGStarter) for a pod asking for a MIG profile. Issue 37 asks the
	// driver to publish this order (republished as instances come and
	// go); the driver does not yet, so this models what it would give.
	CoreOrder
)

// ParseDRAOrder parses "table" or "core".
func ParseDRAOrder(s string) (DRAOrder, error) {
	switch s {
	case "table":
		return TableOrder, nil
	case "core":
		return CoreOrder, nil
	}
	return 0, fmt.Errorf("unknown DRA MIG order %q (table or core)", s)
}

func (o DRAOrder) String() string {
	if o == CoreOrder {
		return "core"
	}
	return "table"
}

// WithGPUAPI returns pol with its GPU choice made by api: pol itself for
// DevicePlugin; for DRA a policy that scores and chooses nodes as pol
// does (it keeps pol's Normalizer and UniformRandom) and takes DRAGPUs
// on the chosen node. Name stays pol's. It is WithDRAOrder(pol, api,
// TableOrder).
func WithGPUAPI(pol Policy, api GPUAPI) Policy {
	return WithDRAOrder(pol, api, TableOrder)
}

// WithDRAOrder is WithGPUAPI with the MIG placements published in order
// (DRAOrder): under CoreOrder a pod asking for a MIG profile takes pol's
// GPUs and start (MIGStarter), every other pod DRAGPUs.
func WithDRAOrder(pol Policy, api GPUAPI, order DRAOrder) Policy {
	if api != DRA {
		return pol
	}
	d := draChoice{pol, order == CoreOrder}
	if nz, ok := pol.(Normalizer); ok {
		return draNormalized{d, nz}
	}
	if _, ok := pol.(UniformRandom); ok {
		return draUniform{d}
	}
	return d
}

// draChoice is a policy whose GPUs are DRA's choice; core: the driver
// publishes MIG placements in the core's order (CoreOrder).
type draChoice struct {
	Policy
	core bool
}

// SelectGPUs returns DRAGPUs(n, p), or under CoreOrder the policy's GPUs
// for a pod asking for a MIG profile.
func (d draChoice) SelectGPUs(st State, n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	if d.core && p.MIGProfile != 0 {
		return d.Policy.SelectGPUs(st, n, p, rng)
	}
	return DRAGPUs(n, p)
}

// MIGStart is the policy's start under CoreOrder (MIGStarter), else -1:
// the first free placement in table order.
func (d draChoice) MIGStart(st State, n *cluster.Node, p *cluster.Pod, g int) int {
	if ms, ok := d.Policy.(MIGStarter); ok && d.core {
		return ms.MIGStart(st, n, p, g)
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
