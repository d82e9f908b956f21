// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AMD's names: the extended resource its device plugin advertises and the
// node labels its node labeller writes (github.com/ROCm/k8s-device-plugin,
// cmd/k8s-device-plugin/main.go getResourceList, and
// cmd/k8s-node-labeller/main.go createLabelPrefix and labelGenerators:
// "amd.com/gpu." and the property's name).
const (
	AMDPrefix = "amd.com/"
	// AMDGPU is the resource of AMD GPUs under the device plugin's single
	// resource naming strategy (its default): one device per GPU, or per
	// partition of a partitioned GPU (an MI300X in CPX is 8). Under its
	// mixed strategy each partition mode is a resource of its own,
	// "amd.com/" and LabelAMDPartition's value (amd.com/cpx_nps1), which
	// gpuplane does not read.
	AMDGPU = "amd.com/gpu"
	// LabelAMDProductName is the GPUs' product name with '_' for ' ' and
	// no parentheses, e.g. "AMD_Instinct_MI300X".
	LabelAMDProductName = "amd.com/gpu.product-name"
	// LabelAMDPartition is the node's partition mode when all its GPUs
	// share one, compute and memory mode in lower case joined by '_':
	// "cpx_nps1" (internal/pkg/amdgpu UniquePartitionConfigCount). The
	// labeller's other labels (amd.com/gpu.vram, .cu-count, .device-id,
	// .compute-partitioning-supported, ...) gpuplane does not read.
	LabelAMDPartition = "amd.com/gpu.compute-memory-partition"
)

// Intel Gaudi's name: the extended resource of Intel's (Habana Labs')
// Gaudi device plugin (github.com/HabanaAI/habanalabs-k8s-device-plugin,
// its resourceName), one device per Gaudi accelerator.
const Gaudi = "habana.ai/gaudi"

// AMDInstinctPrefix starts AMD's node labeller's product name of an AMD
// Instinct GPU (LabelAMDProductName): the amdgpu driver's product name
// "AMD Instinct MI300X" with '_' for ' ' is "AMD_Instinct_MI300X"; what
// follows it is gpuplane's catalog name of the model (internal/gpu:
// MI250X, MI300X, MI325X, MI355X).
const AMDInstinctPrefix = "AMD_Instinct_"

// IsAccelerator reports whether name is an extended resource whose devices
// are accelerators of any vendor gpuplane knows: NVIDIA's and gpuplane's
// (IsGPU), AMD's amd.com/gpu, Intel's habana.ai/gaudi. AMD's partition
// resources under its device plugin's mixed strategy (amd.com/cpx_nps1)
// are not: gpuplane reads the single strategy's amd.com/gpu only.
func IsAccelerator(name string) bool {
	return IsGPU(name) || name == AMDGPU || name == Gaudi
}

// VendorRequest returns the resource of another vendor than NVIDIA that
// a pod's effective requests req ask for (PodRequests: devices), AMDGPU
// or Gaudi, and how many devices (1..MaxGPUs); "" and 0 when the pod asks
// for neither. It is the one rule for such a pod: devices of one vendor's
// resource and no other accelerator request (neither the other vendor's,
// nor NVIDIA's GPU, GPUMilli, a MIG device or a time-sliced replica),
// since no node serves two vendors' devices; breaking it is an error that
// says so, as is more than MaxGPUs.
func VendorRequest(req map[string]int64) (string, int64, error) {
	name, n := "", int64(0)
	for _, k := range []string{AMDGPU, Gaudi} {
		if v := req[k]; v > 0 {
			if name != "" {
				return "", 0, fmt.Errorf("%s %d and %s %d: no node serves accelerators of two vendors", name, n, k, v)
			}
			name, n = k, v
		}
	}
	if name == "" {
		return "", 0, nil
	}
	if n > MaxGPUs {
		return "", 0, fmt.Errorf("%s %d above %d", name, n, MaxGPUs)
	}
	for _, k := range slices.Sorted(maps.Keys(req)) {
		nvidia := k == GPU || k == GPU+SharedSuffix || strings.HasPrefix(k, MIGPrefix)
		if nvidia && req[k] > 0 || k == GPUMilli {
			return "", 0, fmt.Errorf("%s %d with %s: no node serves accelerators of two vendors", name, n, k)
		}
	}
	return name, n, nil
}
