// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import "testing"

func TestIsGPU(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu":                true,
		"nvidia.com/gpu.shared":         true, // renameByDefault
		"nvidia.com/mig-1g.10gb":        true,
		"nvidia.com/mig-1g.10gb.shared": true,
		"gpuplane.io/gpu-milli":         true,
		"rdma/hca_shared_devices_a":     false, // another device plugin (an RDMA NIC)
		"nvidia.com/mig-":               false,
		"nvidia.com/gpus":               false,
		"example.com/gpu":               false,
		"":                              false,
	} {
		if got := IsGPU(name); got != want {
			t.Errorf("IsGPU(%q) = %v, want %v", name, got, want)
		}
	}
}
