// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

func models(t *testing.T, spec string) ModelSet {
	t.Helper()
	m, err := gpu.ParseModels(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ModelSet(m)
}

// fitNode is a 2-GPU T4 node with 16 cores and 64 GiB, of which one pod
// holds 4 cores, 16 GiB and 600 milli-GPU of GPU 0: free 12000 millicores,
// 49152 MiB, GPUs [400, 1000].
func fitNode(t *testing.T) *Node {
	t.Helper()
	n, err := NewNode("t4-node", "T4", 16000, 65536, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Add(&Pod{Name: "bound", CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 600}, 1<<0); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestFitsReasons(t *testing.T) {
	t4 := fitNode(t)
	cpuOnly, err := NewNode("cpu-node", "", 8000, 32768, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		node   *Node
		pod    Pod
		reason string // "" when the pod fits
	}{
		{"share fits the used GPU", t4, Pod{CPUMilli: 2000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 400}, ""},
		{"share fits only the free GPU", t4, Pod{CPUMilli: 2000, NumGPU: 1, GPUMilli: 401}, ""},
		{"all free CPU and memory", t4, Pod{CPUMilli: 12000, MemoryMiB: 49152}, ""},
		{"CPU pod on a CPU-only node", &cpuOnly, Pod{CPUMilli: 8000, MemoryMiB: 32768}, ""},
		// A pod without GPUs that selects a GPU model (a nodeSelector on
		// nvidia.com/gpu.product) fits only nodes of that model, as
		// kube-scheduler's NodeAffinity filter says.
		{"model selector without GPUs, CPU-only node", &cpuOnly, Pod{CPUMilli: 1000, Models: models(t, "A10")}, "node(s) didn't match Pod's node affinity/selector"},
		{"model selector without GPUs, other model", t4, Pod{CPUMilli: 1000, Models: models(t, "A10")}, "node(s) didn't match Pod's node affinity/selector"},
		{"model selector without GPUs, its model", t4, Pod{CPUMilli: 1000, Models: models(t, "T4")}, ""},
		{"selector reported before cpu", t4, Pod{CPUMilli: 99000, Models: models(t, "A10")}, "node(s) didn't match Pod's node affinity/selector"},
		{"allowed model, other case", t4, Pod{NumGPU: 1, GPUMilli: 1000, Models: models(t, "v100m16|t4")}, ""},
		{"GPU pod on a CPU-only node", &cpuOnly, Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: 100}, "node has no GPUs"},
		// A100-80GB and H100-80GB are catalog IDs 8 and 9, named in ID order.
		{"model not allowed", t4, Pod{NumGPU: 1, GPUMilli: 100, Models: models(t, "H100-80GB|A100-80GB")}, "GPU model T4 not allowed (pod allows A100-80GB|H100-80GB)"},
		{"one millicore too many", t4, Pod{CPUMilli: 12001, NumGPU: 1, GPUMilli: 100}, "Insufficient cpu"},
		{"one MiB too many", t4, Pod{CPUMilli: 12000, MemoryMiB: 49153}, "Insufficient memory"},
		{"two whole GPUs, one is shared", t4, Pod{NumGPU: 2, GPUMilli: 1000}, "Insufficient nvidia.com/gpu"},
		{"more GPUs than the node has", t4, Pod{NumGPU: 3, GPUMilli: 1000}, "Insufficient nvidia.com/gpu"},
		{"cpu reported before GPUs", t4, Pod{CPUMilli: 20000, NumGPU: 3, GPUMilli: 1000}, "Insufficient cpu"},
		// What can never fit is reported before what is short today.
		{"no GPUs reported before cpu", &cpuOnly, Pod{CPUMilli: 99000, NumGPU: 1, GPUMilli: 100}, "node has no GPUs"},
		{"model reported before memory", t4, Pod{MemoryMiB: 1 << 20, NumGPU: 1, GPUMilli: 100, Models: models(t, "A10")}, "GPU model T4 not allowed (pod allows A10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := Fits(tc.node, &tc.pod)
			if ok != (tc.reason == "") || reason != tc.reason {
				t.Errorf("Fits = %v, %q; want %v, %q", ok, reason, tc.reason == "", tc.reason)
			}
			if f := Feasible(tc.node, &tc.pod); f != ok {
				t.Errorf("Feasible = %v, Fits = %v", f, ok)
			}
		})
	}
}

// TestFitsAllocatesOnlyForModelReasons: the simulator calls Fits-style
// checks millions of times, so a fit, or a reason that needs no
// formatting, must not allocate.
func TestFitsAllocatesOnlyForModelReasons(t *testing.T) {
	n := fitNode(t)
	for _, p := range []Pod{
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 300},
		{CPUMilli: 99000},
		{NumGPU: 2, GPUMilli: 1000},
	} {
		if a := testing.AllocsPerRun(100, func() { Fits(n, &p) }); a != 0 {
			t.Errorf("Fits(%+v) allocates %v times", p, a)
		}
	}
	if a := testing.AllocsPerRun(100, func() { Feasible(n, &Pod{NumGPU: 1, GPUMilli: 1, Models: 1 << 3}) }); a != 0 {
		t.Errorf("Feasible on a model misfit allocates %v times", a)
	}
}
