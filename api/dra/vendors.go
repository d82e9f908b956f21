// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

// Other vendors' DRA drivers, whose ResourceSlices gpuplane reads.
const (
	// AMDDriverName is AMD's DRA driver and its DeviceClass
	// (github.com/ROCm/k8s-gpu-dra-driver, its consts package
	// DriverName). Its devices' "type" attribute is "amdgpu" for a
	// whole GPU (AMDTypeGPU), "amdgpu-partition" for a partition of a
	// partitioned GPU (AMDTypePartition), each partition a device of its
	// own named like a GPU ("gpu-<card>-<renderD>"); productName is the
	// board's product_name with spaces as "_" ("AMD_Instinct_MI300X"),
	// partitionProfile the compute and memory modes in lower case
	// ("cpx_nps1", "spx_nps1" a GPU not partitioned), capacity memory
	// in bytes (cmd/gpu-kubeletplugin deviceinfo.go, types.go,
	// discovery.go at 2622427226d5ac361c3588284f4815e0dae11eaa). Its
	// chart's DeviceClass gpu.amd.com selects device.driver ==
	// 'gpu.amd.com'.
	AMDDriverName           = "gpu.amd.com"
	AMDTypeGPU              = "amdgpu"
	AMDTypePartition        = "amdgpu-partition"
	AttrAMDPartitionProfile = "partitionProfile"
	// GaudiDriverName is Intel's DRA driver for Gaudi and its
	// DeviceClass (github.com/intel/intel-resource-drivers-for-kubernetes,
	// the Gaudi driver); a device's "model" attribute is "Gaudi2" or
	// "Gaudi3", as claims select it
	// (device.attributes["gaudi.intel.com"].model == 'Gaudi2'); one
	// device per Gaudi, named by its PCI address and device ID, with
	// attributes model, serial and healthy and no capacity
	// (cmd/kubelet-gaudi-plugin/node_state.go, pkg/gaudi/device/device.go
	// ModelNames at 1da939faa33a90dd641d0327cdcdcbbfaa1acdb4). Its
	// chart's DeviceClass gaudi.intel.com selects device.driver ==
	// "gaudi.intel.com".
	GaudiDriverName = "gaudi.intel.com"
	AttrGaudiModel  = "model"
)
