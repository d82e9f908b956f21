// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// draCache keeps the DRA view (buildDRAView's) between scheduling cycles
// and, each cycle, rebuilds only the nodes whose inputs changed: a slice
// of theirs added, replaced by other content, or gone, their pool's
// newest generation moved, or the devices allocated in their pool
// changed. A node's view is built from its slices (byNode) and, for MIG
// placements, from the slices of the pool named after it (byPool), as
// buildDRAView does; the result equals buildDRAView's for the same
// slices and allocated state.
type draCache struct {
	mu     sync.Mutex
	slices map[string]*cachedSlice            // by slice name
	byNode map[string]map[string]*cachedSlice // node -> slice name -> slice
	byPool map[string]map[string]*cachedSlice // pool -> slice name -> slice
	gen    map[string]int64                   // pool -> its newest generation
	alloc  map[string][]allocEntry            // pool -> what claims hold in it, sorted
	view   draView
	stamp  uint64 // counts updates; a slice seen in update n has seen n
	// rebuilt are the nodes the last update rebuilt, sorted.
	rebuilt []string
}

// cachedSlice is one ResourceSlice of driver gpu.nvidia.com as last seen.
type cachedSlice struct {
	obj              *resourceapi.ResourceSlice
	name, node, pool string
	gen              int64
	part             *slicePart
	seen             uint64
}

// allocEntry is what deviceUse and holdMIG read of one device of a pool
// in the allocated state: whether it is in AllocatedDevices (held) and,
// when it has an AggregatedCapacity entry (capped), the milliGPU, memory
// (bytes) and shares consumed. A device in both is two entries.
type allocEntry struct {
	device             string
	held, capped       bool
	milli, mem, shares int64
}

func newDRACache() *draCache {
	return &draCache{slices: map[string]*cachedSlice{}, byNode: map[string]map[string]*cachedSlice{},
		byPool: map[string]map[string]*cachedSlice{}, gen: map[string]int64{}, alloc: map[string][]allocEntry{}, view: draView{}}
}

// update brings the view to slices sl and allocated state st (nil: none)
// and returns the nodes whose view changed: the new view, nil for a node
// gone. Its cost is one pass over sl and st, plus the nodes rebuilt.
func (c *draCache) update(sl []*resourceapi.ResourceSlice, st *structured.AllocatedState) draView {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stamp++
	dirty := map[string]bool{}
	pools := map[string]bool{} // pools whose slices changed
	c.readSlices(sl, dirty, pools)
	for pool := range pools {
		g, found := int64(0), false
		for _, s := range c.byPool[pool] {
			g, found = max(g, s.gen), true
		}
		if found {
			c.gen[pool] = g
		} else {
			delete(c.gen, pool)
		}
		c.markPool(pool, dirty)
	}
	c.readAllocated(st, dirty)
	changed := draView{}
	c.rebuilt = c.rebuilt[:0]
	for node := range dirty {
		c.rebuilt = append(c.rebuilt, node)
		dn, old := c.buildNode(node, st), c.view[node]
		switch {
		case dn == nil && old != nil:
			delete(c.view, node)
			changed[node] = nil
		case dn != nil && (old == nil || !old.equal(dn)):
			c.view[node] = dn
			changed[node] = dn
		}
	}
	slices.Sort(c.rebuilt)
	return changed
}

// readSlices updates the slice index from sl, marking the nodes and
// pools of every slice added, changed or gone. A slice object seen again
// is unchanged (informers replace objects, never modify them); another
// object under the same name is parsed and compared (a relist, or device
// taint rules applied anew, may give the same content).
func (c *draCache) readSlices(sl []*resourceapi.ResourceSlice, dirty, pools map[string]bool) {
	seen := 0
	for _, s := range sl {
		if s.Spec.Driver != apidra.DriverName {
			continue
		}
		seen++
		old := c.slices[s.Name]
		if old != nil && old.obj == s {
			old.seen = c.stamp
			continue
		}
		n := &cachedSlice{obj: s, name: s.Name, node: s.Spec.Pool.Name, pool: s.Spec.Pool.Name,
			gen: s.Spec.Pool.Generation, part: parseSlice(s), seen: c.stamp}
		if s.Spec.NodeName != nil && *s.Spec.NodeName != "" {
			n.node = *s.Spec.NodeName
		}
		if old != nil && old.node == n.node && old.pool == n.pool && old.gen == n.gen && old.part.equal(n.part) {
			old.obj, old.seen = s, c.stamp
			continue
		}
		if old != nil {
			c.drop(old, dirty, pools)
		}
		c.add(n, dirty, pools)
	}
	if seen == len(c.slices) {
		return // every slice indexed was seen: none is gone
	}
	for _, s := range c.slices {
		if s.seen != c.stamp {
			c.drop(s, dirty, pools)
		}
	}
}

func (c *draCache) add(s *cachedSlice, dirty, pools map[string]bool) {
	c.slices[s.name] = s
	put(c.byNode, s.node, s)
	put(c.byPool, s.pool, s)
	dirty[s.node], pools[s.pool] = true, true
}

func (c *draCache) drop(s *cachedSlice, dirty, pools map[string]bool) {
	delete(c.slices, s.name)
	remove(c.byNode, s.node, s.name)
	remove(c.byPool, s.pool, s.name)
	dirty[s.node], pools[s.pool] = true, true
}

// put files slice s under key k of index m.
func put(m map[string]map[string]*cachedSlice, k string, s *cachedSlice) {
	if m[k] == nil {
		m[k] = map[string]*cachedSlice{}
	}
	m[k][s.name] = s
}

// remove takes slice name from key k of index m, and k when it is empty.
func remove(m map[string]map[string]*cachedSlice, k, name string) {
	delete(m[k], name)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

// markPool marks the nodes that read pool: those of its slices, and the
// node named after it (its MIG placements, holdMIG).
func (c *draCache) markPool(pool string, dirty map[string]bool) {
	dirty[pool] = true
	for _, s := range c.byPool[pool] {
		dirty[s.node] = true
	}
}

// readAllocated compares what st allocates in each pool of driver
// gpu.nvidia.com with the last update's, marking the nodes of the pools
// that differ.
func (c *draCache) readAllocated(st *structured.AllocatedState, dirty map[string]bool) {
	next := map[string][]allocEntry{}
	if st != nil {
		for id := range st.AllocatedDevices {
			if id.Driver.String() == apidra.DriverName {
				next[id.Pool.String()] = append(next[id.Pool.String()], allocEntry{device: id.Device.String(), held: true})
			}
		}
		for id, cc := range st.AggregatedCapacity {
			if id.Driver.String() != apidra.DriverName {
				continue
			}
			e := allocEntry{device: id.Device.String(), capped: true,
				milli: quantity(cc, apidra.CapacityMilliGPU), mem: quantity(cc, apidra.CapacityMemory), shares: quantity(cc, apidra.CapacityShares)}
			next[id.Pool.String()] = append(next[id.Pool.String()], e)
		}
	}
	for pool, es := range next {
		slices.SortFunc(es, func(a, b allocEntry) int {
			return cmp.Or(strings.Compare(a.device, b.device), cmp.Compare(b2i(a.held), b2i(b.held)))
		})
		if !slices.Equal(es, c.alloc[pool]) {
			c.markPool(pool, dirty)
		}
	}
	for pool := range c.alloc {
		if _, ok := next[pool]; !ok {
			c.markPool(pool, dirty)
		}
	}
	c.alloc = next
}

// quantity is capacity name of cc as an integer, 0 if absent.
func quantity(cc structured.ConsumedCapacity, name resourceapi.QualifiedName) int64 {
	if q := cc[name]; q != nil {
		return q.Value()
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// buildNode is buildDRAView's view of one node from the index: nil when
// no slice of its pool's newest generation names it.
func (c *draCache) buildNode(node string, st *structured.AllocatedState) *draNode {
	current := func(m map[string]*cachedSlice) []*cachedSlice {
		var out []*cachedSlice
		for _, s := range m {
			if s.gen == c.gen[s.pool] {
				out = append(out, s)
			}
		}
		slices.SortFunc(out, func(a, b *cachedSlice) int { return strings.Compare(a.name, b.name) })
		return out
	}
	own := current(c.byNode[node])
	if len(own) == 0 {
		return nil
	}
	dn := &draNode{}
	for _, s := range own {
		for _, g := range s.part.gpus {
			dn.addGPU(g, st, s.pool)
		}
	}
	var migs []*slicePart
	for _, s := range current(c.byPool[node]) {
		if s.part.migs != nil {
			migs = append(migs, s.part)
		}
	}
	if migs != nil {
		dn.holdMIG(migs, c.alloc[node])
	}
	return dn
}

// holdMIG is holdMIG's work on one node of MIG parts migs (its pool's,
// in slice name order) with the pool's allocated devices alloc.
func (dn *draNode) holdMIG(migs []*slicePart, alloc []allocEntry) {
	gpuOf := func(name string) *draGPU {
		for i := range dn.gpus {
			if dn.gpus[i].name == name {
				return &dn.gpus[i]
			}
		}
		return nil
	}
	for _, p := range migs {
		for _, parent := range p.parents {
			if g := gpuOf(parent); g != nil {
				g.mig = true
			}
		}
	}
	for _, e := range alloc {
		if !e.held {
			continue
		}
		for _, p := range migs {
			if m, ok := p.migs[e.device]; ok {
				if g := gpuOf(m.parent); g != nil {
					g.migHeld = append(g.migHeld, m)
				}
			}
		}
	}
	for i := range dn.gpus {
		sortMIG(dn.gpus[i].migHeld)
	}
}
