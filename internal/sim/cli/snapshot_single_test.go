// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"strings"
	"testing"
)

// TestSnapshotSingleServesNoMIGDevice: under NVIDIA's single MIG
// strategy the device plugin serves a node's MIG instances as
// nvidia.com/gpu and no nvidia.com/mig-<profile>, so kube-scheduler never
// puts a pod asking for nvidia.com/mig-1g.10gb there (the round trip,
// TestRoundTripRealControlPlane, found the simulator did). h100-0 (single,
// 56 x 1g.10gb) runs a pod of one nvidia.com/gpu, read on it; a100-0
// (mixed) has 7 instances of 1g.10gb, 1 held: of 8 pending pods asking for
// one, 6 place, all on a100-0, in every mode.
func TestSnapshotSingleServesNoMIGDevice(t *testing.T) {
	items := []string{
		nodeItem("h100-0", `"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb","nvidia.com/gpu.count":"56","nvidia.com/gpu.replicas":"1","nvidia.com/mig.strategy":"single"`, `"nvidia.com/gpu":"56"`),
		nodeItem("a100-0", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"1","nvidia.com/gpu.replicas":"0","nvidia.com/mig.strategy":"mixed"`, `"nvidia.com/mig-1g.10gb":"7"`),
		runningItem("nb-h100", "h100-0", `"nvidia.com/gpu":"1"`),
		runningItem("nb-a100", "a100-0", `"nvidia.com/mig-1g.10gb":"1"`),
	}
	for i := range 8 {
		items = append(items, podItem("nb-"+string(rune('a'+i)), `"nvidia.com/mig-1g.10gb":"1"`))
	}
	for _, sharing := range []string{"", "mig"} {
		rep, stderr := runItems(t, sharing, items...)
		if strings.Contains(stderr, "left out") {
			t.Errorf("--sharing %q: a running pod left out:\n%s", sharing, stderr)
		}
		placed := 0
		for _, p := range rep.SnapshotPods {
			switch p.Node {
			case "":
			case "a100-0":
				placed++
			default:
				t.Errorf("--sharing %q: %s on %s, which serves no nvidia.com/mig-1g.10gb", sharing, p.Pod, p.Node)
			}
		}
		if sharing == "mig" && placed != 6 {
			t.Errorf("--sharing mig: %d placed on a100-0, want its 6 free instances", placed)
		}
	}
}
