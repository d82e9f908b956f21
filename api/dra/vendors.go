// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

// Other vendors' DRA drivers, whose ResourceSlices gpuplane reads.
const (
	// AMDDriverName is AMD's DRA driver and its DeviceClass
	// (github.com/ROCm/k8s-gpu-dra-driver, its consts package
	// DriverName). Its devices' "type" attribute is "amdgpu" for a
	// whole GPU (AMDTypeGPU); partition modes are spelled "cpx" and
	// "nps1" in lower case, "spx_nps1" a GPU not partitioned.
	AMDDriverName = "gpu.amd.com"
	AMDTypeGPU    = "amdgpu"
	// GaudiDriverName is Intel's DRA driver for Gaudi and its
	// DeviceClass (github.com/intel/intel-resource-drivers-for-kubernetes,
	// the Gaudi driver); a device's "model" attribute is "Gaudi2" or
	// "Gaudi3", as claims select it
	// (device.attributes["gaudi.intel.com"].model == 'Gaudi2').
	GaudiDriverName = "gaudi.intel.com"
	AttrGaudiModel  = "model"
)
