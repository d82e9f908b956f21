// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package resource is the one home of the names gpuplane's processes share
// through the Kubernetes API: the GPU extended-resource names, the pod and
// node annotations through which gpuplane-scheduler's choice reaches the
// node agent, the node labels that the node agent writes and the scheduler,
// the simulator's snapshot reader, the admission policy and the quota plan
// read (as k8s.io/api/core/v1's well_known_labels.go), and the rule of a
// pod's GPU request (PodGPURequest). It imports only the standard library,
// so that the offline tool (cmd/gpuplane, which links no Kubernetes
// package, not even sigs.k8s.io/yaml) shares them with the in-cluster
// roles.
package resource

import (
	"math"
	"strings"
)

// The prefixes of NVIDIA's and gpuplane's resource, annotation and label
// names.
const (
	NVIDIAPrefix   = "nvidia.com/"
	GPUPlanePrefix = "gpuplane.io/"
)

// Extended-resource names, as NVIDIA's device plugin advertises them.
const (
	// GPU is the resource of whole GPUs, and of MIG devices under the
	// single MIG strategy; counted in devices.
	GPU = "nvidia.com/gpu"
	// MIGPrefix starts the resource name of a MIG profile under the mixed
	// MIG strategy, e.g. nvidia.com/mig-1g.10gb; see MIGResource.
	MIGPrefix = "nvidia.com/mig-"
	// SharedSuffix ends the name of a time-sliced resource under
	// sharing.timeSlicing.renameByDefault, e.g. "nvidia.com/gpu.shared".
	SharedSuffix = ".shared"
	// GPUMilli is gpuplane's resource for a share of one GPU, in milli-GPU
	// (1000 = one GPU; the openb trace's gpu_milli). A pod asks for 1..1000
	// of it; gpuplane-scheduler picks the GPU (docs/scheduler.md). A
	// gpuplane extension: NVIDIA has no such resource.
	GPUMilli = "gpuplane.io/gpu-milli"
)

// MIGResource returns the resource name of a MIG profile under the mixed
// MIG strategy, e.g. "nvidia.com/mig-1g.10gb" for profile "1g.10gb".
func MIGResource(profile string) string { return MIGPrefix + profile }

// IsGPU reports whether name is an extended resource whose devices are GPUs
// or MIG devices of gpuplane's node agent: nvidia.com/gpu, a MIG profile's
// nvidia.com/mig-<profile>, either renamed <name>.shared by time-slicing, or
// GPUMilli. Other device plugins' resources (NICs, FPGAs, e.g.
// rdma/hca_shared_devices_a) are not, even when their device IDs look like
// GPU indices. It is the rule dcgm-exporter applies to the kubelet's
// pod-resources list (internal/pkg/transformation/kubernetes.go: nvidia.com/gpu
// or the nvidia.com/mig- prefix), with gpuplane's own names added.
func IsGPU(name string) bool {
	name = strings.TrimSuffix(name, SharedSuffix)
	return name == GPU || name == GPUMilli ||
		(strings.HasPrefix(name, MIGPrefix) && len(name) > len(MIGPrefix))
}

// SharedGPUMilli is the milli-GPU that allocations of a shared GPU
// published through DRA (gpuplane's driver with --dra-shares: capacities
// milliGPU and memory) hold, given what they consume: the larger of the
// milliGPU and of the memory as thousandths of the GPU's memory
// gpuMemBytes (rounded up), at most MilliPerGPU. A claim that asks one of the
// two capacities consumes the other's default, milliGPU 1 and all the
// memory: a memory share as NVIDIA's driver's claims write it holds its
// part of the memory; a claim that asks neither, or milliGPU alone,
// holds the whole GPU. gpuMemBytes <= 0: the milliGPU alone.
func SharedGPUMilli(milli, memBytes, gpuMemBytes int64) int64 {
	return SharedGPUMilliShares(milli, memBytes, gpuMemBytes, 0, 0)
}

// SharedGPUMilliShares is SharedGPUMilli with NVIDIA's integer shares
// too (its driver's --consumable-shares=N: a "shares" capacity of N per
// GPU, sigs.k8s.io/dra-driver-nvidia-gpu
// cmd/gpu-kubelet-plugin/consumable_shares.go): shares of gpuShares are
// shares/gpuShares of the GPU, in thousandths rounded up (1 of 3 is
// 334), and the allocations hold the largest of the three parts, at most
// MilliPerGPU. shares or gpuShares <= 0: no shares part. An allocation of
// NVIDIA's unlimited mode consumes no memory and no shares, and so holds
// its milliGPU, the default 1: the smallest share.
func SharedGPUMilliShares(milli, memBytes, gpuMemBytes, shares, gpuShares int64) int64 {
	if gpuShares > 0 && shares > 0 {
		s := (min(shares, gpuShares)*MilliPerGPU + gpuShares - 1) / gpuShares
		milli = max(milli, s)
	}
	if gpuMemBytes > 0 && memBytes > 0 {
		// In float64, which is exact for the ratio of any two memory
		// sizes below 9 TB and cannot overflow as memBytes*MilliPerGPU can.
		m := int64(math.Ceil(float64(min(memBytes, gpuMemBytes)) * MilliPerGPU / float64(gpuMemBytes)))
		milli = max(milli, m)
	}
	return min(max(milli, 0), MilliPerGPU)
}
