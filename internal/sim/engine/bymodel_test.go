// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"reflect"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestByModel: two T4 nodes of 2 GPUs, one V100M16 node of 1 GPU, one
// CPU-only node. On T4 node a a whole GPU and a half GPU are allocated
// (1500 of 2000 milli-GPU: 750 per mille), node b is idle; the V100 is
// full. T4: 1500 of 4000 = 0.375; V100M16: 1000 of 1000.
func TestByModel(t *testing.T) {
	c := cluster.New()
	for _, n := range []struct {
		name, model string
		gpus        int
	}{{"b", "T4", 2}, {"v", "V100M16", 1}, {"a", "T4", 2}, {"cpu", "", 0}} {
		if _, err := c.AddNode(n.name, 32000, 65536, n.gpus, n.model); err != nil {
			t.Fatal(err)
		}
	}
	whole := cluster.Pod{Name: "w", CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000}
	half := cluster.Pod{Name: "h", CPUMilli: 1000, NumGPU: 1, GPUMilli: 500}
	for _, a := range []struct {
		node int
		p    *cluster.Pod
		gpus cluster.GPUSet
	}{{2, &whole, 1 << 0}, {2, &half, 1 << 1}, {1, &whole, 1 << 0}} {
		if err := c.Allocate(a.node, a.p, a.gpus); err != nil {
			t.Fatal(err)
		}
	}
	want := []ModelUse{
		{Model: "T4", Nodes: 2, GPUs: 4, AllocatedGPUMilli: 1500, AllocationRatio: 0.375, NodeAllocation: []int{750, 0}},
		{Model: "V100M16", Nodes: 1, GPUs: 1, AllocatedGPUMilli: 1000, AllocationRatio: 1, NodeAllocation: []int{1000}},
	}
	if got := byModel(c); !reflect.DeepEqual(got, want) {
		t.Errorf("byModel =\n%+v\nwant\n%+v", got, want)
	}
}

// TestNodeDetailFirstSeedOnly: with NodeDetail the first seed's result
// keeps the per-node picture, the others drop it; without, none has it.
// Two whole-GPU pods on one node of 2 T4s fill it (inflate 1).
func TestNodeDetailFirstSeedOnly(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 8192, GPUs: 2, Model: "T4"}}
	pods := []trace.PodSpec{
		{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "b", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
	}
	w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, detail := range []bool{true, false} {
		rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"bestfit"}, Seeds: 2, Seed: 7, Inflate: 1, NodeDetail: detail})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if len(r.ByModel) != 1 || r.ByModel[0].AllocatedGPUMilli != 2000 || r.ByModel[0].AllocationRatio != 1 {
				t.Errorf("seed %d: by model %+v, want T4 2000 milli-GPU allocated", r.Seed, r.ByModel)
				continue
			}
			got := r.ByModel[0].NodeAllocation
			if keep := detail && r.Seed == 7; keep != (got != nil) || (keep && !reflect.DeepEqual(got, []int{1000})) {
				t.Errorf("detail %v seed %d: node allocation %v", detail, r.Seed, got)
			}
		}
	}
}
