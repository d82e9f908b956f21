// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/trace"
)

func replayGangs(t *testing.T, w *Workload, gangs bool) Result {
	t.Helper()
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Seed: 1, Placements: true, Gangs: gangs})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Results[0]
}

// TestGangsWaitWhole: two nodes of one T4. solo runs 0..100; gang ddp
// (ddp#0, ddp#1, one GPU each, running 90 s: scheduled at 500 and deleted
// at 590 in the trace) arrives at 10. Pod by pod, ddp#0 starts at 10 on the
// free GPU (wait 0) and ends at 100, when solo ends too, and ddp#1 starts
// at 100 (wait 90): mean wait (0+0+90)/3 = 30 s. As a gang, both wait for
// two free GPUs, until 100: waits 90 and 90, mean (0+90+90)/3 = 60 s.
func TestGangsWaitWhole(t *testing.T) {
	pod := func(name string, created, scheduled, deleted float64) trace.PodSpec {
		return trace.PodSpec{Name: name, CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Creation: created, Scheduled: scheduled, Deletion: deleted}
	}
	nodes := []trace.NodeSpec{{Name: "n1", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 1, Model: "T4"}, {Name: "n2", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 1, Model: "T4"}}
	pods := []trace.PodSpec{pod("solo", 0, 0, 100), pod("ddp#0", 10, 500, 590), pod("ddp#1", 10, 500, 590)}
	for _, c := range []struct {
		gangs  bool
		mean   float64
		start0 float64
		start1 float64
	}{{false, 30, 10, 100}, {true, 60, 100, 100}} {
		r := replayGangs(t, prepare(t, nodes, pods), c.gangs)
		if got := r.Replay.QueueDelayMeanSeconds; got != c.mean {
			t.Errorf("gangs %v: mean wait %v s, want %v", c.gangs, got, c.mean)
		}
		for _, p := range r.Placements {
			if (p.Pod == "ddp#0" && p.StartSeconds != c.start0) || (p.Pod == "ddp#1" && p.StartSeconds != c.start1) {
				t.Errorf("gangs %v: %s started at %v, want ddp#0 %v, ddp#1 %v", c.gangs, p.Pod, p.StartSeconds, c.start0, c.start1)
			}
		}
		if r.FailedPods != 0 {
			t.Errorf("gangs %v: %d failed", c.gangs, r.FailedPods)
		}
	}
}

// TestGangUnfitBindsNothing: one node of two T4. Gang big: big#0 asks 1
// GPU, big#1 asks 4, which no node has. Pod by pod big#0 runs and big#1
// fails (no node fits); as a gang neither runs: big#1 for its own reason,
// big#0 gang_unfit. A gang whose pod is deleted while waiting never
// starts: w#0 and w#1 (2 GPUs each) wait behind hold (0..100); w#1 is
// deleted at 50, so w#0 never starts (gang_incomplete at 50), though the
// node is free from 100.
func TestGangUnfitBindsNothing(t *testing.T) {
	nan := math.NaN()
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 2, Model: "T4"}}
	pods := []trace.PodSpec{
		{Name: "big#0", CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Creation: 0, Scheduled: 0, Deletion: nan},
		{Name: "big#1", CPUMilli: 100, MemoryMiB: 100, NumGPU: 4, GPUMilli: 1000, Creation: 0, Scheduled: 0, Deletion: nan},
	}
	r := replayGangs(t, prepare(t, nodes, pods), true)
	if r.AllocatedGPUMilli != 0 || r.FailedPods != 2 {
		t.Errorf("unfit gang: allocated %d, failed %d; want 0 and 2", r.AllocatedGPUMilli, r.FailedPods)
	}
	for _, p := range r.Placements {
		if p.Pod == "big#0" && p.Reason != ReasonGangUnfit {
			t.Errorf("big#0 %+v, want %s", p, ReasonGangUnfit)
		}
	}
	if r := replayGangs(t, prepare(t, nodes, pods), false); r.FailedPods != 1 {
		t.Errorf("pod by pod: failed %d, want 1 (big#1)", r.FailedPods)
	}

	pods = []trace.PodSpec{
		{Name: "hold", CPUMilli: 100, MemoryMiB: 100, NumGPU: 2, GPUMilli: 1000, Creation: 0, Scheduled: 0, Deletion: 100},
		{Name: "w#0", CPUMilli: 100, MemoryMiB: 100, NumGPU: 2, GPUMilli: 1000, Creation: 10, Scheduled: nan, Deletion: 500},
		{Name: "w#1", CPUMilli: 100, MemoryMiB: 100, NumGPU: 2, GPUMilli: 1000, Creation: 10, Scheduled: nan, Deletion: 50},
	}
	r = replayGangs(t, prepare(t, nodes, pods), true)
	reasons := map[string]string{}
	for _, p := range r.Placements {
		reasons[p.Pod] = p.Reason
	}
	if reasons["w#1"] != ReasonDeleted || reasons["w#0"] != ReasonGangIncomplete || r.FailedPods != 2 {
		t.Errorf("reasons %v, failed %d; want w#1 %s, w#0 %s", reasons, r.FailedPods, ReasonDeleted, ReasonGangIncomplete)
	}
}

// TestGangsConfig: gangs apply to replay without teams.
func TestGangsConfig(t *testing.T) {
	w := prepare(t, []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 1, Model: "T4"}},
		[]trace.PodSpec{{Name: "a#0", CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000}})
	_, err := Run(context.Background(), w, Config{Mode: "fill", Inflate: 1, Policies: []string{"bestfit"}, Seeds: 1, Gangs: true})
	if err == nil || !strings.Contains(err.Error(), "gangs apply to replay without teams only") {
		t.Errorf("fill with gangs: %v", err)
	}
}
