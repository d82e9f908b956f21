// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"strings"
	"testing"
)

// TestSnapshotReplicasZero: gpu-feature-discovery labels
// nvidia.com/gpu.replicas "0" where no sharing applies, a node whose GPUs
// are all MIG-enabled under the mixed strategy (its internal/lm
// resource.go and mig-strategy_test.go); the reader takes it as 1. An
// A100-80GB server in mig-parted's all-balanced layout (2 x 1g.10gb,
// 2g.20gb, 3g.40gb on each of 8 GPUs), as the round trip
// (sim/cli TestRoundTripRealControlPlane) publishes it, found this.
func TestSnapshotReplicasZero(t *testing.T) {
	node := `{"kind":"Node","metadata":{"name":"a100mix-0","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB",` +
		`"nvidia.com/gpu.count":"8","nvidia.com/gpu.replicas":"0","nvidia.com/mig.strategy":"mixed"}},` +
		`"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/mig-1g.10gb":"16","nvidia.com/mig-2g.20gb":"8","nvidia.com/mig-3g.40gb":"8"}}}`
	s, err := Read("s.json", strings.NewReader(list(node)))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Nodes[0]; n.GPUs != 8 || n.Replicas != 1 || n.Shared || strings.Join(n.NodeSpec.MIG, " ") != "1g.10gb 1g.10gb 2g.20gb 3g.40gb" {
		t.Errorf("%d GPUs, replicas %d, shared %v, layout %v; want 8, 1, false, 2 x 1g.10gb + 2g.20gb + 3g.40gb", n.GPUs, n.Replicas, n.Shared, n.NodeSpec.MIG)
	}
	// Its device plugin serves MIG devices of 1, 2 and 3 compute slices
	// only (one resource per profile present: k8s-device-plugin internal/rm).
	if m := s.Nodes[0].MIGServed; m != 1<<1|1<<2|1<<3 {
		t.Errorf("MIGServed %b, want 1110", m)
	}
	if _, err := Read("s.json", strings.NewReader(list(strings.Replace(node, `replicas":"0"`, `replicas":"-1"`, 1)))); err == nil || !strings.Contains(err.Error(), "not a count of at least 0") {
		t.Errorf("replicas -1: %v, want not a count", err)
	}
}
