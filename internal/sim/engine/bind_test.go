// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestBind: one node of 8 GPUs runs a pod on GPUs 2..7 (given) and a pod
// of 0.6 GPU (chosen by best fit among GPUs 0 and 1, both free: the first,
// GPU 0). Of three pending pods of one whole GPU only one places, on GPU 1,
// the only whole one left; a pending 0.4-GPU pod fills GPU 0. Allocated:
// 6 + 0.6 + 1 + 0.4 = 8 of 8 GPUs, 2 pods failed. A third bound pod asks
// for more CPU than the node has: left out with a warning.
func TestBind(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 1 << 18, GPUs: 8, Model: "A100-80GB"}}
	pods := []trace.PodSpec{
		{Name: "w0", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "w1", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "w2", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "s", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 400},
	}
	w, err := Prepare("snap", nodes, "snap", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	warn, err := w.Bind("snap", []Bound{
		{Node: "n", Pod: trace.PodSpec{Name: "train", CPUMilli: 8000, MemoryMiB: 1 << 16, NumGPU: 6, GPUMilli: 1000}, GPUs: []int{2, 3, 4, 5, 6, 7}},
		{Node: "n", Pod: trace.PodSpec{Name: "infer", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 600}},
		{Node: "n", Pod: trace.PodSpec{Name: "huge", CPUMilli: 100000, MemoryMiB: 1024}},
	})
	if err != nil || len(warn) != 1 || !strings.Contains(warn[0], `pod "huge" does not fit what node "n" has left`) {
		t.Fatalf("Bind: %v, %q", err, warn)
	}
	rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"fgd", "bestfit"}, Seeds: 3, Seed: 7, Once: true, TieBreak: placement.TieFirst, Placements: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.FailedPods != 2 || r.AllocatedGPUMilli != 8000 || r.Pods != 4 {
			t.Errorf("%s seed %d: %d failed, %d milli-GPU allocated, %d pods; want 2, 8000, 4", r.Policy, r.Seed, r.FailedPods, r.AllocatedGPUMilli, r.Pods)
		}
		for _, p := range r.Placements {
			switch {
			case p.Pod == "s" && (p.Node != "n" || p.GPUs != cluster.GPUSet(1)):
				t.Errorf("%s: s on %q GPUs %v, want GPU 0", r.Policy, p.Node, p.GPUs.Indices())
			case p.Node != "" && p.Pod != "s" && p.GPUs != cluster.GPUSet(2):
				t.Errorf("%s: %s on GPUs %v, want GPU 1", r.Policy, p.Pod, p.GPUs.Indices())
			}
		}
	}
	if _, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"fgd"}, Seeds: 1}); err == nil {
		t.Error("replay after Bind: no error")
	}
	if _, err := w.Bind("snap", []Bound{{Node: "gone", Pod: pods[0]}}); err == nil || !strings.Contains(err.Error(), `node "gone"`) {
		t.Errorf("unknown node: %v", err)
	}
}

// TestBindSharingStats: the GPUs of bound pods are needed GPUs. Bound:
// train on GPUs 2..7 of 8 A100-80GB, infer (0.6 GPU) on GPU 0 (best fit,
// the first). Pending: w0 (one whole GPU) takes GPU 1, the only whole one,
// and s (0.4 GPU) fills GPU 0 beside infer. GPUs needed: all 8, at 3.93
// USD per GPU-hour (internal/cost/prices's A100-80GB) = 31.44 USD/h, where the
// pending pods alone hold 2; shared pods: s only (with a bound pod);
// training pods: w0, on no shared GPU.
func TestBindSharingStats(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 1 << 18, GPUs: 8, Model: "A100-80GB"}}
	pods := []trace.PodSpec{
		{Name: "w0", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "s", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 400},
	}
	w, err := Prepare("snap", nodes, "snap", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Bind("snap", []Bound{
		{Node: "n", Pod: trace.PodSpec{Name: "train", CPUMilli: 8000, MemoryMiB: 1 << 16, NumGPU: 6, GPUMilli: 1000}, GPUs: []int{2, 3, 4, 5, 6, 7}},
		{Node: "n", Pod: trace.PodSpec{Name: "infer", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 600}},
	}); err != nil {
		t.Fatal(err)
	}
	v, _, err := w.WithSharing(Sharing{Mode: "fractional"}, nil, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), v, Config{Mode: "fill", Policies: []string{"fgd"}, Seeds: 1, Once: true})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Results[0].Sharing
	if s == nil {
		t.Fatal("no sharing stats")
	}
	if s.GPUsNeeded != 8 || math.Abs(s.GPUsNeededUSDPerHour-31.44) > 1e-9 || s.PlacedPods != 2 || s.SharedPods != 1 || s.TrainingPods != 1 || s.TrainingOnSharedGPU != 0 {
		t.Errorf("sharing stats %+v; want 8 GPUs needed, 31.44 USD/h, 2 placed, 1 shared, 1 training, 0 on a shared GPU", *s)
	}
}

// TestBindGPUsWarnings: the gpuplane.io/gpus indices are checked against
// the pod's GPU count, the node's GPUs and what is free, each with its own
// warning naming the file and line; the GPUs are then chosen again.
func TestBindGPUsWarnings(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 1 << 18, GPUs: 4, Model: "A100-80GB"}}
	pods := []trace.PodSpec{{Name: "w", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000}}
	for _, tc := range []struct {
		gpus []int
		want string
	}{
		{[]int{0, 1}, `snap:7: pod "b": its GPU indices [0 1] (annotation gpuplane.io/gpus) name 2 distinct GPUs, and it asks for 3; chosen again`},
		{[]int{0, 0, 1}, `snap:7: pod "b": its GPU indices [0 0 1] (annotation gpuplane.io/gpus) name 2 distinct GPUs, and it asks for 3; chosen again`},
		{[]int{1, 2, 5}, `snap:7: pod "b": its GPU indices [1 2 5] (annotation gpuplane.io/gpus) go past node "n"'s 4 GPUs; chosen again`},
		{[]int{0, 1, 2}, `snap:7: pod "b": GPUs [0 1 2] of node "n" are not free for it; chosen again`},
	} {
		w, err := Prepare("snap", nodes, "snap", pods, 0.95, nil)
		if err != nil {
			t.Fatal(err)
		}
		warn, err := w.Bind("snap", []Bound{
			{Node: "n", Pod: trace.PodSpec{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000}, GPUs: []int{0}},
			{Node: "n", Pod: trace.PodSpec{Name: "b", Line: 7, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 3, GPUMilli: 1000}, GPUs: tc.gpus},
		})
		if err != nil || len(warn) != 1 || warn[0] != tc.want {
			t.Errorf("%v: %v, %q; want %q", tc.gpus, err, warn, tc.want)
		}
	}
}

// TestBindKeepsDRAMIGMode: a DRA node of 2 A100s whose GPU 1 is in MIG
// mode (MIGModeGPUs 0b10) keeps that GPU MIGOnly through Bind, where it
// is, not the first GPU no pod of whole GPUs holds (GPU 0, before): the
// running 3g.40gb by its share (428 milli-GPU) takes GPU 1, and of two
// pending pods of nvidia.com/gpu one fits, on GPU 0; a pending
// 3g.40gb share fills GPU 1 beside the running one (856 of 1000).
// Allocated: 1000 + 428 + 428 = 1856 milli-GPU, 1 pod failed.
func TestBindKeepsDRAMIGMode(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 1 << 18, GPUs: 2, Model: "A100-80GB", MIGModeGPUs: 0b10}}
	pods := []trace.PodSpec{
		{Name: "w0", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Resource: cluster.ResourceGPU},
		{Name: "w1", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Resource: cluster.ResourceGPU},
		{Name: "m", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 428, Resource: cluster.ResourceMIG},
	}
	w, err := Prepare("snap", nodes, "snap", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	if warn, err := w.Bind("snap", []Bound{{Node: "n", Pod: trace.PodSpec{Name: "run", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 428, Resource: cluster.ResourceMIG}}}); err != nil || len(warn) != 0 {
		t.Fatalf("Bind: %v %q", err, warn)
	}
	if got := w.template.Nodes[0].MIGOnly; got != 0b10 {
		t.Fatalf("MIGOnly %b after Bind, want 10", got)
	}
	rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"bestfit"}, Seeds: 1, Seed: 7, Once: true, TieBreak: placement.TieFirst, Placements: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.FailedPods != 1 || r.AllocatedGPUMilli != 1856 {
		t.Errorf("%d failed, %d milli-GPU allocated; want 1, 1856", r.FailedPods, r.AllocatedGPUMilli)
	}
	for _, p := range r.Placements {
		if p.Node != "" && (p.Pod == "m") != (p.GPUs == cluster.GPUSet(0b10)) {
			t.Errorf("%s on GPUs %v", p.Pod, p.GPUs.Indices())
		}
	}
}
