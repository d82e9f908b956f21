// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestRealKubeletDRANVIDIAShares: with --dra-consumable-shares=4 (NVIDIA's
// driver's --consumable-shares=4, sigs.k8s.io/dra-driver-nvidia-gpu commit
// 95932046, consumable_shares.go) the one H100 (81920Mi) is published with
// "shares" 4 (default 1) and memory defaulting to 0. NVIDIA's
// integer-sharing.yaml template (demo/specs/consumable-shares: one
// device of class gpu.nvidia.com, nothing more) then gives each pod a
// share, worked out by hand: four pods run, each consuming 1 share, 0
// memory and milliGPU's default 1, holding 1000/4 = 250 milli-GPU
// (GPUPLANE_GPU_SHARE=250); a fifth waits (5 shares exceed 4); with one
// gone it runs.
func TestRealKubeletDRANVIDIAShares(t *testing.T) {
	d := startDRAEnv(t, draOneGPU, "--dra-consumable-shares=4")
	d.createTemplate("gpu-1share", "gpu.nvidia.com", nil)
	ids := map[string]bool{}
	for i := 0; i < 4; i++ {
		p := fmt.Sprint("q", i)
		d.createClaimPod(p, "gpu-1share")
		d.waitRunning(p)
		ids[d.shareOf(p, "1", "0", "250")] = true
		c, err := d.claim(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Status.Allocation.Devices.Results[0].ConsumedCapacity["shares"]; got.Cmp(resource.MustParse("1")) != 0 {
			t.Errorf("pod %s: consumed shares %s, want 1", p, got.String())
		}
	}
	if len(ids) != 4 {
		t.Errorf("share IDs %v, want 4 distinct", ids)
	}
	d.createClaimPod("q4", "gpu-1share")
	t.Logf("a fifth share: %s", d.waitUnschedulable("q4"))
	d.deletePod("q0")
	d.waitRunning("q4")
	d.shareOf("q4", "1", "0", "250")
}
