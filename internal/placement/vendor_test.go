// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestPlaceAcrossVendors: on a cluster of one H100-80GB node, one MI300X
// node in CPX/NPS1 (8 devices, 64 GPUs) and one Gaudi3 node, every policy
// puts an amd.com/gpu pod on the MI300X node, a habana.ai/gaudi pod on
// the Gaudi3 node and an nvidia.com/gpu pod on the H100 node, whatever it
// scores: the fit rule (cluster.Serves) rules the others out.
func TestPlaceAcrossVendors(t *testing.T) {
	cpx, _ := gpu.ParsePartition("CPX/NPS1")
	c := cluster.New()
	if _, err := c.AddNode("h100", 112000, 2<<20, 8, "H100-80GB"); err != nil {
		t.Fatal(err)
	}
	amd, err := cluster.NewPartitionedNode("mi300x", "MI300X", cpx, 96000, 1850<<10, 8)
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes = append(c.Nodes, amd)
	if _, err := c.AddNode("gaudi3", 160000, 1792<<10, 8, "Gaudi3"); err != nil {
		t.Fatal(err)
	}
	want := map[cluster.ResourceKind]int{cluster.ResourceGPU: 0, cluster.ResourceAMD: 1, cluster.ResourceGaudi: 2}
	for _, name := range Names {
		pol, err := New(name, NewTargetWorkload([]cluster.Pod{{NumGPU: 1, GPUMilli: 1000}}, 0.95))
		if err != nil {
			t.Fatal(err)
		}
		pl := NewPlacer(pol, TieFirst, rand.New(rand.NewPCG(1, 2)))
		for k, node := range want {
			p := cluster.Pod{Name: "p", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 2, GPUMilli: 1000, Resource: k}
			if i, gpus, ok := pl.Place(c, &p); !ok || i != node || gpus.Count() != 2 {
				t.Errorf("%s: %s pod placed on node %d (GPUs %b, %v), want node %d", name, k.Name(), i, uint64(gpus), ok, node)
			}
		}
	}
}
