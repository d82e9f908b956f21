// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// Served returns pod p as node n serves it, the one home of a pod's shape
// on a node: every entry point where a pod meets a node (Serves,
// FreeAfter, Fits, Feasible, Add, Remove, and the placement policies)
// takes it through Served first. On a node whose nvidia.com/gpu devices
// are less than a GPU (ReplicaMilli), a pod of k nvidia.com/gpu devices
// (ResourceGPU, asked by no claim) holds ReplicaShare(k, ReplicaMilli) of
// one GPU, as kube-scheduler counts devices and NVIDIA's device plugin
// gives the replicas (or instances) of one GPU: a ResourceShared pod on
// a Shared node (time-slicing or MPS, default naming), a ResourceAny one
// on a MIGAsGPU node (single MIG strategy; where its GPUs are MIG-enabled
// in the simulation, an instance of the smallest profile that holds the
// share). On a node of partitions laid out by a sharing mode (PerDevice),
// a trace's pod (ResourceAny, asked by no claim) is served by its share of
// a whole device as AMD's device plugin serves partitions, each a GPU
// (amd.com/gpu): see devicePartitions. Otherwise it is p itself.
// buf holds the served pod when it is not p; a pod Served returns is
// served already (Served of it is itself). Where ReplicaMilli is 0 it
// costs one branch.
func (n *Node) Served(p *Pod, buf *Pod) *Pod {
	if n.PerDevice > 0 {
		if k := n.devicePartitions(p); k > 0 {
			*buf = *p
			buf.NumGPU, buf.GPUMilli, buf.MIGProfile, buf.Resource, buf.DeviceMilli = k, MilliGPU, 0, ResourceAMD, 0
			return buf
		}
		return p
	}
	if n.ReplicaMilli == 0 || p.Resource != ResourceGPU || p.Claim || p.NumGPU == 0 {
		return p
	}
	*buf = *p
	buf.NumGPU, buf.GPUMilli, buf.MIGProfile = 1, ReplicaShare(p.NumGPU, n.ReplicaMilli), 0
	buf.Resource = ResourceAny
	switch {
	case n.Shared:
		buf.Resource = ResourceShared
	case n.MIGAsGPU && n.MIGGPUs != 0:
		// Its GPUs MIG-enabled in the simulation (--sharing mig): the
		// smallest profile that holds the share, as a running pod's
		// share is made one (the profile order is every model's).
		if k, ok := gpu.SmallestMIGProfile("A100-80GB", buf.GPUMilli, 0); ok {
			buf.MIGProfile, buf.GPUMilli = int8(k+1), MIGMilli(k)
		}
	}
	return buf
}

// MIGSlices is the compute slices (1..7) of the MIG device p asks for:
// MIGDevice, else its profile's (Pod.MIGProfile), else the fewest whose
// share holds GPUMilli (gpu.MIGShareMilli rounds down: 142 is 1, 428 is
// 3, 1000 is 7).
func (p *Pod) MIGSlices() int {
	if p.MIGDevice > 0 {
		return int(p.MIGDevice)
	}
	if p.MIGProfile > 0 {
		return gpu.MIGSlices(int(p.MIGProfile) - 1)
	}
	return int((p.GPUMilli*apidra.MIGComputeSlices + MilliGPU - 1) / MilliGPU)
}

// NoteMIGDevice records in MIGDevice the compute slices of the MIG device
// a ResourceMIG pod asks for (not by a claim), from its share as read,
// before a sharing mode changes the share. Every reader of a pod's
// request calls it (trace.PodSpec.Pod, the engine's bound pods).
func (p *Pod) NoteMIGDevice() {
	if p.Resource == ResourceMIG && !p.Claim && p.MIGDevice == 0 {
		p.MIGDevice = int8(p.MIGSlices())
	}
}

// ReplicaShare is the milli-GPU k devices of replica milli-GPU each hold
// of one GPU: k × replica, at most a whole GPU. A snapshot reads a
// running pod's replicas this way (internal/snapshot servedReplicas).
func ReplicaShare(k int, replica int64) int64 {
	return min(MilliGPU, int64(k)*replica)
}

// devicePartitions returns the partitions of node n (PerDevice per
// device) that pod p takes when n serves it by its share of whole devices
// (-1 when n does not serve p so; 0 when it serves p and no partition
// holds p). n serves so a pod asked by no claim, of a vendor n is of, that
// asks a share of GPUs as a trace gives it (ResourceAny) or amd.com/gpu
// devices of the node list's layout (ResourceAMD with DeviceMilli set, as
// a sharing mode of partitions sets it):
//   - a share s of one device (DeviceMilli, else GPUMilli, below 1000)
//     takes one partition when s ≤ 1000/PerDevice (a partition is that
//     share of the device's compute and memory: gpu.Partitions), else
//     none: the pod cannot run there;
//   - a pod of k whole devices takes k × PerDevice partitions, the same
//     compute and memory, which the workload sees as k × PerDevice GPUs
//     (AMD's device plugin advertises each partition as one amd.com/gpu).
//
// The pod served asks amd.com/gpu for its partitions (ResourceAMD,
// DeviceMilli 0), so that Served of it is itself.
func (n *Node) devicePartitions(p *Pod) int {
	byShare := p.Resource == ResourceAny || (p.Resource == ResourceAMD && p.DeviceMilli > 0)
	if p.NumGPU == 0 || p.Claim || !byShare || !p.AcceptedVendors().Has(n.Vendor) {
		return -1
	}
	s := p.DeviceMilli
	if s == 0 {
		s = p.GPUMilli
	}
	if p.NumGPU > 1 || s >= MilliGPU {
		return p.NumGPU * n.PerDevice
	}
	if s*int64(n.PerDevice) <= MilliGPU {
		return 1
	}
	return 0
}
