// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// vendorOf is the one home of a node's vendor as a node list gives it
// (the cluster YAML's vendor field, the node CSV's vendor column): ""
// is the model's (gpu.VendorOf; NVIDIA for a model the catalog lacks),
// and a vendor given must be a catalog model's own.
func vendorOf(model, vendor string) (gpu.Vendor, error) {
	if vendor == "" {
		return gpu.VendorOf(model), nil
	}
	given, err := gpu.ParseVendor(vendor)
	if err != nil {
		return 0, err
	}
	if m, known := gpu.Lookup(model); known && m.Vendor != given {
		return 0, fmt.Errorf("model %s is %s's, not %s", m.Name, m.Vendor, given)
	}
	return given, nil
}

// partitionGPUs is the one home of a node's GPU count in a partition
// mode (the cluster YAML's partition field, the node CSV's partition
// column): devices devices of model in mode p are devices ×
// gpu.Partitions(model, p).GPUs GPUs, at most 64.
func partitionGPUs(model string, p gpu.Partition, devices int) (int, error) {
	if model == "" || devices == 0 {
		if p != (gpu.Partition{}) {
			return 0, fmt.Errorf("partition %s for a node without GPUs", p)
		}
		return devices, nil
	}
	s, err := gpu.Partitions(model, p)
	if err != nil {
		return 0, err
	}
	if devices*s.GPUs > maxGPUsPerNode {
		return 0, fmt.Errorf("%d devices of %d GPUs each (%s) are more than %d GPUs", devices, s.GPUs, p, maxGPUsPerNode)
	}
	return devices * s.GPUs, nil
}

// podResource reads a pod CSV's resource column: "" (a trace's pod, any
// accelerator by its share: cluster.ResourceAny), gpuplane.io/gpu-milli
// (a share of one NVIDIA GPU, as gpuplane's node agent advertises it:
// cluster.ResourceMilli, num_gpu 1) or a whole-device resource as its
// vendor's device plugin names it, nvidia.com/gpu, amd.com/gpu or
// habana.ai/gaudi (cluster.ResourceOf), which asks for num_gpu whole
// devices of that vendor.
func podResource(name string, numGPU, gpuMilli int) (cluster.ResourceKind, error) {
	switch {
	case name == "":
		return cluster.ResourceAny, nil
	case name == resource.GPUMilli && numGPU != 1:
		return 0, fmt.Errorf("resource %s with num_gpu %d: it is a share of one GPU (num_gpu 1)", name, numGPU)
	case name == resource.GPUMilli:
		return cluster.ResourceMilli, nil
	}
	k, ok := cluster.ResourceOf(name)
	switch {
	case !ok:
		return 0, fmt.Errorf("resource %s: want nvidia.com/gpu, amd.com/gpu, habana.ai/gaudi, gpuplane.io/gpu-milli or nothing", Quote(name))
	case numGPU == 0 || gpuMilli != cluster.MilliGPU:
		return 0, fmt.Errorf("resource %s with num_gpu %d and gpu_milli %d: it counts whole devices (num_gpu at least 1, gpu_milli 1000)", name, numGPU, gpuMilli)
	}
	return k, nil
}
