// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package dra is the node agent's DRA kubelet plugin: it publishes the
// node's GPUs as ResourceSlices of driver gpu.nvidia.com, in the form
// NVIDIA's DRA driver (sigs.k8s.io/dra-driver-nvidia-gpu,
// cmd/gpu-kubelet-plugin) gives them, and prepares and unprepares the
// ResourceClaims the scheduler allocated on them, over
// k8s.io/dynamic-resource-allocation/kubeletplugin. The names it publishes
// (driver, attributes, capacities, counters, device names) are api/dra's,
// which every reader of them uses too. See docs/dra.md.
//
// This file is the ResourceSlice content: a pure function of the
// discovered node (Build).
package dra

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/deviceattribute"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// nvmlProfileIDs maps NVML's GPU instance profile constants
// (gpu.MIGProfile.GIProfileID) to the profile IDs nvidia-smi mig -lgip
// lists (nvmlGpuInstanceProfileInfo_t.id), the same on every GPU of the
// table: NVIDIA's driver names MIG devices with them.
var nvmlProfileIDs = map[int]int{
	nvml.GPU_INSTANCE_PROFILE_1_SLICE:      19,
	nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: 20,
	nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: 15,
	nvml.GPU_INSTANCE_PROFILE_2_SLICE:      14,
	nvml.GPU_INSTANCE_PROFILE_3_SLICE:      9,
	nvml.GPU_INSTANCE_PROFILE_4_SLICE:      5,
	nvml.GPU_INSTANCE_PROFILE_7_SLICE:      0,
}

// Options shape the ResourceSlice content.
type Options struct {
	// Shares publishes each GPU without MIG mode with
	// allowMultipleAllocations: claims share it by memory (1Mi steps) and
	// by compute (milliGPU, 1..1000); a claim that asks for neither takes
	// all of both. ShareMode adds NVIDIA's other modes.
	Shares bool
	// ShareMode is how a shared GPU is published (the zero value:
	// NVIDIA's "memory" mode, as above).
	ShareMode ShareMode
	// MIG publishes every MIG placement of the MIG-enabled GPUs, to be
	// created on prepare: the backend implements device.MIGManager.
	// Without it MIG-enabled GPUs are not published.
	MIG bool
	// Static are, by GPU UUID, the live MIG devices that exist outside
	// DRA (made by an administrator or a MIG manager, or a leftover): each
	// whose compute instance spans its GPU instance is published as it
	// is, with its UUID (NVIDIA's driver's static MIG devices), and the
	// placements overlapping any are not published.
	Static map[string][]device.MIGInstance
	// Offers are, by GPU UUID, the MIG placements each MIG-enabled GPU
	// says it can make (device.MIGOfferer): of the table's placements
	// only those it offers are published. A GPU absent: all the table's.
	Offers map[string]device.MIGOffer
	// PCIeRoot returns the PCIe root complex of a PCI bus ID in
	// resource.kubernetes.io/pcieRoot's form ("pci0000:00"); nil or an
	// error: no pcieRoot attribute.
	PCIeRoot func(busID string) (string, error)
	// Rank, with MIG, orders the MIG devices (orderMIG): each profile's
	// free placements in the order the placement core ranks them against
	// this target workload (placement.TargetWorkload.RankMIG), best
	// first, then the profile's other placements in the table's order;
	// the other devices keep their places. Nil: the table's order.
	Rank *placement.TargetWorkload
	// Held are, by GPU UUID, the MIG devices of the claims prepared (the
	// checkpoint's): with Rank, their placements are not free.
	Held map[string][]PreparedMIG
}

// Entry is what a published device stands for.
type Entry struct {
	// GPU is the GPU's index in device.Node.GPUs.
	GPU int
	// MIG is the MIG placement; nil for the whole GPU.
	MIG *Placement
	// Shared reports allowMultipleAllocations.
	Shared bool
}

// Placement is a MIG device to create: a GPU instance profile of the
// internal/gpu table at a placement.
type Placement struct {
	// GIProfile is the table's profile name, e.g. "1g.10gb".
	GIProfile string
	// Profile is the MIG device's name by NVIDIA's rule on this GPU
	// (device.MIGProfileName), its "profile" attribute.
	Profile string
	device.MIGPlacement
	// UUID is set for a MIG device that exists, made outside DRA: it is
	// prepared as it is, never created or destroyed.
	UUID string
}

// Resources is the ResourceSlice content of a node.
type Resources struct {
	// Devices are ordered by GPU, then the MIG placements by profile
	// (the table's order: smaller first) and start, or with Options.Rank
	// the MIG devices by profile and rank (orderMIG): the scheduler takes
	// the first device that fits.
	Devices []resourceapi.Device
	// Counters has one counter set per MIG-enabled GPU,
	// "gpu-<minor>-counter-set".
	Counters []resourceapi.CounterSet
	// Entries maps device names to what they stand for.
	Entries map[string]Entry
}

// Build returns the ResourceSlice content of node n: a device "gpu-<minor>"
// per GPU without MIG mode; with o.MIG, on every MIG-enabled GPU of the
// MIG table, a device per MIG placement
// "gpu-<minor>-mig-<profile>-<profile ID>-<start>", as NVIDIA's driver
// names them, consuming the GPU's counter set (its memory slots, compute
// slices, memory and SMs) so that no two allocated MIG devices overlap.
// A MIG-enabled GPU has no whole-GPU device: CUDA sees no device on it
// but its MIG devices, and gpuplane never changes MIG mode (NVIDIA's
// driver publishes no whole GPU either for a MIG-enabled GPU whose mode
// it cannot switch without a reset, nvlib.go isDynamicMIGCapable). Its
// live MIG devices made outside DRA (o.Static) are published with their
// UUIDs under their placement's name, as NVIDIA's driver publishes static
// MIG devices. In the table's order (GPU, profile, start) unless o.Rank
// ranks the MIG devices (orderMIG). Errors name the GPU.
func Build(n device.Node, o Options) (Resources, error) {
	r := Resources{Entries: map[string]Entry{}}
	sets := map[string]map[string]resourceapi.Counter{} // by model
	for i, g := range n.GPUs {
		if g.MIGEnabled && !o.MIG {
			continue
		}
		attrs, err := gpuAttributes(n, g, o)
		if err != nil {
			return r, fmt.Errorf("GPU %d (%s): %w", g.Index, g.UUID, err)
		}
		if g.MIGEnabled {
			if err := r.addMIG(i, g, attrs, o.Static[g.UUID], o.Offers[g.UUID], sets); err != nil {
				return r, fmt.Errorf("GPU %d (%s): %w", g.Index, g.UUID, err)
			}
			continue
		}
		whole := resourceapi.Device{
			Name:       gpuName(g),
			Attributes: attrs,
			Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{apidra.CapacityMemory: bytesCap(g.MemoryMiB)},
		}
		entry := Entry{GPU: i}
		if o.Shares {
			share(&whole, o.ShareMode)
			entry.Shared = true
		}
		r.Devices = append(r.Devices, whole)
		r.Entries[whole.Name] = entry
	}
	if o.MIG && o.Rank != nil {
		r.Devices = orderMIG(r.Devices, r.Entries, n, rankMIG(o.Rank, n, o.Static, o.Held))
	}
	return r, nil
}

// addMIG adds the devices of MIG-enabled GPU g (n.GPUs[i], attributes
// attrs): its counter set, each live MIG device made outside DRA
// (static) whose compute instance spans its GPU instance, with its UUID,
// and every placement that overlaps none of static and that the GPU
// offers (off; nil: every placement of the table). It publishes no
// whole GPU: MIG mode stays on (gpuplane never changes it), and CUDA sees
// no device on a MIG-mode GPU but its MIG devices; the 7g placement is
// the GPU's full-size device. sets caches the counters by model.
func (r *Resources) addMIG(i int, g device.GPU, attrs map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, static []device.MIGInstance, off device.MIGOffer, sets map[string]map[string]resourceapi.Counter) error {
	profiles := gpu.MIGProfiles(g.Model)
	if len(profiles) == 0 {
		return fmt.Errorf("MIG is enabled but model %q has no MIG table", g.Model)
	}
	set := apidra.CounterSetName(g.Minor)
	all, ok := sets[g.Model]
	if !ok {
		all = gpuCounters(g.Model, profiles)
		sets[g.Model] = all
	}
	r.Counters = append(r.Counters, resourceapi.CounterSet{Name: set, Counters: copyCounters(all)})
	busy := make([]device.MIGPlacement, len(static))
	for j, in := range static {
		busy[j] = in.Placement
	}
	for _, p := range profiles {
		pname, err := device.MIGProfileName(p.GIProfileID, device.CIProfiles[p.ComputeSlices], p.MemoryMiB, g.MemoryMiB)
		if err != nil {
			return err
		}
		for _, start := range p.Starts {
			if off != nil && !slices.Contains(off[p.GIProfileID], start) {
				continue
			}
			pl := Placement{GIProfile: p.Name, Profile: pname, MIGPlacement: device.MIGPlacement{Start: start, Size: p.Size}}
			d := resourceapi.Device{
				Name:       migName(g, pl, p),
				Attributes: migAttributes(attrs, g, pname),
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					apidra.CapacityMemory:          bytesCap(p.MemoryMiB),
					apidra.CapacityMultiprocessors: intCap(int64(p.Multiprocessors)),
				},
			}
			if in, ok := staticAt(static, p.Name, start); ok {
				// NVIDIA's static MIG device (deviceinfo.go,
				// MigDeviceInfo.GetDevice): its UUID, no counters.
				pl.UUID, pl.Profile = in.UUID, in.Profile
				d.Attributes[apidra.AttrUUID] = resourceapi.DeviceAttribute{StringValue: ptr.To(in.UUID)}
				d.Attributes[apidra.AttrProfile] = resourceapi.DeviceAttribute{StringValue: ptr.To(in.Profile)}
			} else if overlapsAny(pl.MIGPlacement, busy) {
				continue
			} else {
				d.ConsumesCounters = []resourceapi.DeviceCounterConsumption{{CounterSet: set, Counters: migCounters(p, start)}}
			}
			r.Devices = append(r.Devices, d)
			r.Entries[d.Name] = Entry{GPU: i, MIG: &pl}
		}
	}
	return nil
}

// OfferDiff compares the MIG table's placements for model with what a
// GPU offers (the plugin logs it, hack/gpucheck prints it): a line for
// each placement of the table the GPU does not offer (not published),
// and for each profile or start the GPU offers that the table lacks (not
// published either: the table has no figures for it).
func OfferDiff(model string, off device.MIGOffer) []string {
	var out []string
	known := map[int]bool{}
	for _, p := range gpu.MIGProfiles(model) {
		known[p.GIProfileID] = true
		for _, start := range p.Starts {
			if !slices.Contains(off[p.GIProfileID], start) {
				out = append(out, fmt.Sprintf("%s at memory slot %d: in the MIG table, not offered by the GPU", p.Name, start))
			}
		}
		for _, start := range off[p.GIProfileID] {
			if !slices.Contains(p.Starts, start) {
				out = append(out, fmt.Sprintf("%s at memory slot %d: offered by the GPU, not in the MIG table", p.Name, start))
			}
		}
	}
	ids := slices.Sorted(maps.Keys(off))
	for _, id := range ids {
		if !known[id] {
			out = append(out, fmt.Sprintf("GPU instance profile %d (NVML's constant): offered by the GPU, not in the MIG table", id))
		}
	}
	return out
}

// staticAt returns the MIG device of static at the placement of GPU
// instance profile giProfile starting at start whose compute instance
// spans its GPU instance (a MIG device NVIDIA's device plugin serves,
// device.MIGResourceProfile); ok is false for none.
func staticAt(static []device.MIGInstance, giProfile string, start int) (device.MIGInstance, bool) {
	for _, in := range static {
		if in.GIProfile == giProfile && in.Placement.Start == start && in.UUID != "" {
			if _, err := device.MIGResourceProfile(in.Profile); err == nil {
				return in, true
			}
		}
	}
	return device.MIGInstance{}, false
}

// overlapsAny reports whether p overlaps one of ps.
func overlapsAny(p device.MIGPlacement, ps []device.MIGPlacement) bool {
	for _, q := range ps {
		if p.Start < q.Start+q.Size && q.Start < p.Start+p.Size {
			return true
		}
	}
	return false
}

// gpuName is NVIDIA's device name of a whole GPU.
func gpuName(g device.GPU) string { return apidra.MakeDeviceName(apidra.DeviceName{Minor: g.Minor}) }

// migName is NVIDIA's name of a MIG placement (apidra.MakeDeviceName):
// its profile, NVML's profile ID and the placement's start.
func migName(g device.GPU, pl Placement, p gpu.MIGProfile) string {
	return apidra.MakeDeviceName(apidra.DeviceName{Minor: g.Minor, Profile: pl.Profile, ProfileID: nvmlProfileIDs[p.GIProfileID], Start: pl.Start})
}

// gpuCounters is a MIG-enabled GPU's counter set: every memory slot, the
// compute slices, and the most memory and SMs that MIG devices of the
// table use together: of one device (NVIDIA's driver's counter, the 7g
// profile's with NVML's figures) or of a valid layout (gpu.MIGLayouts),
// whichever is more, so that the memory and SM counters never refuse a
// layout NVML allows (the table's H200 4g.71gb and 3g.71gb together have
// more memory than its 7g.141gb). The memory slots and compute slices
// are what keeps MIG devices apart.
func gpuCounters(model string, profiles []gpu.MIGProfile) map[string]resourceapi.Counter {
	var mem, sm int64
	for _, p := range profiles {
		mem = max(mem, p.MemoryMiB)
		sm = max(sm, int64(p.Multiprocessors))
	}
	for _, l := range gpu.MIGLayouts(model) {
		var lm, ls int64
		for k, c := range l {
			lm += int64(c) * profiles[k].MemoryMiB
			ls += int64(c) * int64(profiles[k].Multiprocessors)
		}
		mem, sm = max(mem, lm), max(sm, ls)
	}
	c := map[string]resourceapi.Counter{
		apidra.CounterMemory:          {Value: bytesQ(mem)},
		apidra.CounterMultiprocessors: {Value: intQ(sm)},
		apidra.CounterComputeSlices:   {Value: intQ(apidra.MIGComputeSlices)},
	}
	for i := 0; i < apidra.MemorySlices; i++ {
		c[apidra.MemorySliceCounter(i)] = resourceapi.Counter{Value: intQ(1)}
	}
	return c
}

// migCounters is what a MIG placement consumes of its GPU's counter set.
func migCounters(p gpu.MIGProfile, start int) map[string]resourceapi.Counter {
	c := map[string]resourceapi.Counter{
		apidra.CounterMemory:          {Value: bytesQ(p.MemoryMiB)},
		apidra.CounterMultiprocessors: {Value: intQ(int64(p.Multiprocessors))},
		apidra.CounterComputeSlices:   {Value: intQ(int64(p.ComputeSlices))},
	}
	for i := start; i < start+p.Size; i++ {
		c[apidra.MemorySliceCounter(i)] = resourceapi.Counter{Value: intQ(1)}
	}
	return c
}

func copyCounters(c map[string]resourceapi.Counter) map[string]resourceapi.Counter {
	out := make(map[string]resourceapi.Counter, len(c))
	for k, v := range c {
		out[k] = resourceapi.Counter{Value: v.Value.DeepCopy()}
	}
	return out
}

// share makes a whole GPU shareable, as NVIDIA's driver does with
// --consumable-shares (sigs.k8s.io/dra-driver-nvidia-gpu, commit
// 95932046, cmd/gpu-kubelet-plugin/consumable_shares.go
// applyConsumableShares): memory in 1Mi steps (its maximum rounded down
// to a step), and gpuplane's compute share, milliGPU 1..1000, defaulting
// to 1. In mode "memory" (m's zero value) memory defaults to all of it,
// from 1Mi: a claim that asks neither holds the whole GPU (all its
// memory), one that asks memory alone, as NVIDIA's driver's memory
// shares do, shares by memory, and one that asks milliGPU alone holds
// all the memory: a compute share asks both. In modes unlimited and
// integer memory defaults to 0, from 0, as NVIDIA's; the integer mode
// adds NVIDIA's "shares", m.Shares of them, 1 by default. The share a
// claim holds is apiresource.SharedGPUMilliShares of what it consumes.
func share(d *resourceapi.Device, m ShareMode) {
	d.AllowMultipleAllocations = ptr.To(true)
	mem := d.Capacity[apidra.CapacityMemory]
	step := resource.MustParse("1Mi")
	maxMem := resource.NewQuantity(mem.Value.Value()/step.Value()*step.Value(), resource.BinarySI)
	def, low := maxMem.DeepCopy(), step.DeepCopy()
	if m.Unlimited || m.Shares > 0 {
		def, low = intQ(0), intQ(0)
	}
	d.Capacity[apidra.CapacityMemory] = resourceapi.DeviceCapacity{
		Value: *maxMem,
		RequestPolicy: &resourceapi.CapacityRequestPolicy{
			Default:    ptr.To(def),
			ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr.To(low), Max: ptr.To(maxMem.DeepCopy()), Step: ptr.To(step.DeepCopy())},
		},
	}
	d.Capacity[apidra.CapacityMilliGPU] = countCap(device.MilliUnits)
	if m.Shares > 0 {
		d.Capacity[apidra.CapacityShares] = countCap(m.Shares)
	}
}

// countCap is a capacity of n units, 1..n in steps of 1, defaulting to 1.
func countCap(n int64) resourceapi.DeviceCapacity {
	full := intQ(n)
	return resourceapi.DeviceCapacity{
		Value: full,
		RequestPolicy: &resourceapi.CapacityRequestPolicy{
			Default:    ptr.To(intQ(1)),
			ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr.To(intQ(1)), Max: ptr.To(full.DeepCopy()), Step: ptr.To(intQ(1))},
		},
	}
}

// gpuAttributes are a whole GPU's attributes, NVIDIA's driver's.
func gpuAttributes(n device.Node, g device.GPU, o Options) (map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, error) {
	cc := fmt.Sprintf("%d.%d.0", g.ComputeMajor, g.ComputeMinor)
	drv, err := semver(n.DriverVersion)
	if err != nil {
		return nil, fmt.Errorf("driver version: %w", err)
	}
	cuda := fmt.Sprintf("%d.%d.0", n.CUDADriverMajor, n.CUDADriverMinor)
	a := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		apidra.AttrType:         {StringValue: ptr.To(apidra.TypeGPU)},
		apidra.AttrUUID:         {StringValue: ptr.To(g.UUID)},
		apidra.AttrProductName:  {StringValue: ptr.To(g.ProductName)},
		"brand":                 {StringValue: ptr.To(brandOf(g))},
		"architecture":          {StringValue: ptr.To(Architecture(g.ComputeMajor, g.ComputeMinor))},
		"cudaComputeCapability": {VersionValue: ptr.To(cc)},
		"driverVersion":         {VersionValue: ptr.To(drv)},
		"cudaDriverVersion":     {VersionValue: ptr.To(cuda)},
	}
	if bdf, ok := PCIBusID(g.PCIBusID); ok {
		a[deviceattribute.StandardDeviceAttributePCIBusID] = resourceapi.DeviceAttribute{StringValue: ptr.To(bdf)}
		if o.PCIeRoot != nil {
			if root, err := o.PCIeRoot(bdf); err == nil && root != "" {
				a[deviceattribute.StandardDeviceAttributePCIeRoot] = resourceapi.DeviceAttribute{StringValue: ptr.To(root)}
			}
		}
	}
	if g.NUMANode >= 0 {
		a[deviceattribute.StandardDeviceAttributeNUMANode] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(g.NUMANode))}
	}
	return a, nil
}

// migAttributes are a MIG placement's attributes, from its GPU's: NVIDIA's
// driver's, with the parent's UUID instead of a UUID (the MIG device has
// none before it is created).
func migAttributes(gpuAttrs map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, g device.GPU, profile string) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	a := make(map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, len(gpuAttrs)+1)
	for k, v := range gpuAttrs {
		a[k] = v
	}
	delete(a, apidra.AttrUUID)
	a[apidra.AttrType] = resourceapi.DeviceAttribute{StringValue: ptr.To(apidra.TypeMIG)}
	a[apidra.AttrParentUUID] = resourceapi.DeviceAttribute{StringValue: ptr.To(g.UUID)}
	a[apidra.AttrProfile] = resourceapi.DeviceAttribute{StringValue: ptr.To(profile)}
	return a
}

// brandOf is the "brand" attribute: NVML's brand as go-nvlib names it
// (GetBrandAsString), as NVIDIA's driver publishes it; "Unknown"
// (go-nvlib's name of NVML_BRAND_UNKNOWN) when the backend does not tell.
func brandOf(g device.GPU) string {
	if g.Brand == "" {
		return "Unknown"
	}
	return g.Brand
}

// Architecture names a compute capability's architecture as go-nvlib's
// GetArchitectureAsString does, e.g. "Ampere" for 8.0, "Ada Lovelace"
// for 8.9; "Unknown" when it knows none.
func Architecture(major, minor int) string {
	switch {
	case major == 6:
		return "Pascal"
	case major == 7 && minor < 5:
		return "Volta"
	case major == 7:
		return "Turing"
	case major == 8 && minor == 9:
		return "Ada Lovelace"
	case major == 8:
		return "Ampere"
	case major == 9:
		return "Hopper"
	case major == 10 || major == 12:
		return "Blackwell"
	}
	return "Unknown"
}

// semver turns a driver version ("550.54.15", "535.104.05", "560.28")
// into a semantic version, as the version attributes need: three numbers
// without leading zeros.
func semver(v string) (string, error) {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", fmt.Errorf("%q is not MAJOR.MINOR[.PATCH]", v)
	}
	out := make([]string, 3)
	for i := range out {
		out[i] = "0"
		if i < len(parts) {
			n, err := strconv.ParseUint(parts[i], 10, 32)
			if err != nil {
				return "", fmt.Errorf("%q is not MAJOR.MINOR[.PATCH]", v)
			}
			out[i] = strconv.FormatUint(n, 10)
		}
	}
	return strings.Join(out, "."), nil
}

// PCIBusID turns NVML's PCI bus ID ("00000000:07:00.0") into the standard
// attribute's form ("0000:07:00.0", lower case); ok is false for anything
// else.
func PCIBusID(nvmlID string) (string, bool) {
	id := strings.ToLower(nvmlID)
	if dom, rest, ok := strings.Cut(id, ":"); ok && len(dom) == 8 && strings.HasPrefix(dom, "0000") {
		id = dom[4:] + ":" + rest
	}
	if _, err := deviceattribute.GetPCIBusIDAttribute(id); err != nil {
		return "", false
	}
	return id, true
}

func bytesQ(mib int64) resource.Quantity { return *resource.NewQuantity(mib<<20, resource.BinarySI) }
func intQ(n int64) resource.Quantity     { return *resource.NewQuantity(n, resource.DecimalSI) }
func bytesCap(mib int64) resourceapi.DeviceCapacity {
	return resourceapi.DeviceCapacity{Value: bytesQ(mib)}
}
func intCap(n int64) resourceapi.DeviceCapacity { return resourceapi.DeviceCapacity{Value: intQ(n)} }

// Limits of one ResourceSlice (k8s.io/api/resource/v1).
const (
	maxDevices         = resourceapi.ResourceSliceMaxDevices
	maxAdvancedDevices = resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures
	maxCounterSets     = resourceapi.ResourceSliceMaxCounterSets
)

// Pool splits the content into the slices of one pool, within the API's
// limits: counter sets in slices of their own (a slice has devices or
// counter sets, not both), at most 8 a slice; devices at most 64 a slice
// when any consumes counters or has taints, else 128.
func (r Resources) Pool() resourceslice.Pool {
	var p resourceslice.Pool
	for i := 0; i < len(r.Counters); i += maxCounterSets {
		p.Slices = append(p.Slices, resourceslice.Slice{SharedCounters: r.Counters[i:min(i+maxCounterSets, len(r.Counters))]})
	}
	limit := maxDevices
	for _, d := range r.Devices {
		if len(d.ConsumesCounters) > 0 || len(d.Taints) > 0 {
			limit = maxAdvancedDevices
		}
	}
	for i := 0; i < len(r.Devices); i += limit {
		p.Slices = append(p.Slices, resourceslice.Slice{Devices: r.Devices[i:min(i+limit, len(r.Devices))]})
	}
	if len(p.Slices) == 0 {
		p.Slices = []resourceslice.Slice{{}}
	}
	return p
}
