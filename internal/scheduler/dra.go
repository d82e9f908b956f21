// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
}

// equal reports whether n and o are the same view of a node: every field
// of every GPU, in order.
func (n *draNode) equal(o *draNode) bool {
	return slices.EqualFunc(n.gpus, o.gpus, draGPU.equal)
}

// equal reports whether g and h agree in every field.
func (g draGPU) equal(h draGPU) bool {
	return g.name == h.name && g.product == h.product && g.tainted == h.tainted && g.shared == h.shared &&
		g.mem == h.mem && g.shares == h.shares && g.plain == h.plain && g.used == h.used &&
		g.mig == h.mig && g.migOnly == h.migOnly && slices.Equal(g.migHeld, h.migHeld)
}

// draView is the DRA state of every node that has a pool of
// gpu.nvidia.com, by node name.
type draView map[string]*draNode

// readDRA reads the DRA state from the framework's shared DRA manager:
// the ResourceSlices with device taint rules applied, and the allocated
// devices of all claims, in-flight allocations included
// (GatherAllocatedState, which DynamicResources' Filter reads too).
func readDRA(m fwk.SharedDRAManager) ([]*resourceapi.ResourceSlice, *structured.AllocatedState, error) {
	sl, err := m.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return nil, nil, fmt.Errorf("listing ResourceSlices: %w", err)
	}
	var st *structured.AllocatedState
	for range 5 {
		// A concurrent change makes the tracker ask for a retry.
		if st, err = m.ResourceClaims().GatherAllocatedState(); err == nil {
			break
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("gathering allocated devices: %w", err)
	}
	return sl, st, nil
}

// slicePart is what one ResourceSlice publishes of the devices the core
// models: its whole GPUs (without use) and MIG placements by name.
type slicePart struct {
	gpus []draGPU
	migs map[string]migDevice
	// parents are the GPUs (device names) with placements in migs.
	parents []string
}

// equal reports whether p and q publish the same GPUs and placements.
func (p *slicePart) equal(q *slicePart) bool {
	return slices.EqualFunc(p.gpus, q.gpus, draGPU.equal) && maps.Equal(p.migs, q.migs) && slices.Equal(p.parents, q.parents)
}

// parseSlice reads what slice s publishes of the devices the core models.
func parseSlice(s *resourceapi.ResourceSlice) *slicePart {
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
	return p
}

// buildDRAView is the view of slices sl with the allocated state st, every
// node built afresh (draCache.update builds the same view incrementally;
// this is its reference in tests). Of each pool only the slices of its
// newest generation count, as in the allocator (structured GatherPools).
func buildDRAView(sl []*resourceapi.ResourceSlice, st *structured.AllocatedState) draView {
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
		p := parseSlice(s)
		for _, g := range p.gpus {
			dn.addGPU(g, st, s.Spec.Pool.Name)
		}
		if p.migs != nil {
			pools[s.Spec.Pool.Name] = append(pools[s.Spec.Pool.Name], p)
		}
	}
	holdMIG(v, pools, st)
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
		milli, mem, shares := quantity(c, apidra.CapacityMilliGPU), quantity(c, apidra.CapacityMemory), quantity(c, apidra.CapacityShares)
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
			sortMIG(dn.gpus[i].migHeld)
		}
	}
}

// sortMIG orders placements by profile, then start slot.
func sortMIG(m []migDevice) {
	slices.SortFunc(m, func(a, b migDevice) int {
		if c := strings.Compare(a.profile, b.profile); c != 0 {
			return c
		}
		return a.start - b.start
	})
}
