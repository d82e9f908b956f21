// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"testing"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestGPUAPI replays, on one node of 2 GPUs with bestfit, a pod of one
// GPU (a, on GPU 0, deleted at t=2), a share of 300 (b, on GPU 1: GPU 0
// is held), another share of 300 (c, at t=3) and a pod of one GPU (d, at
// t=4). Under the device plugin bestfit puts c on the fuller GPU 1 (700
// free against 1000) and d starts on GPU 0; under DRA the allocator puts
// c on the first GPU that fits, GPU 0, and d never starts.
func TestGPUAPI(t *testing.T) {
	nan := math.NaN()
	pods := []trace.PodSpec{
		{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Creation: 0, Deletion: 2, Scheduled: nan, Line: 2},
		{Name: "b", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 300, Creation: 1, Deletion: 100, Scheduled: nan, Line: 3},
		{Name: "c", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 300, Creation: 3, Deletion: 100, Scheduled: nan, Line: 4},
		{Name: "d", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Creation: 4, Deletion: 100, Scheduled: nan, Line: 5},
	}
	nodes := []trace.NodeSpec{{Name: "n0", CPUMilli: 96000, MemoryMiB: 1 << 19, GPUs: 2, Model: "V100M32", Line: 2}}
	for _, tc := range []struct {
		api    placement.GPUAPI
		failed int
	}{{placement.DevicePlugin, 0}, {placement.DRA, 1}} {
		w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Seed: 1, TieBreak: placement.TieFirst, GPUAPI: tc.api})
		if err != nil {
			t.Fatal(err)
		}
		if r := rep.Results[0]; r.FailedPods != tc.failed {
			t.Errorf("%s: %d pods never started, want %d", tc.api, r.FailedPods, tc.failed)
		}
	}
}

// TestMIGOnDemand fills, each pod once, one node of 2 A100-80GB under
// mig with MIG on demand and the DRA allocator's choice: 7 shares of 100
// milli-GPU (1g.10gb each) and a pod of one whole GPU. The MIG share of
// the demand is 7 × 1/7 over that plus 1 whole GPU, 1/2: round(1/2 × 2)
// = 1 GPU in MIG mode, GPU 0; GPU 1 stays whole (a GPU in MIG mode serves
// no whole GPU). Whatever the order, the 1g instances are made on GPU 0
// and the whole GPU is GPU 1: all 8 placed, 7/7 + 1 GPU allocated (7
// held slices leave 0 free). An eighth 1g would fail or take the whole
// pod's GPU, by order.
func TestMIGOnDemand(t *testing.T) {
	var pods []trace.PodSpec
	for i := range 7 {
		pods = append(pods, trace.PodSpec{Name: "s" + string(rune('a'+i)), CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 100, Line: int32(i + 2)})
	}
	pods = append(pods, trace.PodSpec{Name: "w", CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Line: 10})
	nodes := []trace.NodeSpec{{Name: "n0", CPUMilli: 96000, MemoryMiB: 1 << 19, GPUs: 2, Model: "A100-80GB", Line: 2}}
	w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, layouts, err := w.WithSharing(Sharing{Mode: "mig", OnDemand: true}, nil, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if len(layouts) != 1 || layouts[0].Source != "on demand" || layouts[0].MIGGPUsPerNode != 1 || layouts[0].Nodes != 1 {
		t.Errorf("layouts %+v, want one of 1 node, 1 GPU on demand", layouts)
	}
	rep, err := Run(context.Background(), v, Config{Mode: "fill", Policies: []string{"fgd", "bestfit"}, Seeds: 3, Seed: 1, Once: true, TieBreak: placement.TieFirst, GPUAPI: placement.DRA})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.FailedPods != 0 || r.AllocatedGPUMilli != 2000 {
			t.Errorf("%s seed %d: %d failed, %d milli-GPU allocated; want 0, 2000", r.Policy, r.Seed, r.FailedPods, r.AllocatedGPUMilli)
		}
	}
}
