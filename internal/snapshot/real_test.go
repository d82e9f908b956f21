// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"strings"
	"testing"
)

// list wraps items in the List of `kubectl get nodes,pods -A -o json`.
func list(items ...string) string {
	return `{"apiVersion":"v1","kind":"List","items":[` + strings.Join(items, ",") + `]}`
}

// singleNode is an H100 server under NVIDIA's single MIG strategy as
// gpuplane's agent labels it (internal/node/labels productLabels): 8 GPUs
// of 7 1g.10gb instances each, served as 56 nvidia.com/gpu and counted in
// nvidia.com/gpu.count, the profile in the product's suffix.
const singleNode = `{"kind":"Node","metadata":{"name":"h100-0","labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb",` +
	`"nvidia.com/gpu.count":"56","nvidia.com/mig.strategy":"single","nvidia.com/gpu.memory":"9984"}},` +
	`"status":{"allocatable":{"cpu":"112","memory":"2Ti","nvidia.com/gpu":"56"}}}`

// TestSnapshotSingleMIG: 56 instances of 1g.10gb, 7 to an H100-80GB
// (gpu.MIGFullCount), are 56 / 7 = 8 GPUs, each laid out as 7 x 1g.10gb;
// with time-slicing (replicas 2, -SHARED) the 112 devices are 56
// instances, the same 8 GPUs. 3g.40gb, 2 to a GPU: 6 devices are 3 GPUs.
func TestSnapshotSingleMIG(t *testing.T) {
	for _, tc := range []struct {
		name, node string
		gpus       int
		layout     string
	}{
		{"single", singleNode, 8, strings.Repeat("1g.10gb ", 7)},
		{"shared", strings.NewReplacer(`1g.10gb"`, `1g.10gb-SHARED","nvidia.com/gpu.replicas":"2"`, `"nvidia.com/gpu":"56"`, `"nvidia.com/gpu":"112"`).Replace(singleNode), 8, strings.Repeat("1g.10gb ", 7)},
		{"3g", strings.NewReplacer("1g.10gb", "3g.40gb", `"56"`, `"6"`).Replace(singleNode), 3, "3g.40gb 3g.40gb "},
	} {
		s, err := Read("s.json", strings.NewReader(list(tc.node)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n := s.Nodes[0]
		if n.GPUs != tc.gpus || n.Model != "H100-80GB" || strings.Join(n.NodeSpec.MIG, " ")+" " != tc.layout || n.MIGGPUs != 0 {
			t.Errorf("%s: %d GPUs of %s, layout %v on %d; want %d of H100-80GB, %s on all", tc.name, n.GPUs, n.Model, n.NodeSpec.MIG, n.MIGGPUs, tc.gpus, tc.layout)
		}
	}
	// 50 instances do not divide into GPUs of 7: ceil(50/7) = 8 GPUs, no
	// one layout (simulated whole, with the reader's warning).
	s, err := Read("s.json", strings.NewReader(list(strings.ReplaceAll(singleNode, `"56"`, `"50"`))))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Nodes[0]; n.GPUs != 8 || n.NodeSpec.MIG != nil || n.MIG["nvidia.com/mig-1g.10gb"] != 50 {
		t.Errorf("50 instances: %d GPUs, layout %v, devices %v; want 8, none, 50 of 1g.10gb", n.GPUs, n.NodeSpec.MIG, n.MIG)
	}
}
