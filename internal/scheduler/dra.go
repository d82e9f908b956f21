// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	fwk "k8s.io/kube-scheduler/framework"
)

// The DRA devices the placement core models: those of gpuplane's (and
// NVIDIA's) driver, as internal/node/dra Build publishes them: one pool per
// node, named after it; whole GPUs "gpu-<minor>" with attribute type "gpu"
// and productName; MIG placements "gpu-<minor>-mig-..." of type "mig";
// shared GPUs (--dra-shares) with the consumable capacity milliGPU.
const (
	draDriver        = "gpu.nvidia.com"
	draGPUClass      = "gpu.nvidia.com" // the chart's DeviceClass of whole GPUs
	draMilliGPU      = resourceapi.QualifiedName("milliGPU")
	draTypeGPU       = "gpu"
	draTypeMIG       = "mig"
	draGPUNamePrefix = "gpu-"
)

// draGPU is one whole GPU a node's slices publish.
type draGPU struct {
	name    string // the device name, gpu-<minor>
	product string // its productName attribute
	tainted bool   // a NoSchedule or NoExecute device taint: never chosen
	shared  bool   // allowMultipleAllocations with milliGPU (--dra-shares)
	used    int64  // milli-GPU held by allocated claims (1000: whole)
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
func collectDRA(m fwk.SharedDRAManager) (draView, error) {
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
	return buildDRAView(sl, st), nil
}

// buildDRAView is collectDRA's pure part: the view of slices with the
// allocated state st. Of each pool only the slices of its newest
// generation count, as in the allocator (structured GatherPools).
func buildDRAView(sl []*resourceapi.ResourceSlice, st *structured.AllocatedState) draView {
	gen := map[string]int64{}
	var mine []*resourceapi.ResourceSlice
	for _, s := range sl {
		if s.Spec.Driver != draDriver {
			continue
		}
		mine = append(mine, s)
		gen[s.Spec.Pool.Name] = max(gen[s.Spec.Pool.Name], s.Spec.Pool.Generation)
	}
	slices.SortFunc(mine, func(a, b *resourceapi.ResourceSlice) int { return strings.Compare(a.Name, b.Name) })
	v := draView{}
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
		for i := range s.Spec.Devices {
			if g, ok := wholeGPU(&s.Spec.Devices[i]); ok {
				g.used = deviceUse(st, s.Spec.Pool.Name, g.name, g.shared)
				dn.gpus = append(dn.gpus, g)
			}
		}
	}
	if st != nil {
		holdMIG(v, st)
	}
	for _, dn := range v {
		dn.key = dn.fingerprint()
	}
	return v
}

// wholeGPU reads a published device as a whole GPU; ok is false for any
// other device (a MIG placement, another type).
func wholeGPU(d *resourceapi.Device) (draGPU, bool) {
	if a, ok := d.Attributes["type"]; !ok || a.StringValue == nil || *a.StringValue != draTypeGPU {
		return draGPU{}, false
	}
	if _, err := draMinor(d.Name); err != nil {
		return draGPU{}, false
	}
	g := draGPU{name: d.Name}
	if a, ok := d.Attributes["productName"]; ok && a.StringValue != nil {
		g.product = *a.StringValue
	}
	for _, t := range d.Taints {
		if t.Effect == resourceapi.DeviceTaintEffectNoSchedule || t.Effect == resourceapi.DeviceTaintEffectNoExecute {
			g.tainted = true
		}
	}
	_, hasMilli := d.Capacity[draMilliGPU]
	g.shared = d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations && hasMilli
	return g, true
}

// draMinor returns the minor of a whole GPU's device name "gpu-<minor>".
func draMinor(name string) (int, error) {
	s, ok := strings.CutPrefix(name, draGPUNamePrefix)
	if !ok {
		return 0, fmt.Errorf("device %q: not gpu-<minor>", name)
	}
	m, err := strconv.Atoi(s)
	if err != nil || m < 0 || strconv.Itoa(m) != s {
		return 0, fmt.Errorf("device %q: not gpu-<minor>", name)
	}
	return m, nil
}

// deviceUse is the milli-GPU allocated claims hold of device name in pool:
// all of it when it is allocated whole; of a shared GPU the milliGPU its
// claims consume (a claim that asks none consumes the default, all).
func deviceUse(st *structured.AllocatedState, pool, name string, shared bool) int64 {
	if st == nil {
		return 0
	}
	id := structured.MakeDeviceID(draDriver, pool, name)
	if st.AllocatedDevices.Has(id) {
		return 1000
	}
	if c, ok := st.AggregatedCapacity[id]; ok {
		if q := c[draMilliGPU]; q != nil {
			return min(q.Value(), 1000)
		}
		if !shared {
			return 1000
		}
	}
	return 0
}

// holdMIG marks a GPU with an allocated MIG device of it
// ("gpu-<minor>-mig-...") as used whole: the core does not model MIG
// placements on DRA nodes, so no whole GPU or share is placed there.
func holdMIG(v draView, st *structured.AllocatedState) {
	for id := range st.AllocatedDevices {
		if id.Driver.String() != draDriver {
			continue
		}
		dn := v[id.Pool.String()]
		if dn == nil {
			continue
		}
		parent, _, ok := strings.Cut(id.Device.String(), "-"+draTypeMIG+"-")
		if !ok {
			continue
		}
		for i := range dn.gpus {
			if dn.gpus[i].name == parent {
				dn.gpus[i].used = 1000
			}
		}
	}
}

// fingerprint hashes everything buildNode reads of n.
func (n *draNode) fingerprint() uint64 {
	h := fnv.New64a()
	for _, g := range n.gpus {
		fmt.Fprintf(h, "%s|%s|%t|%t|%d;", g.name, g.product, g.tainted, g.shared, g.used)
	}
	return h.Sum64() | 1 // never 0, which no view has
}
