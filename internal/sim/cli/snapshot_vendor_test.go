// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"math"
	"strings"
	"testing"
)

// TestSnapshotMixedVendors simulates internal/snapshot's mixed-vendor
// fixture: an H100-80GB node (8 GPUs), an MI300X node in CPX/NPS1 (64
// amd.com/gpu) with ml/train-amd running on 8 of them, a Gaudi3 node (8
// habana.ai/gaudi). Pending: train-gaudi (4 habana.ai/gaudi),
// infer-nvidia (1 nvidia.com/gpu), infer-amd (1 amd.com/gpu): each
// places on its vendor's node only, in every run. Allocated at the end: 8
// + 4 + 1 + 1 = 14 of 80 GPUs; idle 66: 7 H100 at 11.06, 55 CPX
// partitions at 6.00/8 = 0.75, 4 Gaudi3 at 11.06 USD per hour = 77.42 +
// 41.25 + 44.24 = 162.91 USD per hour.
func TestSnapshotMixedVendors(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds = "../../snapshot/testdata/mixed-vendors.json", "fgd,leastallocated,random", 2
	rep := runJSON(t, o)
	if rep.GPUs != 80 || rep.Nodes != 3 {
		t.Fatalf("%d GPUs, %d nodes; want 80, 3", rep.GPUs, rep.Nodes)
	}
	for _, r := range rep.Results {
		if r.FailedPods != 0 || r.AllocatedGPUMilli != 14000 || math.Abs(r.IdleUSDPerHour-162.91) > 1e-6 {
			t.Errorf("%s seed %d: %d failed, %d milli-GPU, %v idle USD/h; want 0, 14000, 162.91", r.Policy, r.Seed, r.FailedPods, r.AllocatedGPUMilli, r.IdleUSDPerHour)
		}
	}
	want := map[string]string{"ml/train-gaudi": "gaudi3-", "ml/infer-nvidia": "h100-", "ml/infer-amd": "mi300x-"}
	for _, p := range rep.SnapshotPods {
		if !strings.HasPrefix(p.Node, want[p.Pod]) || p.Placed != p.Runs {
			t.Errorf("%+v: want node %s* in every run", p, want[p.Pod])
		}
	}
}
