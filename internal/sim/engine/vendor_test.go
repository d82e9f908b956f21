// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestPrepareMixedVendors: one H100-80GB node (8 GPUs), one node of 8
// MI300X in CPX/NPS1 (64 GPUs) and one Gaudi3 node (8). 64 amd.com/gpu,
// 8 habana.ai/gaudi and 8 nvidia.com/gpu each fit their vendor's node; 9
// habana.ai/gaudi fit none (the Gaudi3 node has 8), and neither do 9
// nvidia.com/gpu: 2 unfit pods. A CPX partition costs 6.00/8 = 0.75 USD
// per GPU-hour (internal/cost/prices' MI300X price over 8 GPUs).
func TestPrepareMixedVendors(t *testing.T) {
	cpx := gpu.Partition{Compute: "CPX", Memory: "NPS1"}
	nodes := []trace.NodeSpec{
		{Name: "h", CPUMilli: 112000, MemoryMiB: 1 << 21, GPUs: 8, Model: "H100-80GB"},
		{Name: "m", CPUMilli: 96000, MemoryMiB: 1 << 21, GPUs: 64, Model: "MI300X", Vendor: gpu.AMD, Partition: cpx},
		{Name: "g", CPUMilli: 160000, MemoryMiB: 1 << 21, GPUs: 8, Model: "Gaudi3", Vendor: gpu.Intel},
	}
	pod := func(name string, n int8, k cluster.ResourceKind) trace.PodSpec {
		return trace.PodSpec{Name: name, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: n, GPUMilli: 1000, Resource: k}
	}
	pods := []trace.PodSpec{pod("a", 64, cluster.ResourceAMD), pod("b", 8, cluster.ResourceGaudi), pod("c", 8, cluster.ResourceGPU), pod("d", 9, cluster.ResourceGaudi), pod("e", 9, cluster.ResourceGPU)}
	w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.UnfitPods(); got != 2 {
		t.Errorf("unfit pods %d, want 2: %v", got, w.Warnings())
	}
	if got := w.Prices(); got["MI300X"] != 0.75 || got["H100-80GB"] != 11.06 || got["Gaudi3"] != 11.06 {
		t.Errorf("prices %v, want MI300X 0.75, H100-80GB 11.06, Gaudi3 11.06", got)
	}
	if n := w.template.Nodes[1]; n.Vendor != gpu.AMD || n.Partition != cpx || n.GPUs() != 64 {
		t.Errorf("MI300X node: %s, %q, %d GPUs", n.Vendor, n.Partition, n.GPUs())
	}
	// Two modes of one model: its GPUs would have two prices.
	nodes = append(nodes, trace.NodeSpec{Name: "m2", CPUMilli: 1000, MemoryMiB: 1024, GPUs: 8, Model: "MI300X", Vendor: gpu.AMD, Line: 4})
	if _, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil); err == nil || !strings.Contains(err.Error(), `nodes:4: node m2: model MI300X in partition modes CPX/NPS1 and none`) {
		t.Errorf("two modes: %v", err)
	}
}
