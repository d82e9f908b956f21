// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"
	"math/bits"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// MilliGPU is one whole GPU in milli-GPU (api/resource's MilliPerGPU).
const MilliGPU = resource.MilliPerGPU

// MaxGPUsPerNode is the largest GPU count a node may have (GPUSet is a
// 64-bit mask): api/resource's MaxGPUs, the most a pod may ask for.
const MaxGPUsPerNode = resource.MaxGPUs

// ModelSet is a set of GPU models as a bit mask over the process-wide model
// IDs of gpu.ModelID (gpu.ParseModels builds one). The zero set means "any
// model".
type ModelSet uint64

// Allows reports whether the set allows model ID id (gpu.ModelID): the
// zero set any model, any other set its own; no model (id < 0) only for
// the zero set.
func (s ModelSet) Allows(id int) bool {
	return s == 0 || id >= 0 && s&(1<<uint(id)) != 0
}

// GPUSet is a set of GPU indices on one node, as a bit mask.
type GPUSet uint64

// Count returns the number of GPUs in the set.
func (s GPUSet) Count() int { return bits.OnesCount64(uint64(s)) }

// Has reports whether GPU i is in the set.
func (s GPUSet) Has(i int) bool { return s&(1<<uint(i)) != 0 }

// Indices returns the GPU indices in ascending order.
func (s GPUSet) Indices() []int {
	out := make([]int, 0, s.Count())
	for m := uint64(s); m != 0; m &= m - 1 {
		out = append(out, bits.TrailingZeros64(m))
	}
	return out
}

// Pod is a pod's resource request.
type Pod struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	// NumGPU is the number of GPUs (0 to 64); GPUMilli the share of each in
	// milli-GPU, below 1000 only when NumGPU is 1 (a shared GPU).
	NumGPU   int
	GPUMilli int64
	// Models restricts the GPU models the pod may use; 0 means any.
	Models ModelSet
	// MIGProfile, when not 0, asks for one MIG instance of profile
	// MIGProfile-1 (the index order of gpu.MIGProfiles) on a MIG-enabled
	// GPU, or else a whole GPU that is not MIG-enabled (Node.FreeAfter);
	// NumGPU is then 1 and GPUMilli the instance's share (MIGMilli), by
	// which policies score.
	MIGProfile int8
	// MIGDevice, when not 0, is the compute slices (1..7) of the MIG
	// device (nvidia.com/mig-<profile>) a ResourceMIG pod asks for, kept
	// whatever a sharing mode makes of its GPUMilli (MIGSlices,
	// Node.MIGServed).
	MIGDevice int8
	// Resource is the extended resource the pod asks for, as a node's
	// device plugin serves it; ResourceAny (a trace's pod) fits any GPU by
	// share. Node.FreeAfter gives the rule.
	Resource ResourceKind
	// Claim reports that the pod asks for its GPUs by DRA ResourceClaim
	// (a class of driver gpu.nvidia.com; Resource is then ResourceGPU
	// for whole GPUs, ResourceAny for a share, ResourceMIG for a MIG
	// device) rather than by an extended resource: it fits only a node
	// whose ResourceSlices publish its GPUs (Node.Serving), and a claim
	// of whole GPUs or a share no GPU in MIG mode (Node.MIGOnly).
	Claim bool
	// Filter, when not nil, is what the pod asks of its node beyond
	// resources (nodeName, nodeSelector, required node affinity,
	// tolerations): Fits and Feasible refuse a node it refuses. A pod
	// that a scheduler plugin sees has none: kube-scheduler applied them.
	Filter *NodeFilter
	// Vendors, when not 0, are the vendors whose GPUs the pod accepts (a
	// workload built for CUDA accepts NVIDIA's only): it fits only nodes
	// of them (AcceptedVendors, Node.Serves). 0 means any vendor; a pod
	// asking for a vendor's resource accepts that vendor's only anyway.
	Vendors VendorSet
	// DeviceMilli, when not 0, is the share of one whole device the pod
	// asked for (its GPUMilli as read), kept whatever a sharing mode makes
	// of GPUMilli: a node of partitions (Node.PerDevice) serves the pod
	// by it. 0: GPUMilli.
	DeviceMilli int64
}

// ResourceKind is the extended resource a pod's GPUs are asked in. In
// Kubernetes a pod fits only a node that serves its resource: a MIG
// device (nvidia.com/mig-3g.40gb) only a MIG-enabled GPU with that
// profile, a time-sliced replica (nvidia.com/gpu.shared, the device
// plugin's renameByDefault) only a time-sliced GPU, and nvidia.com/gpu
// neither.
type ResourceKind uint8

const (
	// ResourceAny is a pod whose resource is not known (the openb and
	// Alibaba traces give milli-GPU): it fits any GPU by its share.
	ResourceAny ResourceKind = iota
	// ResourceGPU is nvidia.com/gpu: GPUs of a node that are not
	// time-sliced under nvidia.com/gpu.shared (Node.Shared) nor
	// MIG-enabled (Node.MIGGPUs, Node.MIGOnly).
	ResourceGPU
	// ResourceMIG is one nvidia.com/mig-<profile> device: with
	// Pod.MIGProfile set (--sharing mig) only a MIG-enabled GPU's instance,
	// never a whole GPU.
	ResourceMIG
	// ResourceShared is one nvidia.com/gpu.shared replica: only the GPUs
	// of a node that serves them (Node.Shared).
	ResourceShared
	// ResourceAMD is amd.com/gpu, AMD's device plugin's: whole GPUs (a
	// partition of a partitioned GPU is one) of an AMD node only; with
	// Claim, a claim of AMD's DRA driver's devices (gpu.amd.com).
	ResourceAMD
	// ResourceGaudi is habana.ai/gaudi, Intel's Gaudi device plugin's:
	// whole Gaudi devices of an Intel node only; with Claim, a claim of
	// Intel's Gaudi DRA driver's (gaudi.intel.com).
	ResourceGaudi
	// ResourceMilli is gpuplane.io/gpu-milli, a share of one GPU that
	// gpuplane's node agent advertises on NVIDIA nodes: it fits as
	// ResourceAny does, on NVIDIA's nodes only (an AMD or Gaudi node
	// advertises none of it), where a trace's share fits any vendor's GPU.
	ResourceMilli
)

// wholeVendor reports whether k is another vendor's whole-device resource
// (ResourceAMD, ResourceGaudi).
func (k ResourceKind) wholeVendor() bool { return k == ResourceAMD || k == ResourceGaudi }

// Vendor returns the vendor whose device plugin serves the resource:
// AMD's for ResourceAMD, Intel's for ResourceGaudi, NVIDIA's for the
// others (ResourceAny, by a claim, is a claim of NVIDIA's class).
func (k ResourceKind) Vendor() gpu.Vendor {
	switch k {
	case ResourceAMD:
		return gpu.AMD
	case ResourceGaudi:
		return gpu.Intel
	}
	return gpu.NVIDIA
}

// ResourceOf returns the resource kind of a whole-device resource name as
// the vendors' device plugins advertise it: nvidia.com/gpu, amd.com/gpu,
// habana.ai/gaudi; false for any other name.
func ResourceOf(name string) (ResourceKind, bool) {
	switch name {
	case resource.GPU:
		return ResourceGPU, true
	case resource.AMDGPU:
		return ResourceAMD, true
	case resource.Gaudi:
		return ResourceGaudi, true
	}
	return 0, false
}

// Name returns the resource's name as kube-scheduler names it.
func (k ResourceKind) Name() string {
	switch k {
	case ResourceShared:
		return resource.GPU + resource.SharedSuffix
	case ResourceMIG:
		return "nvidia.com/mig-*"
	case ResourceAMD:
		return resource.AMDGPU
	case ResourceGaudi:
		return resource.Gaudi
	case ResourceMilli:
		return resource.GPUMilli
	}
	return resource.GPU
}

// ResourceClaimed marks, in a trace.PodSpec's Resource only, a pod that
// asks for its GPUs by DRA ResourceClaim (Pod.Claim); SplitClaim takes it
// apart. A Pod's Resource never holds it (Validate).
const ResourceClaimed ResourceKind = 1 << 7

// SplitClaim returns the resource kind k holds and whether it is marked
// ResourceClaimed.
func (k ResourceKind) SplitClaim() (ResourceKind, bool) {
	return k &^ ResourceClaimed, k&ResourceClaimed != 0
}

// GPUServing is how a node serves its GPUs to pods (Node.Serving), as
// kube-scheduler sees them: a device plugin advertises them as extended
// resources in the node's allocatable (NodeResourcesFit), or a DRA
// driver publishes them in ResourceSlices (DynamicResources), or both.
type GPUServing uint8

const (
	// ServedByDevicePlugin: extended resources only (nvidia.com/gpu,
	// nvidia.com/mig-<profile>, nvidia.com/gpu.shared); a pod asking by
	// ResourceClaim (Pod.Claim) never fits.
	ServedByDevicePlugin GPUServing = iota
	// ServedByDRA: ResourceSlices only: a pod fits by ResourceClaim, and
	// no pod asking an extended resource does (no device plugin
	// advertises one).
	ServedByDRA
	// ServedByDRAExtended: ServedByDRA, and a DeviceClass maps
	// nvidia.com/gpu to its GPUs (spec.extendedResourceName, KEP-5004,
	// GA in Kubernetes v1.37): a pod asking nvidia.com/gpu fits too, as
	// kube-scheduler makes it a claim of that class.
	ServedByDRAExtended
	// ServedByBoth: a device plugin and ResourceSlices: every pod the
	// device plugin serves, and a ResourceClaim.
	ServedByBoth
)

// TotalGPUMilli returns the pod's whole GPU request in milli-GPU.
func (p *Pod) TotalGPUMilli() int64 { return int64(p.NumGPU) * p.GPUMilli }

// IsGPUShare reports whether the pod asks for a share of one GPU.
// A pod asking for a MIG profile is one.
func (p *Pod) IsGPUShare() bool {
	return p.NumGPU == 1 && (p.GPUMilli < MilliGPU || p.MIGProfile != 0)
}

// Validate checks a pod's request on its own (not against any node).
func (p *Pod) Validate() error {
	switch {
	case p.CPUMilli < 0:
		return fmt.Errorf("negative cpu_milli %d", p.CPUMilli)
	case p.MemoryMiB < 0:
		return fmt.Errorf("negative memory_mib %d", p.MemoryMiB)
	case p.NumGPU < 0 || p.NumGPU > MaxGPUsPerNode:
		return fmt.Errorf("num_gpu %d out of range 0..%d", p.NumGPU, MaxGPUsPerNode)
	case p.NumGPU == 0 && p.GPUMilli != 0:
		return fmt.Errorf("gpu_milli %d with num_gpu 0", p.GPUMilli)
	case p.NumGPU > 0 && (p.GPUMilli <= 0 || p.GPUMilli > MilliGPU):
		return fmt.Errorf("gpu_milli %d out of range 1..%d", p.GPUMilli, MilliGPU)
	case p.NumGPU > 1 && p.GPUMilli != MilliGPU:
		return fmt.Errorf("gpu_milli %d below %d with num_gpu %d: only one GPU can be shared", p.GPUMilli, MilliGPU, p.NumGPU)
	case p.MIGProfile < 0 || int(p.MIGProfile) > gpu.NumMIGProfiles:
		return fmt.Errorf("MIG profile %d out of range 0..%d", p.MIGProfile, gpu.NumMIGProfiles)
	case p.Resource > ResourceMilli:
		return fmt.Errorf("resource kind %d out of range", p.Resource)
	case p.Resource.wholeVendor() && (p.GPUMilli != MilliGPU || p.MIGProfile != 0):
		return fmt.Errorf("%s with gpu_milli %d: the vendor's device plugin and DRA driver serve whole devices", p.Resource.Name(), p.GPUMilli)
	case p.Claim && p.Resource == ResourceShared:
		return fmt.Errorf("a claim of %s: a ResourceClaim asks for no time-sliced replica", p.Resource.Name())
	case p.Vendors&^AllVendors != 0:
		return fmt.Errorf("vendor set %#x names no known vendor", uint8(p.Vendors))
	case p.AcceptedVendors() == 0:
		return fmt.Errorf("vendors %s with %s: its resource is %s's", p.Vendors, p.Resource.Name(), p.Resource.Vendor())
	case p.Resource == ResourceShared && p.NumGPU != 1, p.Resource == ResourceMIG && p.NumGPU != 1:
		return fmt.Errorf("%s with num_gpu %d: a pod asks for one device", p.Resource.Name(), p.NumGPU)
	case p.MIGProfile != 0 && p.NumGPU != 1:
		return fmt.Errorf("MIG profile with num_gpu %d: a MIG pod asks for one instance", p.NumGPU)
	}
	return nil
}

// AffinityKey returns the GPU Clustering kind of a GPU pod (0 for a shared
// GPU, k for k whole GPUs) and false for a pod without GPUs.
func AffinityKey(p *Pod) (int, bool) {
	if p.NumGPU == 0 {
		return 0, false
	}
	if p.IsGPUShare() {
		return 0, true
	}
	return p.NumGPU, true
}
