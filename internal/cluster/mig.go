// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// MIGGPU is one MIG-enabled GPU's instances, counted by profile (the index
// order of gpu.MIGProfiles, the same for every MIG-capable model): an
// instance is free or held by one pod.
type MIGGPU struct {
	// Free and Held count the free and the held instances of each profile.
	Free, Held [gpu.NumMIGProfiles]int8
	// Dynamic marks a GPU of MIG on demand (EnableDynamicMIG): it has no
	// fixed instances (Free is zero) and serves no pod of whole GPUs;
	// Slots are its held memory slots (bit i: slot i) and Starts[k] the
	// placements of profile k held (bit i: the profile's i-th start).
	Dynamic bool
	Slots   uint8
	Starts  [gpu.NumMIGProfiles]uint8
}

// heldSlices returns the compute slices of the held instances.
func (m *MIGGPU) heldSlices() int {
	s := 0
	for k, c := range m.Held {
		s += int(c) * gpu.MIGSlices(k)
	}
	return s
}

// migFree returns the free milli-GPU of a MIG-enabled GPU whose held
// instances have heldSlices compute slices: the held instances allocate
// their slices/7 of the GPU (gpu.MIGShareMilli, rounded down over the
// whole GPU, so that 7 held slices leave exactly 0).
func migFree(heldSlices int) int64 {
	return MilliGPU - gpu.MIGShareMilli(heldSlices)
}

// MIGMilli returns the milli-GPU that an instance of profile k allocates
// on an otherwise empty GPU: its compute slices/7, rounded down
// (gpu.MIGShareMilli).
func MIGMilli(k int) int64 { return gpu.MIGShareMilli(gpu.MIGSlices(k)) }

// EnableMIG partitions GPU g of the node into MIG instances with the given
// profile names (a layout gpu.PlaceMIG accepts for the node's model). The
// GPU must hold nothing. A MIG-enabled GPU serves only pods asking for one
// of its profiles (Pod.MIGProfile); its GPUFree is 1000 less the held
// instances' compute slices/7.
func (n *Node) EnableMIG(g int, profiles []string) error {
	if g < 0 || g >= len(n.GPUFree) {
		return fmt.Errorf("node %s: GPU %d out of range 0..%d", n.Name, g, len(n.GPUFree)-1)
	}
	if n.GPUFree[g] != MilliGPU || n.MIGGPUs.Has(g) {
		return fmt.Errorf("node %s: GPU %d is in use or MIG-enabled already", n.Name, g)
	}
	if _, err := gpu.PlaceMIG(n.Model, profiles); err != nil {
		return fmt.Errorf("node %s: GPU %d: %w", n.Name, g, err)
	}
	l, err := gpu.MIGLayoutOf(n.Model, profiles)
	if err != nil {
		return fmt.Errorf("node %s: GPU %d: %w", n.Name, g, err)
	}
	if n.MIG == nil {
		n.MIG = make([]MIGGPU, len(n.GPUFree))
	}
	for k, c := range l {
		n.MIG[g].Free[k] = int8(c)
	}
	n.MIGGPUs |= 1 << uint(g)
	n.Version++
	return nil
}

// FreeAfter is the GPU fit rule, its one home: it returns GPU g's free
// milli-GPU after pod p (of NumGPU ≥ 1) takes its share of it, and whether
// p fits GPU g at all.
//   - A MIG-enabled GPU fits only a pod asking for a MIG profile
//     (Pod.MIGProfile) of which it has a free instance; the pod holds that
//     instance, slices/7 of the GPU.
//   - Any other GPU fits a pod asking for a MIG profile only when it is
//     wholly free (a model without MIG, or a GPU left whole, serves the
//     pod as an exclusive GPU) and the pod asked for no MIG device
//     (ResourceMIG), and any other pod when its GPUMilli is free.
//   - A pod of a known resource kind (Pod.Resource) fits only GPUs that
//     serve it, as in Kubernetes: nvidia.com/gpu.shared only the GPUs of
//     a Shared node, nvidia.com/gpu and MIG devices never those,
//     nvidia.com/gpu and a claim of whole GPUs or a share no MIGOnly GPU,
//     and a MIG device (ResourceMIG) only a MIG-enabled GPU: an instance
//     of MIGGPUs, or by its share a MIGOnly GPU (a GPU without MIG serves
//     no nvidia.com/mig-<profile>, nor a claim of class mig.nvidia.com).
//     A claim (Pod.Claim) fits only a node whose ResourceSlices publish
//     its GPUs, an extended resource only a node that serves it (Serves).
//   - p is taken as n serves it (Served): nvidia.com/gpu replicas or
//     single-strategy MIG instances are a share of one GPU.
func (n *Node) FreeAfter(p *Pod, g int) (int64, bool) {
	var buf Pod
	p = n.Served(p, &buf)
	f := n.GPUFree[g]
	if !n.Serves(p) || (p.avoidsMIGOnly() && n.MIGOnly.Has(g)) {
		return f, false
	}
	if n.MIGGPUs.Has(g) {
		if n.MIG[g].Dynamic {
			return n.MIG[g].dynFreeAfter(p)
		}
		k := int(p.MIGProfile) - 1
		if k < 0 || n.MIG[g].Free[k] == 0 {
			return f, false
		}
		return migFree(n.MIG[g].heldSlices() + gpu.MIGSlices(k)), true
	}
	if p.MIGProfile != 0 {
		return 0, f == MilliGPU && p.Resource != ResourceMIG
	}
	if p.Resource == ResourceMIG && !n.MIGOnly.Has(g) {
		return f, false
	}
	return f - p.GPUMilli, f >= p.GPUMilli
}

// Serves reports whether the node serves the resource kind p asks for at
// all (Pod.Resource, Pod.Claim), as kube-scheduler sees it (Serving): a
// node of a vendor p accepts only (Pod.AcceptedVendors, Node.Vendor: a
// vendor's resource that vendor's nodes, amd.com/gpu an AMD node,
// habana.ai/gaudi an Intel one, nvidia.com/gpu and NVIDIA's claims an
// NVIDIA one; a pod of Vendors those vendors' nodes); a
// claim only a node whose ResourceSlices publish GPUs (its
// DynamicResources plugin); a pod of ResourceAny that asks by no claim
// (a trace's) every node, of ResourceMilli every NVIDIA node; an extended resource only a node that
// advertises it (NodeResourcesFit): a DRA-only node none, or
// nvidia.com/gpu where a DeviceClass maps it (ServedByDRAExtended); a
// Shared node only nvidia.com/gpu.shared, any other node everything but
// it; p as n serves it (Served: nvidia.com/gpu on a node of replicas is
// one); on a node of partitions (PerDevice), not a share that no
// partition holds.
func (n *Node) Serves(p *Pod) bool {
	if n.PerDevice > 0 && n.devicePartitions(p) == 0 {
		return false // a share no partition holds (Served)
	}
	var buf Pod
	p = n.Served(p, &buf)
	if !p.AcceptedVendors().Has(n.Vendor) {
		// A vendor's resource (or NVIDIA's claim class) on another
		// vendor's node: its device plugin advertises none of it; or a
		// vendor the pod does not accept (Pod.Vendors).
		return false
	}
	switch {
	case p.Claim:
		return n.Serving != ServedByDevicePlugin
	case p.Resource == ResourceAny || p.Resource == ResourceMilli:
		return true
	case p.Resource.wholeVendor():
		return n.Serving != ServedByDRA
	case n.MIGAsGPU && p.Resource == ResourceMIG:
		return false
	case p.Resource == ResourceMIG && n.MIGServed != 0:
		return n.MIGServed&(1<<uint(p.MIGSlices())) != 0
	case n.Serving == ServedByDRA:
		return false
	case n.Serving == ServedByDRAExtended:
		return p.Resource == ResourceGPU
	}
	return n.Shared == (p.Resource == ResourceShared)
}

// avoidsMIGOnly reports whether p never fits a MIGOnly GPU: it asks for
// nvidia.com/gpu, or by a claim of whole GPUs or a share (class
// gpu.nvidia.com: a GPU in MIG mode publishes MIG devices only).
func (p *Pod) avoidsMIGOnly() bool {
	return p.Resource == ResourceGPU || (p.Claim && p.Resource != ResourceMIG)
}

// Uniform reports whether FreeAfter's rule for p on n is GPUMilli free on
// every GPU: no MIG, no MIGOnly GPU, p no MIG device, and n serves p's
// resource. Policies take faster paths then.
func (n *Node) Uniform(p *Pod) bool {
	var buf Pod
	p = n.Served(p, &buf)
	return n.MIGGPUs == 0 && p.MIGProfile == 0 && p.Resource != ResourceMIG && (n.MIGOnly == 0 || !p.avoidsMIGOnly()) && n.Serves(p)
}

// ServesKind reports whether some GPU of n serves the resource kind p asks
// for, whatever is allocated there (FreeAfter's rule less the free
// share): n serves p's resource at all (Serves); a MIG device
// (ResourceMIG) needs a MIG-enabled GPU (MIGGPUs, MIGOnly), nvidia.com/gpu
// or a claim of whole GPUs or a share a GPU that is not MIGOnly.
func (n *Node) ServesKind(p *Pod) bool {
	var buf Pod
	p = n.Served(p, &buf)
	switch {
	case len(n.GPUFree) == 0 || !n.Serves(p):
		return false
	case p.Resource == ResourceMIG:
		return n.MIGGPUs != 0 || n.MIGOnly != 0
	case p.avoidsMIGOnly():
		return n.MIGOnly.Count() < len(n.GPUFree)
	}
	return true
}

// fitsGPU reports whether p fits GPU g (FreeAfter).
func (n *Node) fitsGPU(p *Pod, g int) bool {
	_, ok := n.FreeAfter(p, g)
	return ok
}

// take marks p's share of GPU g as held (d = 1) or free again (d = -1);
// the caller has checked it may.
func (n *Node) take(p *Pod, g int, d int8) {
	if n.MIGGPUs.Has(g) {
		m := &n.MIG[g]
		if m.Dynamic {
			n.GPUFree[g] = m.dynTake(p, d)
			return
		}
		k := p.MIGProfile - 1
		m.Free[k] -= d
		m.Held[k] += d
		n.GPUFree[g] = migFree(m.heldSlices())
		return
	}
	share := p.GPUMilli
	if p.MIGProfile != 0 {
		share = MilliGPU
	}
	n.GPUFree[g] -= int64(d) * share
}

// canRelease reports whether p's share of GPU g can be freed.
func (n *Node) canRelease(p *Pod, g int) bool {
	if n.MIGGPUs.Has(g) {
		if n.MIG[g].Dynamic {
			return n.MIG[g].dynCanRelease(p)
		}
		k := int(p.MIGProfile) - 1
		return k >= 0 && n.MIG[g].Held[k] > 0
	}
	share := p.GPUMilli
	if p.MIGProfile != 0 {
		share = MilliGPU
	}
	return n.GPUFree[g]+share <= MilliGPU
}

// UsedGPUs returns the number of GPUs holding at least one pod.
func (n *Node) UsedGPUs() int {
	c := 0
	for _, f := range n.GPUFree {
		if f < MilliGPU {
			c++
		}
	}
	return c
}

// FreeAfterOK reports whether p fits GPU g (FreeAfter).
func (n *Node) FreeAfterOK(p *Pod, g int) bool { return n.fitsGPU(p, g) }
