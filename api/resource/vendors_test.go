// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import "testing"

// TestIsAccelerator: the vendors' resource names as their device plugins
// advertise them (ROCm/k8s-device-plugin: amd.com/gpu, and under the
// mixed strategy amd.com/<partition label>; HabanaAI's plugin:
// habana.ai/gaudi); other names are not accelerators.
func TestIsAccelerator(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu": true, "amd.com/gpu": true, "habana.ai/gaudi": true,
		"amd.com/cpx_nps1": true, "amd.com/spx_nps1": true,
		"amd.com/gpu.shared": false, "amd.com/fpga": false, "habana.ai/gaudi2": false, "gpu.intel.com/i915": false,
	} {
		if got := IsAccelerator(name); got != want {
			t.Errorf("IsAccelerator(%q) = %v, want %v", name, got, want)
		}
	}
	if got := AMDPartitionResource("cpx_nps1"); got != "amd.com/cpx_nps1" {
		t.Errorf("AMDPartitionResource = %q", got)
	}
}
