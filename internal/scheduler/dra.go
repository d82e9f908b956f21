// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	fwk "k8s.io/kube-scheduler/framework"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// The DRA devices the placement core models: those of gpuplane's (and
// NVIDIA's) driver, as internal/node/dra Build publishes them: one pool per
// node, named after it; whole GPUs "gpu-<minor>" with attribute type "gpu"
// and productName; MIG placements "gpu-<minor>-mig-..." of type "mig";
// shared GPUs (--dra-shares) with the consumable capacity milliGPU.
// Their names (driver, classes, attributes, capacities, device names) are
// api/dra's.

// draGPU is one whole GPU a node's slices publish.
type draGPU struct {
	name    string // the device name, gpu-<minor>
	product string // its productName attribute
	tainted bool   // a NoSchedule or NoExecute device taint: never chosen
	shared  bool   // allowMultipleAllocations with milliGPU (--dra-shares)
	mem     int64  // its memory capacity, bytes (0: none published)
	shares  int64  // its "shares" capacity, NVIDIA's integer shares (0: none published)
	plain   int64  // shared: milli-GPU a claim asking no capacity holds (plainShare)
	used    int64  // milli-GPU held by allocated claims (1000: whole)
	// mig is set when MIG placements of the GPU are published (MIG on
	// demand); migHeld are those allocated.
	mig     bool
	migHeld []migDevice
	migOnly bool // published by its MIG placements alone (MIG mode)
}

// migDevice is a published MIG placement: its GPU's device name, its
// profile attribute, and its start slot (the last field of its name,
// gpu-<minor>-mig-<profile>-<profile ID>-<start>).
type migDevice struct {
	parent, profile string
	start           int
}

// draNode is what DRA says of one node's GPUs: its pool of driver
// gpu.nvidia.com and the devices allocated in it.
type draNode struct {
	// gpus are the whole GPUs in the order upstream's allocator walks
	// them (slices by name, devices in order): the placement core's GPU
	// indices, so that placement.DRAGPUs's index is the device taken.
	gpus []draGPU
	// key changes whenever anything above changes.
	key uint64
}

// draView is the DRA state of every node that has a pool of
// gpu.nvidia.com, by node name.
type draView map[string]*draNode

// collectDRA reads the DRA state from the framework's shared DRA manager:
// the ResourceSlices with device taint rules applied, and the allocated
// devices of all claims, in-flight allocations included
// (GatherAllocatedState, which DynamicResources' Filter reads too).
// Slices are parsed once (parts).
func collectDRA(m fwk.SharedDRAManager, parts *sliceParts) (draView, error) {
	sl, err := m.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return nil, fmt.Errorf("listing ResourceSlices: %w", err)
	}
	var st *structured.AllocatedState
	for range 5 {
		// A concurrent change makes the tracker ask for a retry.
		if st, err = m.ResourceClaims().GatherAllocatedState(); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gathering allocated devices: %w", err)
	}
	return buildDRAView(sl, st, parts), nil
}

// slicePart is what one ResourceSlice publishes of the devices the core
// models: its whole GPUs (without use) and MIG placements by name.
type slicePart struct {
	gpus []draGPU
	migs map[string]migDevice
	// parents are the GPUs (device names) with placements in migs.
	parents []string
}

// sliceParts caches each slice's part by the slice object: the informer
// replaces an object on every change, so a pointer seen again is the
// same content. Entries of slices gone are dropped at each buildDRAView.
type sliceParts struct {
	mu sync.Mutex
	m  map[*resourceapi.ResourceSlice]*slicePart
}

// parse returns the part of slice s, from the cache when present (parts
// may be nil: no cache).
func (parts *sliceParts) parse(s *resourceapi.ResourceSlice, next map[*resourceapi.ResourceSlice]*slicePart) *slicePart {
	if parts != nil {
		if p, ok := parts.m[s]; ok {
			next[s] = p
			return p
		}
	}
	p := &slicePart{}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		if g, ok := wholeGPU(d); ok {
			p.gpus = append(p.gpus, g)
		} else if m, ok := migPlacement(d); ok {
			if p.migs == nil {
				p.migs = map[string]migDevice{}
			}
			p.migs[d.Name] = m
			if !slices.Contains(p.parents, m.parent) {
				p.parents = append(p.parents, m.parent)
				// A GPU in MIG mode publishes no whole device
				// (internal/node/dra Build): its first placement
				// stands for it, in publish order.
				if !slices.ContainsFunc(p.gpus, func(g draGPU) bool { return g.name == m.parent }) {
					p.gpus = append(p.gpus, draGPU{name: m.parent, product: stringAttr(d, "productName"), mig: true, migOnly: true})
				}
			}
		}
	}
	next[s] = p
	return p
}

// buildDRAView is collectDRA's pure part: the view of slices with the
// allocated state st. Of each pool only the slices of its newest
// generation count, as in the allocator (structured GatherPools).
func buildDRAView(sl []*resourceapi.ResourceSlice, st *structured.AllocatedState, parts *sliceParts) draView {
	gen := map[string]int64{}
	var mine []*resourceapi.ResourceSlice
	for _, s := range sl {
		if s.Spec.Driver != apidra.DriverName {
			continue
		}
		mine = append(mine, s)
		gen[s.Spec.Pool.Name] = max(gen[s.Spec.Pool.Name], s.Spec.Pool.Generation)
	}
	slices.SortFunc(mine, func(a, b *resourceapi.ResourceSlice) int { return strings.Compare(a.Name, b.Name) })
	if parts != nil {
		parts.mu.Lock()
		defer parts.mu.Unlock()
	}
	next := make(map[*resourceapi.ResourceSlice]*slicePart, len(mine))
	v := draView{}
	pools := map[string][]*slicePart{} // pool name -> its parts, for MIG devices
	for _, s := range mine {
		if s.Spec.Pool.Generation != gen[s.Spec.Pool.Name] {
			continue
		}
		node := s.Spec.Pool.Name
		if s.Spec.NodeName != nil && *s.Spec.NodeName != "" {
			node = *s.Spec.NodeName
		}
		dn := v[node]
		if dn == nil {
			dn = &draNode{}
			v[node] = dn
		}
		p := parts.parse(s, next)
		for _, g := range p.gpus {
			dn.addGPU(g, st, s.Spec.Pool.Name)
		}
		if p.migs != nil {
			pools[s.Spec.Pool.Name] = append(pools[s.Spec.Pool.Name], p)
		}
	}
	if parts != nil {
		parts.m = next
	}
	holdMIG(v, pools, st)
	for _, dn := range v {
		dn.key = dn.fingerprint()
	}
	return v
}

// addGPU adds GPU g of pool, with what st allocates of it, unless dn has
// it already: a GPU whose placements run on into the next slice, or (in
// NVIDIA's form, on Hopper) whose whole device follows them.
func (dn *draNode) addGPU(g draGPU, st *structured.AllocatedState, pool string) {
	for i := range dn.gpus {
		if dn.gpus[i].name == g.name {
			if !g.migOnly { // the whole device
				mig := dn.gpus[i].mig
				g.used = deviceUse(st, pool, g)
				dn.gpus[i], dn.gpus[i].mig = g, mig || g.mig
			}
			return
		}
	}
	if !g.migOnly {
		g.used = deviceUse(st, pool, g)
	}
	dn.gpus = append(dn.gpus, g)
}

// stringAttr is device d's string attribute name, "" if none.
func stringAttr(d *resourceapi.Device, name string) string {
	if a, ok := d.Attributes[resourceapi.QualifiedName(name)]; ok && a.StringValue != nil {
		return *a.StringValue
	}
	return ""
}

// wholeGPU reads a published device as a whole GPU; ok is false for any
// other device (a MIG placement, another type).
func wholeGPU(d *resourceapi.Device) (draGPU, bool) {
	if a, ok := d.Attributes[apidra.AttrType]; !ok || a.StringValue == nil || *a.StringValue != apidra.TypeGPU {
		return draGPU{}, false
	}
	if _, err := draMinor(d.Name); err != nil {
		return draGPU{}, false
	}
	g := draGPU{name: d.Name}
	if a, ok := d.Attributes[apidra.AttrProductName]; ok && a.StringValue != nil {
		g.product = *a.StringValue
	}
	for _, t := range d.Taints {
		if t.Effect == resourceapi.DeviceTaintEffectNoSchedule || t.Effect == resourceapi.DeviceTaintEffectNoExecute {
			g.tainted = true
		}
	}
	_, hasMilli := d.Capacity[apidra.CapacityMilliGPU]
	g.shared = d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations && hasMilli
	if c, ok := d.Capacity[apidra.CapacityMemory]; ok {
		g.mem = c.Value.Value()
	}
	if c, ok := d.Capacity[apidra.CapacityShares]; ok {
		g.shares = c.Value.Value()
	}
	if g.shared {
		g.plain = plainShare(d, g.mem, g.shares)
	}
	return g, true
}

// plainShare is the milli-GPU a claim that asks no capacity holds of
// shared device d (memory mem bytes, shares shares): what the defaults of
// its capacities' request policies consume, a capacity without a policy
// all of it (upstream's allocator, KEP 5075), read by
// gpuresource.SharedGPUMilliShares: all of the GPU in NVIDIA's memory
// mode (memory defaults to all), 1 in its unlimited mode (milliGPU's
// default), 1000/N in its integer mode N (shares default 1).
func plainShare(d *resourceapi.Device, mem, shares int64) int64 {
	def := func(name string) int64 {
		c, ok := d.Capacity[resourceapi.QualifiedName(name)]
		switch {
		case !ok:
			return 0
		case c.RequestPolicy != nil && c.RequestPolicy.Default != nil:
			return c.RequestPolicy.Default.Value()
		}
		return c.Value.Value()
	}
	return gpuresource.SharedGPUMilliShares(def(apidra.CapacityMilliGPU), def(apidra.CapacityMemory), mem, def(apidra.CapacityShares), shares)
}

// draMinor returns the minor of a whole GPU's device name "gpu-<minor>".
func draMinor(name string) (int, error) {
	n, err := apidra.ParseDeviceName(name)
	if err != nil || n.MIG() {
		return 0, fmt.Errorf("device %q: not gpu-<minor>", name)
	}
	return n.Minor, nil
}

// deviceUse is the milli-GPU allocated claims hold of GPU g in pool: all
// of it when it is allocated whole; of a shared GPU what its claims
// consume together, gpuresource.SharedGPUMilliShares of their milliGPU,
// memory and NVIDIA's shares (a claim that asks neither consumes
// memory's default: all of it in NVIDIA's memory mode, none in its
// unlimited and integer modes, where milliGPU's default 1 and a share
// count).
func deviceUse(st *structured.AllocatedState, pool string, g draGPU) int64 {
	if st == nil {
		return 0
	}
	id := structured.MakeDeviceID(apidra.DriverName, pool, g.name)
	if st.AllocatedDevices.Has(id) {
		return gpuresource.MilliPerGPU
	}
	if c, ok := st.AggregatedCapacity[id]; ok {
		var milli, mem, shares int64
		if q := c[apidra.CapacityMilliGPU]; q != nil {
			milli = q.Value()
		}
		if q := c[apidra.CapacityMemory]; q != nil {
			mem = q.Value()
		}
		if q := c[apidra.CapacityShares]; q != nil {
			shares = q.Value()
		}
		if milli > 0 || mem > 0 || shares > 0 {
			return gpuresource.SharedGPUMilliShares(milli, mem, g.mem, shares, g.shares)
		}
		if !g.shared {
			return gpuresource.MilliPerGPU
		}
	}
	return 0
}

// migPlacement reads a published device as a MIG placement; ok is false
// for any other device.
func migPlacement(d *resourceapi.Device) (migDevice, bool) {
	if a, ok := d.Attributes[apidra.AttrType]; !ok || a.StringValue == nil || *a.StringValue != apidra.TypeMIG {
		return migDevice{}, false
	}
	a, ok := d.Attributes[apidra.AttrProfile]
	n, err := apidra.ParseDeviceName(d.Name)
	if !ok || a.StringValue == nil || err != nil || !n.MIG() {
		return migDevice{}, false
	}
	parent := apidra.MakeDeviceName(apidra.DeviceName{Minor: n.Minor})
	return migDevice{parent: parent, profile: *a.StringValue, start: n.Start}, true
}

// holdMIG marks the GPUs whose MIG placements are published (pools: by
// pool, the slice parts with placements) as MIG on demand, and adds to
// each the placements allocated (st).
func holdMIG(v draView, pools map[string][]*slicePart, st *structured.AllocatedState) {
	gpuOf := func(pool, name string) *draGPU {
		for i, g := range v[pool].gpus {
			if g.name == name {
				return &v[pool].gpus[i]
			}
		}
		return nil
	}
	for pool, ps := range pools {
		if v[pool] == nil {
			continue // a pool whose slices name another node
		}
		for _, p := range ps {
			for _, parent := range p.parents {
				if g := gpuOf(pool, parent); g != nil {
					g.mig = true
				}
			}
		}
	}
	if st == nil {
		return
	}
	for id := range st.AllocatedDevices {
		pool := id.Pool.String()
		if id.Driver.String() != apidra.DriverName || v[pool] == nil {
			continue
		}
		for _, p := range pools[pool] {
			if m, ok := p.migs[id.Device.String()]; ok {
				if g := gpuOf(pool, m.parent); g != nil {
					g.migHeld = append(g.migHeld, m)
				}
			}
		}
	}
	for _, dn := range v {
		for i := range dn.gpus {
			slices.SortFunc(dn.gpus[i].migHeld, func(a, b migDevice) int {
				if c := strings.Compare(a.profile, b.profile); c != 0 {
					return c
				}
				return a.start - b.start
			})
		}
	}
}

// fingerprint hashes everything buildNode reads of n.
func (n *draNode) fingerprint() uint64 {
	h := fnv.New64a()
	for _, g := range n.gpus {
		fmt.Fprintf(h, "%s|%s|%t|%t|%d|%t|%v;", g.name, g.product, g.tainted, g.shared, g.used, g.mig, g.migHeld)
	}
	return h.Sum64() | 1 // never 0, which no view has
}
