// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import "strings"

// AMD's names: the extended resource its device plugin advertises and the
// node labels its node labeller writes (github.com/ROCm/k8s-device-plugin,
// cmd/k8s-device-plugin/main.go getResourceList, and
// cmd/k8s-node-labeller/main.go createLabelPrefix and labelGenerators:
// "amd.com/gpu." and the property's name).
const (
	AMDPrefix = "amd.com/"
	// AMDGPU is the resource of AMD GPUs under the device plugin's single
	// resource naming strategy (its default): one device per GPU, or per
	// partition of a partitioned GPU (an MI300X in CPX is 8).
	AMDGPU = "amd.com/gpu"
	// LabelAMDProductName is the GPUs' product name with '_' for ' ' and
	// no parentheses, e.g. "AMD_Instinct_MI300X".
	LabelAMDProductName = "amd.com/gpu.product-name"
	// LabelAMDPartition is the node's partition mode when all its GPUs
	// share one, compute and memory mode in lower case joined by '_':
	// "cpx_nps1" (internal/pkg/amdgpu UniquePartitionConfigCount).
	LabelAMDPartition = "amd.com/gpu.compute-memory-partition"
	// LabelAMDComputePartitioning and LabelAMDMemoryPartitioning
	// ("true"/"false") say whether the GPUs can be partitioned.
	LabelAMDComputePartitioning = "amd.com/gpu.compute-partitioning-supported"
	LabelAMDMemoryPartitioning  = "amd.com/gpu.memory-partitioning-supported"
	// LabelAMDVRAM is one GPU's memory in GiB with a "G", e.g. "192G";
	// LabelAMDCUCount its compute units; LabelAMDDeviceID its PCI
	// device ID in hex without 0x ("74a1").
	LabelAMDVRAM     = "amd.com/gpu.vram"
	LabelAMDCUCount  = "amd.com/gpu.cu-count"
	LabelAMDDeviceID = "amd.com/gpu.device-id"
)

// AMDPartitionResource is the resource of a partition mode under AMD's
// device plugin's mixed naming strategy: "amd.com/" and the mode as
// LabelAMDPartition writes it, e.g. "amd.com/cpx_nps1".
func AMDPartitionResource(label string) string { return AMDPrefix + label }

// Intel Gaudi's name: the extended resource of Intel's (Habana Labs')
// Gaudi device plugin (github.com/HabanaAI/habanalabs-k8s-device-plugin,
// its resourceName), one device per Gaudi accelerator.
const Gaudi = "habana.ai/gaudi"

// IsAccelerator reports whether name is a whole-device accelerator
// resource of any vendor gpuplane knows: NVIDIA's (IsGPU), AMD's
// amd.com/gpu or a mixed-strategy partition resource (amd.com/cpx_nps1),
// or Intel's habana.ai/gaudi.
func IsAccelerator(name string) bool {
	return IsGPU(name) || name == AMDGPU || name == Gaudi || isAMDPartitionResource(name)
}

// isAMDPartitionResource reports whether name is amd.com/<compute>_<memory>
// (amd.com/cpx_nps1).
func isAMDPartitionResource(name string) bool {
	rest, ok := strings.CutPrefix(name, AMDPrefix)
	c, m, two := strings.Cut(rest, "_")
	return ok && two && strings.HasSuffix(c, "px") && strings.HasPrefix(m, "nps")
}
