// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"
	"math/bits"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// MIG on demand (DRA's dynamic MIG, docs/dra.md): a GPU whose MIG
// instances are made per pod from its counters, as gpuplane's DRA driver
// publishes them (internal/node/dra Build): 8 memory slots and 7 compute
// slices; an instance of profile k at start s takes slots s..s+Size-1 and
// its compute slices. The driver publishes no whole GPU for a GPU in MIG
// mode (CUDA sees none there, and MIG mode is never changed), so such a
// GPU serves no pod of whole GPUs. The slot grid is A100's, the same on
// every MIG model of internal/gpu's table.

// migMasks[k] are the slot masks of profile k's placements, in the
// table's start order, which is the order the driver publishes them and
// upstream's allocator tries them.
var migMasks = func() (m [gpu.NumMIGProfiles][]uint8) {
	for k, p := range gpu.MIGProfiles("A100-80GB") {
		for _, s := range p.Starts {
			m[k] = append(m[k], uint8((1<<p.Size-1)<<s))
		}
	}
	return m
}()

// EnableDynamicMIG makes GPU g of the node a GPU of MIG on demand: it
// serves a pod asking for MIG profile k (Pod.MIGProfile) while a
// placement of k has its memory slots free and 7 compute slices are not
// exceeded (the instance takes the first such placement in the table's
// start order, as upstream's DRA allocator takes the first free device the
// driver publishes), and no pod of whole GPUs. The GPU must hold nothing
// and the node's model have MIG profiles.
func (n *Node) EnableDynamicMIG(g int) error {
	if g < 0 || g >= len(n.GPUFree) {
		return fmt.Errorf("node %s: GPU %d out of range 0..%d", n.Name, g, len(n.GPUFree)-1)
	}
	if n.GPUFree[g] != MilliGPU || n.MIGGPUs.Has(g) {
		return fmt.Errorf("node %s: GPU %d is in use or MIG-enabled already", n.Name, g)
	}
	if len(gpu.MIGProfiles(n.Model)) == 0 {
		return fmt.Errorf("node %s: model %q does not support MIG", n.Name, n.Model)
	}
	if n.MIG == nil {
		n.MIG = make([]MIGGPU, len(n.GPUFree))
	}
	n.MIG[g] = MIGGPU{Dynamic: true}
	n.MIGGPUs |= 1 << uint(g)
	n.Version++
	return nil
}

// freePlacement returns the first placement (index into migMasks[k]) of
// profile k whose slots are free on m, a dynamic MIG GPU, and whose
// compute slices fit; ok is false when there is none.
func (m *MIGGPU) freePlacement(k int) (int, bool) {
	if m.heldSlices()+gpu.MIGSlices(k) > 7 {
		return 0, false
	}
	for i, mask := range migMasks[k] {
		if m.Slots&mask == 0 {
			return i, true
		}
	}
	return 0, false
}

// dynFreeAfter is FreeAfter's rule on a dynamic MIG GPU.
func (m *MIGGPU) dynFreeAfter(p *Pod) (int64, bool) {
	k := int(p.MIGProfile) - 1
	if k < 0 {
		return migFree(m.heldSlices()), false
	}
	if _, ok := m.freePlacement(k); !ok {
		return migFree(m.heldSlices()), false
	}
	return migFree(m.heldSlices() + gpu.MIGSlices(k)), true
}

// dynTake holds (d = 1) or frees (d = -1) p's instance on dynamic MIG GPU
// m and returns the GPU's free milli-GPU. A freed
// instance is the highest start of its profile held on the GPU: the
// cluster state knows no pod's start, so in a replay a release may free
// another placement of the same profile than the pod held.
func (m *MIGGPU) dynTake(p *Pod, d int8) int64 {
	k := int(p.MIGProfile) - 1
	if d > 0 {
		i, _ := m.freePlacement(k)
		m.Slots |= migMasks[k][i]
		m.Starts[k] |= 1 << uint(i)
	} else {
		i := 7 - bits.LeadingZeros8(m.Starts[k])
		m.Slots &^= migMasks[k][i]
		m.Starts[k] &^= 1 << uint(i)
	}
	m.Held[k] += d
	return migFree(m.heldSlices())
}

// dynCanRelease reports whether p's instance is held on dynamic MIG GPU m.
func (m *MIGGPU) dynCanRelease(p *Pod) bool {
	k := int(p.MIGProfile) - 1
	return k >= 0 && m.Held[k] > 0
}

// DynamicMIGStarts returns the start slots of the instances of profile k
// held on GPU g (a dynamic MIG GPU), in the table's start order; nil for
// any other GPU.
func (n *Node) DynamicMIGStarts(g, k int) []int {
	if !n.MIGGPUs.Has(g) || !n.MIG[g].Dynamic || k < 0 || k >= gpu.NumMIGProfiles {
		return nil
	}
	var out []int
	starts := gpu.MIGProfiles("A100-80GB")[k].Starts
	for i := range migMasks[k] {
		if n.MIG[g].Starts[k]&(1<<uint(i)) != 0 {
			out = append(out, starts[i])
		}
	}
	return out
}

// AddDynamicMIGAt binds p, asking for MIG profile p.MIGProfile-1, to GPU g,
// a GPU of MIG on demand, at the placement that starts at memory slot
// start, instead of the first free one: a running pod's instance as a
// snapshot's claim allocated it (the start of the device's name, internal/node/dra
// migName). It is an error, changing nothing, when the GPU is no dynamic
// MIG GPU, the profile has no placement at start, its slots are not free
// or Add refuses p.
func (n *Node) AddDynamicMIGAt(p *Pod, g, start int) error {
	k := int(p.MIGProfile) - 1
	if g < 0 || g >= len(n.GPUFree) || !n.MIGGPUs.Has(g) || !n.MIG[g].Dynamic || k < 0 || k >= gpu.NumMIGProfiles {
		return fmt.Errorf("pod %s: GPU %d of node %s is no GPU of MIG on demand, or the pod asks for no MIG profile", p.Name, g, n.Name)
	}
	at := -1
	for i, s := range gpu.MIGProfiles("A100-80GB")[k].Starts {
		if s == start {
			at = i
		}
	}
	m := &n.MIG[g]
	if at < 0 || m.Slots&migMasks[k][at] != 0 {
		return fmt.Errorf("pod %s: MIG profile %d has no free placement at slot %d of GPU %d of node %s", p.Name, k, start, g, n.Name)
	}
	first, _ := m.freePlacement(k) // the placement Add takes
	if err := n.Add(p, 1<<uint(g)); err != nil {
		return err
	}
	// Move it to at: at's slots were free before Add, and the compute
	// slices held (GPUFree) are the same.
	m.Slots = m.Slots&^migMasks[k][first] | migMasks[k][at]
	m.Starts[k] = m.Starts[k]&^(1<<uint(first)) | 1<<uint(at)
	return nil
}

// placeable returns the profiles (bit k: gpu.MIGProfiles' index k) that
// MIG-enabled GPU m serves now, by FreeAfter's rule: a static GPU those
// with a free instance, a GPU of MIG on demand those with a placement
// whose memory slots are free and whose compute slices fit.
func (m *MIGGPU) placeable() uint8 {
	var s uint8
	for k := range gpu.NumMIGProfiles {
		if m.Dynamic {
			if _, ok := m.freePlacement(k); ok {
				s |= 1 << uint(k)
			}
		} else if m.Free[k] > 0 {
			s |= 1 << uint(k)
		}
	}
	return s
}

// MIGPlaceable returns the MIG profiles (bit k: gpu.MIGProfiles' index k)
// that GPU g serves now (FreeAfter's rule: a static MIG GPU those of which
// it has a free instance, a GPU of MIG on demand those with a placement
// whose memory slots are free and whose compute slices fit); 0 for a GPU
// that is not MIG-enabled.
func (n *Node) MIGPlaceable(g int) uint8 {
	if !n.MIGGPUs.Has(g) {
		return 0
	}
	return n.MIG[g].placeable()
}

// MIGPlaceableAfter is MIGPlaceable(g) once an instance of profile k is
// held on GPU g: on a GPU of MIG on demand at the placement that starts at
// memory slot start, on a static one any free instance of k (start is not
// read). ok is false, and the profiles are those of now, when GPU g is not
// MIG-enabled or that instance is not free.
func (n *Node) MIGPlaceableAfter(g, k, start int) (profiles uint8, ok bool) {
	if !n.MIGGPUs.Has(g) || k < 0 || k >= gpu.NumMIGProfiles {
		return n.MIGPlaceable(g), false
	}
	m := n.MIG[g] // a copy
	if !m.Dynamic {
		if m.Free[k] == 0 {
			return m.placeable(), false
		}
		m.Free[k]--
		m.Held[k]++
		return m.placeable(), true
	}
	i := placementAt(k, start)
	if i < 0 || m.Slots&migMasks[k][i] != 0 || m.heldSlices()+gpu.MIGSlices(k) > 7 {
		return m.placeable(), false
	}
	m.Slots |= migMasks[k][i]
	m.Held[k]++
	return m.placeable(), true
}

// MIGFreeStarts returns the start slots (bit s: memory slot s) of the
// free placements of profile k on GPU g, a GPU of MIG on demand: those
// whose memory slots are free, when the compute slices fit; 0 for any
// other GPU.
func (n *Node) MIGFreeStarts(g, k int) uint8 {
	if !n.MIGGPUs.Has(g) || !n.MIG[g].Dynamic || k < 0 || k >= gpu.NumMIGProfiles {
		return 0
	}
	m := &n.MIG[g]
	if m.heldSlices()+gpu.MIGSlices(k) > 7 {
		return 0
	}
	var s uint8
	for _, mask := range migMasks[k] {
		if m.Slots&mask == 0 {
			s |= 1 << uint(bits.TrailingZeros8(mask))
		}
	}
	return s
}

// placementAt returns the index of profile k's placement that starts at
// memory slot start, -1 if none.
func placementAt(k, start int) int {
	for i, mask := range migMasks[k] {
		if bits.TrailingZeros8(mask) == start {
			return i
		}
	}
	return -1
}
