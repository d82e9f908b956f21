// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// The DRA objects of a snapshot (`kubectl get
// nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o json`,
// resource.k8s.io/v1; a request's fields at its top, as v1beta1 writes
// them, are read too), as far as the reader needs them: the GPUs that
// driver gpu.nvidia.com publishes (gpuplane's and NVIDIA's DRA driver,
// internal/node/dra Build: a device "gpu-<minor>" of type gpu per GPU, each
// MIG placement of a MIG-mode GPU a device of type mig consuming the GPU's
// counters, a shareable GPU with allowMultipleAllocations and capacity
// milliGPU), the devices AMD's and Intel's Gaudi DRA drivers publish
// (gpu.amd.com, gaudi.intel.com: addVendor) and the claims that ask for
// them.

// draAttr is a device attribute; the reader reads string ones only.
type draAttr struct {
	String *string `json:"string"`
}

type draDevice struct {
	Name       string             `json:"name"`
	Attributes map[string]draAttr `json:"attributes"`
	Capacity   map[string]struct {
		Value string `json:"value"`
	} `json:"capacity"`
	AllowMultipleAllocations *bool             `json:"allowMultipleAllocations"`
	ConsumesCounters         []json.RawMessage `json:"consumesCounters"`
	Taints                   []struct {
		Key    string `json:"key"`
		Effect string `json:"effect"`
	} `json:"taints"`
}

// attr returns the string attribute name of d, unqualified or qualified
// by driver gpu.nvidia.com's domain ("gpu.nvidia.com/productName").
func (d *draDevice) attr(name string) string { return d.attrOf(apidra.DriverName, name) }

// attrOf returns the string attribute name of d, unqualified or qualified
// by driver's domain ("gpu.amd.com/productName"); "" if it has none.
func (d *draDevice) attrOf(driver, name string) string {
	for _, k := range []string{name, driver + "/" + name} {
		if a, ok := d.Attributes[k]; ok && a.String != nil {
			return *a.String
		}
	}
	return ""
}

type draSlice struct {
	where    string // file:line: path, for warnings
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Driver   string `json:"driver"`
		NodeName string `json:"nodeName"`
		Pool     struct {
			Name string `json:"name"`
		} `json:"pool"`
		Devices []draDevice `json:"devices"`
	} `json:"spec"`
}

type draSelector struct {
	CEL *struct {
		Expression string `json:"expression"`
	} `json:"cel"`
}

// draExact is one request's devices (v1 exactly, or a v1beta1 request).
type draExact struct {
	DeviceClassName string        `json:"deviceClassName"`
	Selectors       []draSelector `json:"selectors"`
	AllocationMode  string        `json:"allocationMode"`
	Count           *int64        `json:"count"`
	Capacity        *struct {
		Requests map[string]string `json:"requests"`
	} `json:"capacity"`
	// AdminAccess asks the devices for monitoring (KEP-5018): they are
	// given beside their workloads and consume nothing.
	AdminAccess *bool `json:"adminAccess"`
}

type draRequest struct {
	Name           string     `json:"name"`
	Exactly        *draExact  `json:"exactly"`
	FirstAvailable []draExact `json:"firstAvailable"`
	draExact
}

type draClaimSpec struct {
	Devices struct {
		Requests    []draRequest      `json:"requests"`
		Constraints []json.RawMessage `json:"constraints"`
	} `json:"devices"`
}

type draResult struct {
	Request          string            `json:"request"`
	Driver           string            `json:"driver"`
	Pool             string            `json:"pool"`
	Device           string            `json:"device"`
	ConsumedCapacity map[string]string `json:"consumedCapacity"`
	// AdminAccess marks a device given for monitoring (KEP-5018): it is
	// not held (heldResults).
	AdminAccess *bool `json:"adminAccess"`
}

// heldResults returns the results of rs that hold their device: all but
// those of admin access, which upstream's scheduler counts as no
// allocation (k8s.io/kubernetes v1.37.2
// pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go:
// "Is not considered as allocated").
func heldResults(rs []draResult) []draResult {
	var out []draResult
	for _, r := range rs {
		if r.AdminAccess == nil || !*r.AdminAccess {
			out = append(out, r)
		}
	}
	return out
}

type draClaim struct {
	Spec   draClaimSpec `json:"spec"`
	Status struct {
		Allocation *struct {
			Devices struct {
				Results []draResult `json:"results"`
			} `json:"devices"`
		} `json:"allocation"`
	} `json:"status"`
}

type draTemplate struct {
	Spec struct {
		Spec draClaimSpec `json:"spec"`
	} `json:"spec"`
}

type draClass struct {
	Spec struct {
		Selectors []draSelector `json:"selectors"`
		// ExtendedResourceName is the extended resource the class
		// serves (KEP-5004): a pod asking it on a node no device plugin
		// advertises it on gets a claim of this class.
		ExtendedResourceName string `json:"extendedResourceName"`
	} `json:"spec"`
}

// draItem is where a DRA object was read: its path and line, for
// warnings.
type draItem struct {
	where string
	claim draClaim
}

// draObjects are a snapshot's DRA objects by name (namespace/name for the
// namespaced ones).
type draObjects struct {
	slices    []draSlice
	claims    map[string]draItem
	templates map[string]draItem
	classes   map[string]draClass
}

// podClaims are a pod's references to ResourceClaims: spec.resourceClaims
// with the claim made from a template (status.resourceClaimStatuses), and
// the claim of its extended resources (status.extendedResourceClaimStatus).
type podClaims struct {
	claims    []string // namespace/name of the claim, or "" for none made yet
	templates []string // namespace/name of the template, "" for a claim
	extended  string   // namespace/name of the extended-resource claim
}

// readDRA reads one DRA object of kind into d.
func (d *draObjects) read(file, path string, line int, o *kubeObject, raw json.RawMessage) error {
	key := o.Metadata.Namespace + "/" + o.Metadata.Name
	where := fmt.Sprintf("%s:%d: %s", file, line, path)
	var err error
	switch o.Kind {
	case "ResourceSlice":
		s := draSlice{where: where}
		if err = json.Unmarshal(raw, &s); err == nil {
			d.slices = append(d.slices, s)
		}
	case "ResourceClaim":
		var c draClaim
		if err = json.Unmarshal(raw, &c); err == nil {
			d.claims[key] = draItem{where: where, claim: c}
		}
	case "ResourceClaimTemplate":
		var t draTemplate
		if err = json.Unmarshal(raw, &t); err == nil {
			d.templates[key] = draItem{where: where, claim: draClaim{Spec: t.Spec.Spec}}
		}
	case "DeviceClass":
		var c draClass
		if err = json.Unmarshal(raw, &c); err == nil {
			d.classes[o.Metadata.Name] = c
		}
	}
	if err != nil {
		return jsonError(fmt.Sprintf("%s:%d", file, line), path, nil, err)
	}
	return nil
}

// isDRAKind reports whether the reader reads kind as a DRA object.
func isDRAKind(kind string) bool {
	switch kind {
	case "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass":
		return true
	}
	return false
}

// draGPU is one GPU a node's slices publish.
type draGPU struct {
	device  string // the whole GPU's device name
	uuid    string
	product string
	shared  bool  // allowMultipleAllocations
	mem     int64 // its memory capacity, bytes (0: none or unreadable)
	shares  int64 // its "shares" capacity, NVIDIA's integer shares (0: none or unreadable)
	mig     bool  // MIG placements with counters are published
	tainted bool  // a NoSchedule or NoExecute taint
	// partition is an AMD GPU's partitionProfile ("cpx_nps1").
	partition string
}

// draEntry is what an allocated device of a node stands for: GPU index
// gpu of the node; a MIG placement of profile (name) at start.
type draEntry struct {
	gpu     int
	profile string
	start   int
}

// draNode is a node's GPUs from its slices, and its devices by name.
type draNode struct {
	driver  string // the driver whose slices these are
	pool    string
	gpus    []draGPU
	devices map[string]draEntry
}

// nodes returns, by node name, the GPUs the drivers gpuplane reads
// publish for it (gpu.nvidia.com: addNVIDIA; AMD's gpu.amd.com and
// Intel's gaudi.intel.com: addVendor): the slices of each node sorted by
// name (the order upstream's allocator walks them), devices in order. A
// node's slices are of one driver; a slice of another driver, or of one
// gpuplane does not read, is warned about (naming it) and left out.
func (d *draObjects) nodes() (map[string]*draNode, []string) {
	sort.SliceStable(d.slices, func(i, j int) bool { return d.slices[i].Metadata.Name < d.slices[j].Metadata.Name })
	out := map[string]*draNode{}
	var warn []string
	for i := range d.slices {
		s := &d.slices[i]
		drv, node := s.Spec.Driver, s.Spec.NodeName
		if node == "" {
			continue
		}
		if drv != apidra.DriverName && drv != apidra.AMDDriverName && drv != apidra.GaudiDriverName {
			warn = append(warn, fmt.Sprintf("%s: ResourceSlice %s of node %s: driver %s is none gpuplane reads (%s, %s, %s): its %d devices are not simulated",
				s.where, trace.Quote(s.Metadata.Name), trace.Quote(node), trace.Quote(drv), apidra.DriverName, apidra.AMDDriverName, apidra.GaudiDriverName, len(s.Spec.Devices)))
			continue
		}
		n := out[node]
		if n == nil {
			n = &draNode{driver: drv, pool: s.Spec.Pool.Name, devices: map[string]draEntry{}}
			out[node] = n
		}
		switch {
		case n.driver != drv:
			warn = append(warn, fmt.Sprintf("%s: ResourceSlice %s: node %s has slices of %s too; a node of two vendors' devices is not simulated: its devices of %s are left out",
				s.where, trace.Quote(s.Metadata.Name), trace.Quote(node), n.driver, drv))
		case drv == apidra.DriverName:
			n.addNVIDIA(s)
		default:
			warn = append(warn, n.addVendor(s)...)
		}
	}
	return out, warn
}

// addNVIDIA adds the GPUs of slice s of driver gpu.nvidia.com to n, the
// GPUs indexed in the order their first device comes (a whole GPU, type
// gpu, or a MIG device, type mig, which names its GPU by parentUUID and
// its start by the last number of its name).
func (n *draNode) addNVIDIA(s *draSlice) {
	for _, dev := range s.Spec.Devices {
		switch dev.attr(apidra.AttrType) {
		case apidra.TypeGPU:
			i := n.gpuOf(dev.attr(apidra.AttrUUID), dev.attr(apidra.AttrProductName))
			g := &n.gpus[i]
			g.device = dev.Name
			g.shared = dev.AllowMultipleAllocations != nil && *dev.AllowMultipleAllocations
			g.mem = dev.capacity(apidra.CapacityMemory)
			g.shares = dev.capacity(apidra.CapacityShares)
			g.tainted = dev.tainted()
			n.devices[dev.Name] = draEntry{gpu: i, start: -1}
		case apidra.TypeMIG:
			i := n.gpuOf(dev.attr(apidra.AttrParentUUID), dev.attr(apidra.AttrProductName))
			n.gpus[i].mig = n.gpus[i].mig || len(dev.ConsumesCounters) > 0
			n.devices[dev.Name] = draEntry{gpu: i, profile: dev.attr(apidra.AttrProfile), start: migStart(dev.Name)}
		}
	}
}

// addVendor adds the devices of slice s of AMD's or Intel's Gaudi driver
// to n, each a GPU of its own in the order published: an AMD device of
// type amdgpu (a whole GPU) or amdgpu-partition (a partition, which AMD's
// driver publishes as a device, a schedulable GPU), of its productName
// and partitionProfile; a Gaudi of its model. It returns a warning naming
// the slice for each device of another type, or without the attribute
// that names its model, or whose model the catalog lacks (simulated
// unpriced).
func (n *draNode) addVendor(s *draSlice) []string {
	var warn []string
	drv := s.Spec.Driver
	for _, dev := range s.Spec.Devices {
		g := draGPU{device: dev.Name, mem: dev.capacity(apidra.CapacityMemory), tainted: dev.tainted()}
		attr := apidra.AttrGaudiModel
		if drv == apidra.AMDDriverName {
			attr = apidra.AttrProductName
			if t := dev.attrOf(drv, apidra.AttrType); t != apidra.AMDTypeGPU && t != apidra.AMDTypePartition {
				warn = append(warn, fmt.Sprintf("%s: ResourceSlice %s: device %s of type %s is neither %s nor %s: not simulated", s.where, trace.Quote(s.Metadata.Name), trace.Quote(dev.Name), trace.Quote(t), apidra.AMDTypeGPU, apidra.AMDTypePartition))
				continue
			}
			g.partition = dev.attrOf(drv, apidra.AttrAMDPartitionProfile)
		}
		g.product = dev.attrOf(drv, attr)
		if _, known := gpu.Lookup(gpu.ModelOfProduct(g.product)); !known {
			warn = append(warn, fmt.Sprintf("%s: ResourceSlice %s: device %s's %s %s is no model gpuplane knows: simulated unpriced", s.where, trace.Quote(s.Metadata.Name), trace.Quote(dev.Name), attr, trace.Quote(g.product)))
		}
		n.devices[dev.Name] = draEntry{gpu: len(n.gpus), start: -1}
		n.gpus = append(n.gpus, g)
	}
	return warn
}

// capacity returns d's capacity name (bytes for memory), 0 if it has
// none or it does not read.
func (d *draDevice) capacity(name string) int64 {
	c, ok := d.Capacity[name]
	if !ok {
		return 0
	}
	v, err := trace.QuantityValue(c.Value)
	if err != nil {
		return 0
	}
	return v
}

// tainted reports whether d has a NoSchedule or NoExecute taint.
func (d *draDevice) tainted() bool {
	for _, t := range d.Taints {
		if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
			return true
		}
	}
	return false
}

// gpuOf returns the index in n.gpus of the GPU of UUID uuid, adding it
// (of product) where it is new: a whole GPU's device and its MIG devices
// (by parentUUID) are one GPU, in the order its first device is
// published; a GPU in MIG mode has MIG devices only (gpuplane's driver;
// NVIDIA's on Hopper publishes its whole GPU too). A device without a UUID
// is a GPU of its own.
func (n *draNode) gpuOf(uuid, product string) int {
	for i, g := range n.gpus {
		if uuid != "" && g.uuid == uuid {
			return i
		}
	}
	n.gpus = append(n.gpus, draGPU{uuid: uuid, product: product})
	return len(n.gpus) - 1
}

// migStart returns the start slot of a MIG placement's device name
// ("gpu-0-mig-1g10gb-19-6": 6, apidra.ParseDeviceName), -1 if it names
// none.
func migStart(name string) int {
	n, err := apidra.ParseDeviceName(name)
	if err != nil || !n.MIG() {
		return -1
	}
	return n.Start
}

// draClassKind is what a device class selects: of driver gpu.nvidia.com
// "gpu" (whole GPUs, shares) or "mig"; AMD's or Intel's Gaudi driver's
// devices, their driver's name (gpu.amd.com, gaudi.intel.com, whole
// devices); or "" (another driver, or unknown).
func (d *draObjects) classKind(name string) string {
	c, ok := d.classes[name]
	if !ok {
		// The chart's DeviceClasses (deploy/helm/gpuplane
		// templates/deviceclass.yaml) and the vendors' charts' (named
		// as their drivers: api/dra vendors.go), when the List lacks them.
		switch name {
		case apidra.GPUDeviceClass:
			return apidra.TypeGPU
		case apidra.MIGDeviceClass:
			return apidra.TypeMIG
		case apidra.AMDDriverName, apidra.GaudiDriverName:
			return name
		}
		return ""
	}
	kind := ""
	for _, s := range c.Spec.Selectors {
		if s.CEL == nil {
			continue
		}
		e := s.CEL.Expression
		for _, v := range []string{apidra.AMDDriverName, apidra.GaudiDriverName} {
			if names(e, v) {
				return v
			}
		}
		if !names(e, apidra.DriverName) {
			return ""
		}
		for _, k := range []string{apidra.TypeGPU, apidra.TypeMIG} {
			if typeRE.MatchString(e) && typeRE.FindStringSubmatch(e)[1] == k {
				kind = k
			}
		}
	}
	return kind
}

// names reports whether CEL expression e names driver in quotes.
func names(e, driver string) bool {
	return strings.Contains(e, "'"+driver+"'") || strings.Contains(e, `"`+driver+`"`)
}

// mapsGPU reports whether a DeviceClass of the snapshot maps the extended
// resource nvidia.com/gpu (spec.extendedResourceName) to whole GPUs of
// driver gpu.nvidia.com (classKind "gpu"): kube-scheduler then serves a
// pod asking nvidia.com/gpu on a DRA node by a claim of that class.
func (d *draObjects) mapsGPU() bool {
	for name, c := range d.classes {
		if c.Spec.ExtendedResourceName == resource.GPU && d.classKind(name) == apidra.TypeGPU {
			return true
		}
	}
	return false
}

// typeRE matches the type clause of a device class's selector
// (device.attributes['gpu.nvidia.com'].type == 'gpu', either quote)
// anywhere in it; a request's clauses are read one by one
// (apidra.ParseSelectorClause).
var typeRE = regexp.MustCompile(`device\.attributes\[["']` + regexp.QuoteMeta(apidra.DriverName) + `["']\]\.` + apidra.AttrType + `\s*==\s*["'](\w+)["']`)

// draAsk is what one request of a claim asks for, as the simulator models
// it: count whole GPUs, or one share of milli milli-GPU, or one MIG
// device of profile (a name; "" any: the first published, the smallest);
// products are the productName values its selectors allow (nil: any).
type draAsk struct {
	kind     string // "gpu" or "mig", or a vendor's driver (classKind)
	count    int64
	milli    int64 // 0: whole GPUs
	profile  string
	products []string
}

// asks returns what claim c's requests ask of driver gpu.nvidia.com (a
// request with admin access asks nothing), and warnings of what the
// simulator does not read (other drivers, CEL it does not parse,
// constraints, allocation mode All).
func (d *draObjects) asks(where string, c *draClaim) ([]draAsk, []string) {
	var out []draAsk
	var warn []string
	if len(c.Spec.Devices.Constraints) > 0 {
		warn = append(warn, where+": spec.devices.constraints are not simulated")
	}
	for i, r := range c.Spec.Devices.Requests {
		path := fmt.Sprintf("%s: spec.devices.requests[%d]", where, i)
		e := r.draExact
		switch {
		case r.Exactly != nil:
			e = *r.Exactly
		case len(r.FirstAvailable) > 0:
			e = r.FirstAvailable[0]
			warn = append(warn, path+": firstAvailable: simulated as its first subrequest")
		}
		if e.AdminAccess != nil && *e.AdminAccess {
			continue // asks nothing: admin access consumes nothing
		}
		kind := d.classKind(e.DeviceClassName)
		if kind == "" {
			warn = append(warn, fmt.Sprintf("%s: device class %s is not one of driver %s's GPUs or MIG devices, nor %s's or %s's devices: not simulated", path, trace.Quote(e.DeviceClassName), apidra.DriverName, apidra.AMDDriverName, apidra.GaudiDriverName))
			continue
		}
		a := draAsk{kind: kind, count: 1}
		if e.Count != nil {
			a.count = *e.Count
		}
		if e.AllocationMode == "All" {
			warn = append(warn, path+": allocationMode All: simulated as one device")
			a.count = 1
		}
		if a.count < 1 || a.count > cluster.MaxGPUsPerNode {
			warn = append(warn, fmt.Sprintf("%s: count %d outside 1..%d: not simulated", path, a.count, cluster.MaxGPUsPerNode))
			continue
		}
		if vendorKind(kind) != cluster.ResourceGPU {
			if e.Capacity != nil {
				warn = append(warn, fmt.Sprintf("%s: capacity of %s's devices is not simulated: simulated as %d of its whole devices", path, kind, a.count))
			}
			warn = append(warn, a.selectors(path, e.Selectors)...)
			out = append(out, a)
			continue
		}
		if e.Capacity != nil {
			v, ok := e.Capacity.Requests[apidra.CapacityMilliGPU]
			if ok {
				m, err := trace.QuantityValue(v)
				if err != nil || m < 1 || m > cluster.MilliGPU {
					warn = append(warn, fmt.Sprintf("%s: capacity.requests.milliGPU %s is not 1..1000: simulated as a whole GPU", path, trace.Quote(v)))
				} else if m < cluster.MilliGPU {
					a.milli = m
				}
			} else if _, mem := e.Capacity.Requests[apidra.CapacityMemory]; mem {
				warn = append(warn, path+": capacity.requests.memory without milliGPU (a memory share): simulated as a whole GPU, since its share depends on the GPU it gets")
			} else if _, sh := e.Capacity.Requests[apidra.CapacityShares]; sh {
				warn = append(warn, path+": capacity.requests.shares without milliGPU (NVIDIA's integer shares): simulated as a whole GPU, since its share depends on the GPU's count of shares")
			}
		}
		warn = append(warn, a.selectors(path, e.Selectors)...)
		out = append(out, a)
	}
	return out, warn
}

// modelAttr is the attribute that names a device's model in each
// driver's slices, as claims select it: NVIDIA's and AMD's productName
// ("AMD_Instinct_MI300X"), Intel's model ("Gaudi3") (api/dra vendors.go).
var modelAttr = map[string]string{apidra.DriverName: apidra.AttrProductName, apidra.AMDDriverName: apidra.AttrProductName, apidra.GaudiDriverName: apidra.AttrGaudiModel}

// selectors reads the clauses of a request's CEL selectors that the
// simulator models, compared with ==, joined by &&: the device model
// (modelAttr), a model the pod then asks for, and of NVIDIA's driver
// profile and type; any other clause is warned about and ignored.
func (a *draAsk) selectors(path string, sels []draSelector) []string {
	driver, reads := apidra.DriverName, " attributes productName, profile and type"
	if vendorKind(a.kind) != cluster.ResourceGPU {
		driver, reads = a.kind, "'s attribute "+modelAttr[a.kind]
	}
	var warn []string
	for j, s := range sels {
		if s.CEL == nil {
			continue
		}
		for _, clause := range strings.Split(s.CEL.Expression, "&&") {
			attr, v, ok := apidra.ParseDriverClause(driver, clause)
			switch {
			case ok && attr == modelAttr[driver]:
				a.products = append(a.products, v)
			case ok && driver == apidra.DriverName && attr == apidra.AttrProfile:
				a.profile = v
			case ok && driver == apidra.DriverName && attr == apidra.AttrType:
			default:
				warn = append(warn, fmt.Sprintf("%s.selectors[%d].cel: %s is not simulated (the simulator reads %s%s compared with ==, joined by &&): ignored",
					path, j, trace.Quote(strings.TrimSpace(clause)), driver, reads))
			}
		}
	}
	return warn
}

// migSlices returns the compute slices of a MIG profile name ("3g.40gb":
// 3, apidra.MIGSlices), 0 if it names none of a GPU of 7.
func migSlices(profile string) int {
	if c := apidra.MIGSlices(profile); c <= apidra.MIGComputeSlices {
		return c
	}
	return 0
}

// draPod is what a pod's claims say: its asks, and when allocated, the
// devices of node pool it holds.
type draPod struct {
	asks    []draAsk
	results []draResult
	warn    []string
}

// claimsOf gathers pod p's claims (refs) from d.
func (d *draObjects) claimsOf(file string, p *Pod, refs podClaims) draPod {
	var out draPod
	for i, key := range refs.claims {
		item, ok := d.claims[key]
		if !ok && refs.templates[i] != "" {
			item, ok = d.templates[refs.templates[i]]
		}
		if !ok {
			name := key
			if name == "" {
				name = refs.templates[i] + " (template)"
			}
			out.warn = append(out.warn, fmt.Sprintf("%s:%d: pod %s: its ResourceClaim %s is not in the List: not simulated", file, p.Line, trace.Quote(p.Name), trace.Quote(name)))
			continue
		}
		asks, w := d.asks(item.where, &item.claim)
		out.asks = append(out.asks, asks...)
		out.warn = append(out.warn, w...)
		if a := item.claim.Status.Allocation; a != nil {
			out.results = append(out.results, heldResults(a.Devices.Results)...)
		}
	}
	if refs.extended != "" {
		if item, ok := d.claims[refs.extended]; ok && item.claim.Status.Allocation != nil {
			out.results = append(out.results, heldResults(item.claim.Status.Allocation.Devices.Results)...)
		}
	}
	return out
}

// vendorKind is the resource kind of driver's devices: ResourceAMD of
// gpu.amd.com, ResourceGaudi of gaudi.intel.com, else (NVIDIA's driver,
// or a kind of its devices) ResourceGPU.
func vendorKind(driver string) cluster.ResourceKind {
	switch driver {
	case apidra.AMDDriverName:
		return cluster.ResourceAMD
	case apidra.GaudiDriverName:
		return cluster.ResourceGaudi
	}
	return cluster.ResourceGPU
}

// setVendorDemand sets pod p's request when its claims ask for AMD's or
// Gaudi devices (asks of a vendor's driver): that many whole devices of
// the vendor's kind. ok is false when no ask is a vendor's; asks of two
// vendors, or with NVIDIA's, are warned about and not simulated.
func (p *Pod) setVendorDemand(asks []draAsk) (warn []string, ok bool) {
	var vendor string
	var devices int64
	for _, a := range asks {
		devices += a.count
		if vendorKind(a.kind) != cluster.ResourceGPU {
			vendor = a.kind
		}
	}
	if vendor == "" {
		return nil, false
	}
	for _, a := range asks {
		if a.kind != vendor {
			return []string{fmt.Sprintf("pod %s: its claims ask for %s's devices with others: not simulated", trace.Quote(p.Name), vendor)}, true
		}
	}
	if devices > cluster.MaxGPUsPerNode {
		return []string{fmt.Sprintf("pod %s: its claims ask for %d devices, more than %d: not simulated", trace.Quote(p.Name), devices, cluster.MaxGPUsPerNode)}, true
	}
	p.NumGPU, p.GPUMilli, p.Resource = int8(devices), cluster.MilliGPU, vendorKind(vendor)
	var products []string
	for _, a := range asks {
		products = append(products, a.products...)
	}
	return p.setProducts(products), true
}

// setDemand sets pod p's GPU request from its claims' asks (its own
// containers' extended resources, if any, rule; see applyDRA).
func (p *Pod) setDemand(asks []draAsk) []string {
	if w, ok := p.setVendorDemand(asks); ok {
		return w
	}
	var warn []string
	var whole, devices int64
	var products []string
	for _, a := range asks {
		devices += a.count
		if a.kind == apidra.TypeGPU && a.milli == 0 {
			whole += a.count
		}
		products = append(products, a.products...)
	}
	switch {
	case len(asks) == 0:
		return nil
	case devices > cluster.MaxGPUsPerNode:
		return []string{fmt.Sprintf("pod %s: its claims ask for %d devices, more than %d: not simulated", trace.Quote(p.Name), devices, cluster.MaxGPUsPerNode)}
	case whole == devices:
		p.NumGPU, p.GPUMilli, p.Resource = int8(whole), cluster.MilliGPU, cluster.ResourceGPU
	case len(asks) == 1 && asks[0].count == 1 && asks[0].kind == apidra.TypeGPU:
		p.NumGPU, p.GPUMilli, p.Resource = 1, int16(asks[0].milli), cluster.ResourceAny
	case len(asks) == 1 && asks[0].count == 1:
		c := max(migSlices(asks[0].profile), 1) // any profile: the first published, 1g
		p.NumGPU, p.GPUMilli, p.Resource = 1, int16(gpu.MIGShareMilli(c)), cluster.ResourceMIG
	default:
		p.NumGPU, p.GPUMilli, p.Resource = int8(devices), cluster.MilliGPU, cluster.ResourceGPU
		warn = append(warn, fmt.Sprintf("pod %s: its claims ask for shares or MIG devices together with other devices: simulated as %d whole GPUs", trace.Quote(p.Name), devices))
	}
	return append(warn, p.setProducts(products)...)
}

// setProducts makes the device models its claims' selectors name
// (products: NVIDIA's or AMD's productName, Gaudi's model;
// gpu.ModelOfProduct) pod p's models (GPUSpec), unless its node
// constraints gave it some, which is warned about.
func (p *Pod) setProducts(products []string) []string {
	if len(products) == 0 {
		return nil
	}
	var models []string
	for _, pr := range products {
		if m := gpu.ModelOfProduct(pr); !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	if p.GPUSpec != "" {
		return []string{fmt.Sprintf("pod %s: the models in its claims' selectors are not simulated with its node constraints (%s)", trace.Quote(p.Name), p.GPUSpec)}
	}
	p.GPUSpec = strings.Join(models, "|")
	return nil
}

// applyDRA gives each node without device-plugin GPUs the GPUs or
// devices its slices publish (gpu.nvidia.com, gpu.amd.com,
// gaudi.intel.com: nodes), and each pod with claims
// its GPU request from them: a pending pod's from its claims' requests (or
// templates), a running pod's from the devices allocated to it; a pod
// whose containers ask for no GPU extended resource asks by its claims
// (cluster.ResourceClaimed on its Resource). A node's NodeSpec.Serving
// says how it serves its GPUs (setDRANodes). A GPU
// tainted NoSchedule or NoExecute (unhealthy; internal/node/dra health) is
// left out of its node unless a running pod holds it. refs are the pods'
// claim references, in s.Pods' order.
func (s *Snapshot) applyDRA(file string, d *draObjects, refs []podClaims) error {
	nodes, warn := d.nodes()
	s.Warnings = append(s.Warnings, warn...)
	pods := make([]draPod, len(s.Pods))
	held := map[string]map[string]bool{} // node, device
	for i := range s.Pods {
		p := &s.Pods[i]
		if len(refs[i].claims) == 0 && refs[i].extended == "" {
			continue
		}
		pods[i] = d.claimsOf(file, p, refs[i])
		if !p.Bound() {
			pods[i].results = nil
		}
		dn := nodes[p.NodeName]
		for _, r := range pods[i].results {
			if dn != nil && r.Driver == dn.driver {
				if held[p.NodeName] == nil {
					held[p.NodeName] = map[string]bool{}
				}
				held[p.NodeName][r.Device] = true
			}
		}
	}
	index, err := s.setDRANodes(file, nodes, held, d.mapsGPU())
	if err != nil {
		return err
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		s.Warnings = append(s.Warnings, pods[i].warn...)
		// A pod whose containers ask for no GPU extended resource asks by
		// its claims (cluster.Pod.Claim).
		claim := p.NumGPU == 0 && len(refs[i].claims) > 0
		if p.NumGPU == 0 {
			for _, w := range p.setDemand(pods[i].asks) {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: %s", file, p.Line, w))
			}
		}
		if len(pods[i].results) > 0 {
			if w := p.setAllocation(nodes[p.NodeName], index[p.NodeName], pods[i].results); w != "" {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: %s", file, p.Line, w))
			}
		}
		if claim && p.NumGPU > 0 {
			p.Resource |= cluster.ResourceClaimed
		}
	}
	return nil
}

// setDRANodes gives each node without device-plugin GPUs the GPUs its
// slices publish (setDRA), served by DRA only (cluster.ServedByDRA, or
// ServedByDRAExtended where a DeviceClass maps nvidia.com/gpu: mapsGPU);
// a node with device-plugin GPUs whose slices publish GPUs too keeps its
// device plugin's and serves claims (ServedByBoth). It returns each DRA
// node's GPU renumbering (setDRA) by node name.
func (s *Snapshot) setDRANodes(file string, nodes map[string]*draNode, held map[string]map[string]bool, mapsGPU bool) (map[string][]int, error) {
	index := map[string][]int{} // node: old GPU index -> new, -1 left out
	for i := range s.Nodes {
		n := &s.Nodes[i]
		dn := nodes[n.Name]
		if dn == nil || len(dn.gpus) == 0 {
			continue
		}
		if n.GPUs > 0 || len(n.MIG) > 0 || n.Shared {
			n.Serving = cluster.ServedByBoth
			continue
		}
		idx, err := n.setDRA(file, dn, held[n.Name], &s.Warnings)
		if err != nil {
			return nil, err
		}
		n.Serving = cluster.ServedByDRA
		if mapsGPU {
			n.Serving = cluster.ServedByDRAExtended
		}
		index[n.Name] = idx
	}
	return index, nil
}

// setDRA sets node n's GPUs from dn, leaving out the tainted ones not
// held (by device name), and returns the new index of each of dn's GPUs
// (-1: left out).
func (n *Node) setDRA(file string, dn *draNode, held map[string]bool, warnings *[]string) ([]int, error) {
	idx := make([]int, len(dn.gpus))
	tainted, products := 0, map[string]bool{}
	for j, g := range dn.gpus {
		idx[j] = -1
		if g.tainted && !held[g.device] {
			tainted++
			continue
		}
		idx[j] = n.GPUs
		n.GPUs++
		if n.Product == "" {
			n.Product = g.product
		}
		products[g.product] = true
		n.DynamicMIG = n.DynamicMIG || g.mig
		if g.mig {
			n.MIGModeGPUs |= 1 << idx[j]
		}
		n.DRAShares = n.DRAShares || g.shared
	}
	n.DRA = true
	if n.GPUs > cluster.MaxGPUsPerNode {
		return nil, fmt.Errorf("%s:%d: node %s: its ResourceSlices publish %d GPUs, more than %d", file, n.Line, trace.Quote(n.Name), n.GPUs, cluster.MaxGPUsPerNode)
	}
	if n.GPUs > 0 {
		n.setDRAModel(file, dn, idx, warnings)
		if len(n.Model) > trace.MaxModelLen {
			return nil, fmt.Errorf("%s:%d: node %s: productName longer than %d characters", file, n.Line, trace.Quote(n.Name), trace.MaxModelLen)
		}
	}
	n.NoDynamicMIG = !n.DynamicMIG
	if len(products) > 1 {
		*warnings = append(*warnings, fmt.Sprintf("%s:%d: node %s publishes GPUs of %d products: simulated as %d GPUs of %s", file, n.Line, trace.Quote(n.Name), len(products), n.GPUs, trace.Quote(n.Model)))
	}
	if tainted > 0 {
		*warnings = append(*warnings, fmt.Sprintf("%s:%d: node %s: %d of its %d GPUs are tainted (unhealthy, NoSchedule or NoExecute) and held by no pod: left out", file, n.Line, trace.Quote(n.Name), tainted, len(dn.gpus)))
	}
	return idx, nil
}

// setDRAModel sets node n's vendor and model from its driver and the
// product of its first kept GPU (n.Product): NVIDIA's productName
// (gpu.ModelOfProduct; "unlabelled" without one); AMD's productName
// ("AMD_Instinct_MI300X": MI300X; unlabelled-amd without one) with the
// partition mode of that GPU's partitionProfile ("cpx_nps1": CPX/NPS1);
// Gaudi's model ("Gaudi3"; unlabelled-gaudi without one). A partition mode
// the model lacks is warned about and left out. idx is setDRA's.
func (n *Node) setDRAModel(file string, dn *draNode, idx []int, warnings *[]string) {
	n.Model = gpu.ModelOfProduct(n.Product)
	switch {
	case dn.driver == apidra.GaudiDriverName:
		n.Vendor = gpu.Intel
		if n.Product == "" {
			n.Model = gpu.UnlabelledGaudi
		}
	case dn.driver != apidra.AMDDriverName:
		if n.Product == "" {
			n.Model = "unlabelled"
		}
	case n.Product == "":
		n.Vendor, n.Model = gpu.AMD, gpu.UnlabelledAMD
	default:
		n.Vendor = gpu.AMD
		part := ""
		for j, g := range dn.gpus {
			if idx[j] >= 0 {
				part = g.partition
				break
			}
		}
		p, err := gpu.ParsePartition(part)
		if _, known := gpu.Lookup(n.Model); known && err == nil {
			if _, err = gpu.Partitions(n.Model, p); err == nil {
				n.Partition = p
			}
		}
		if err != nil {
			*warnings = append(*warnings, fmt.Sprintf("%s:%d: node %s: partitionProfile %s of %s: %v: simulated unpartitioned", file, n.Line, trace.Quote(n.Name), trace.Quote(part), apidra.AMDDriverName, err))
		}
	}
}

// setAllocation sets a running pod's GPUs from the devices allocated to
// it (results) on its node dn (idx: GPU indices as setDRA renumbered
// them): whole GPUs, a share of consumed milliGPU (all of it when none is
// consumed, the driver's default), or a MIG placement with its profile
// and start. It returns a warning of what it could not read, "" if none.
func (p *Pod) setAllocation(dn *draNode, idx []int, results []draResult) string {
	if dn == nil {
		return fmt.Sprintf("pod %s: its claims are allocated on node %s, whose ResourceSlices of %s, %s or %s the List lacks: its devices are chosen again", trace.Quote(p.Name), trace.Quote(p.NodeName), apidra.DriverName, apidra.AMDDriverName, apidra.GaudiDriverName)
	}
	var gpus []int
	milli, profile, start, others := int64(cluster.MilliGPU), "", -1, 0
	for _, r := range results {
		e, ok := dn.devices[r.Device]
		if r.Driver != dn.driver || !ok || e.gpu >= len(idx) || idx[e.gpu] < 0 {
			others++
			continue
		}
		gpus = append(gpus, idx[e.gpu])
		if m, ok := consumedMilli(r.ConsumedCapacity, dn.gpus[e.gpu].mem, dn.gpus[e.gpu].shares); ok {
			milli = m
		}
		if e.profile != "" {
			profile, start = e.profile, e.start
		}
	}
	switch {
	case len(gpus) == 0:
		return fmt.Sprintf("pod %s: none of its %d allocated devices is a GPU of %s on node %s: not simulated", trace.Quote(p.Name), len(results), dn.driver, trace.Quote(p.NodeName))
	case profile != "" && len(gpus) == 1:
		c := max(migSlices(profile), 1)
		p.NumGPU, p.GPUMilli, p.Resource = 1, int16(gpu.MIGShareMilli(c)), cluster.ResourceMIG
		p.MIGProfile, p.MIGStart = profile, start
	case milli < cluster.MilliGPU && len(gpus) == 1:
		p.NumGPU, p.GPUMilli, p.Resource = 1, int16(milli), cluster.ResourceAny
	case len(gpus) <= cluster.MaxGPUsPerNode:
		p.NumGPU, p.GPUMilli, p.Resource = int8(len(gpus)), cluster.MilliGPU, vendorKind(dn.driver)
	}
	p.GPUs = gpus
	if others > 0 {
		return fmt.Sprintf("pod %s: %d of its allocated devices are not GPUs of %s on node %s (another driver, or a device its slices lack): not simulated", trace.Quote(p.Name), others, dn.driver, trace.Quote(p.NodeName))
	}
	return ""
}

// claimRefs returns pod o's claim references: each spec.resourceClaims
// entry's claim (its resourceClaimName, or the claim made from its
// template that status.resourceClaimStatuses names), with its template,
// and the claim of its extended resources.
func claimRefs(o *kubeObject) podClaims {
	var r podClaims
	ns := o.Metadata.Namespace + "/"
	made := map[string]string{}
	for _, st := range o.Status.ResourceClaimStatuses {
		made[st.Name] = st.ResourceClaimName
	}
	for _, c := range o.Spec.ResourceClaims {
		switch {
		case c.ResourceClaimName != "":
			r.claims, r.templates = append(r.claims, ns+c.ResourceClaimName), append(r.templates, "")
		case c.ResourceClaimTemplateName != "":
			claim := ""
			if m := made[c.Name]; m != "" {
				claim = ns + m
			}
			r.claims, r.templates = append(r.claims, claim), append(r.templates, ns+c.ResourceClaimTemplateName)
		}
	}
	if e := o.Status.ExtendedResourceClaimStatus; e != nil && e.ResourceClaimName != "" {
		r.extended = ns + e.ResourceClaimName
	}
	return r
}

// consumedMilli is the milli-GPU an allocation of a shared GPU of gpuMem
// bytes and gpuShares shares (NVIDIA's "shares" capacity, 0: none) holds
// by what it consumes (resource.SharedGPUMilliShares of its milliGPU,
// memory and shares); ok is false when it consumes none readably, or
// holds the whole GPU.
func consumedMilli(consumed map[string]string, gpuMem, gpuShares int64) (int64, bool) {
	var milli, mem, shares int64
	if v, ok := consumed[apidra.CapacityMilliGPU]; ok {
		if m, err := trace.QuantityValue(v); err == nil && m >= 1 && m <= cluster.MilliGPU {
			milli = m
		}
	}
	if v, ok := consumed[apidra.CapacityMemory]; ok {
		if m, err := trace.QuantityValue(v); err == nil && m > 0 {
			mem = m
		}
	}
	if v, ok := consumed[apidra.CapacityShares]; ok {
		if m, err := trace.QuantityValue(v); err == nil && m > 0 {
			shares = m
		}
	}
	if milli == 0 && mem == 0 && shares == 0 {
		return 0, false
	}
	m := resource.SharedGPUMilliShares(milli, mem, gpuMem, shares, gpuShares)
	return m, m >= 1 && m < cluster.MilliGPU
}
