// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func prepare(t *testing.T, nodes []trace.NodeSpec, pods []trace.PodSpec) *Workload {
	t.Helper()
	for i := range pods {
		pods[i].Line = int32(i + 2)
	}
	w, err := Prepare("nodes.csv", nodes, "pods.csv", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestFillCountsPodLargerThanAnyNode is a fault report's first input: node n1
// (96 cores, 8 G2 GPUs), pod big (120 cores, 8 GPUs). Capacity 8000
// milli-GPU, the fill stops at ⌊1.3 × 8000⌋ = 10400: big arrives once
// (8000), a second sample would pass 10400. It fails, too large; the run
// goes on and ends with nothing allocated.
func TestFillCountsPodLargerThanAnyNode(t *testing.T) {
	w := prepare(t, []trace.NodeSpec{{Name: "n1", CPUMilli: 96000, MemoryMiB: 393216, GPUs: 8, Model: "G2"}},
		[]trace.PodSpec{{Name: "big", CPUMilli: 120000, MemoryMiB: 737280, NumGPU: 8, GPUMilli: 1000, GPUSpec: "G2"}})
	want := []string{`pods.csv:2: pod "big" (cpu_milli 120000, memory_mib 737280, num_gpu 8, gpu_milli 1000) is larger than every node of nodes.csv with a GPU model it allows ("G2"): too_large`,
		`1 of 1 pods of pods.csv fit no node of nodes.csv even when it is empty (1 listed above): each run counts them as arrived demand and as failed pods`}
	if got := w.Warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
	rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"bestfit"}, Seeds: 2, Seed: 1, Inflate: 1.3, Placements: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		wantFailed := []FailedGroup{{Reason: ReasonTooLarge, CPUMilli: 120000, MemoryMiB: 737280, NumGPU: 8, GPUMilli: 1000, GPUSpec: "G2", Pods: 1}}
		if r.Pods != 1 || r.FailedPods != 1 || r.ArrivedGPUMilli != 8000 || r.AllocatedGPUMilli != 0 || !reflect.DeepEqual(r.Failed, wantFailed) {
			t.Errorf("seed %d: pods %d failed %d arrived %d allocated %d, groups %+v", r.Seed, r.Pods, r.FailedPods, r.ArrivedGPUMilli, r.AllocatedGPUMilli, r.Failed)
		}
		if len(r.Placements) != 1 || r.Placements[0].Seq != 1 || r.Placements[0].Pod != "big" || r.Placements[0].Node != "" || r.Placements[0].Reason != ReasonTooLarge {
			t.Errorf("placements %+v", r.Placements)
		}
	}
}

// TestUnfitReasons: on two T4 nodes (2 GPUs, 16 cores each), pod p4
// (from the fault report) allows only V100M16|V100M32, which no node has; pod t asks
// for "t4" in lower case and fits; pod wide asks for 4 GPUs, more than
// any node has. In replay each unfit pod fails on arrival; t starts.
func TestUnfitReasons(t *testing.T) {
	nodes := []trace.NodeSpec{
		{Name: "a", CPUMilli: 16000, MemoryMiB: 65536, GPUs: 2, Model: "T4"},
		{Name: "b", CPUMilli: 16000, MemoryMiB: 65536, GPUs: 2, Model: "T4"},
	}
	nan := math.NaN()
	pods := []trace.PodSpec{
		{Name: "p4", CPUMilli: 16000, MemoryMiB: 32768, NumGPU: 1, GPUMilli: 1000, GPUSpec: "V100M16|V100M32", Creation: 0, Scheduled: 0, Deletion: 100},
		{Name: "t", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 500, GPUSpec: "t4", Creation: 5, Scheduled: nan, Deletion: nan},
		{Name: "wide", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 4, GPUMilli: 1000, Creation: 6, Scheduled: 6, Deletion: 50},
	}
	w := prepare(t, nodes, pods)
	want := []string{
		`nodes.csv has no GPU model "V100M16", which gpu_spec names in 1 pods (first pods.csv:2)`,
		`nodes.csv has no GPU model "V100M32", which gpu_spec names in 1 pods (first pods.csv:2)`,
		`pods.csv:2: pod "p4" (cpu_milli 16000, memory_mib 32768, num_gpu 1, gpu_milli 1000) allows GPU models "V100M16|V100M32", none of which nodes.csv has: no_model`,
		`pods.csv:4: pod "wide" (cpu_milli 1000, memory_mib 1024, num_gpu 4, gpu_milli 1000) is larger than every node of nodes.csv: too_large`,
		`2 of 3 pods of pods.csv fit no node of nodes.csv even when it is empty (2 listed above): each run counts them as arrived demand and as failed pods`,
	}
	if got := w.Warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Placements: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	wantFailed := []FailedGroup{
		{Reason: ReasonTooLarge, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 4, GPUMilli: 1000, Pods: 1},
		{Reason: ReasonNoModel, CPUMilli: 16000, MemoryMiB: 32768, NumGPU: 1, GPUMilli: 1000, GPUSpec: "V100M16|V100M32", Pods: 1},
	}
	// Equal counts: ordered by reason, then by shape (more GPUs first).
	wantFailed[0], wantFailed[1] = wantFailed[1], wantFailed[0]
	if r.Pods != 3 || r.FailedPods != 2 || r.Replay.Started != 1 || r.Replay.NeverStarted != 2 || !reflect.DeepEqual(r.Failed, wantFailed) {
		t.Errorf("pods %d failed %d started %d never %d groups %+v", r.Pods, r.FailedPods, r.Replay.Started, r.Replay.NeverStarted, r.Failed)
	}
	// 1000 + 500 + 4000 milli-GPU arrived; t holds 500.
	if r.ArrivedGPUMilli != 5500 || r.AllocatedGPUMilli != 500 {
		t.Errorf("arrived %d allocated %d, want 5500 and 500", r.ArrivedGPUMilli, r.AllocatedGPUMilli)
	}
	p := r.Placements
	if len(p) != 3 || p[0].Reason != ReasonNoModel || p[0].WaitSeconds != 0 || p[1].Pod != "t" || p[1].Node == "" ||
		p[1].GPUs.Count() != 1 || p[1].GPUMilli != 500 || p[1].StartSeconds != 5 || p[1].WaitSeconds != 0 || p[2].Reason != ReasonTooLarge {
		t.Errorf("placements %+v", p)
	}
}

// TestNoGPUNodes: a GPU pod on a cluster without GPUs fails (replay); fill
// refuses the workload before any policy runs, without a policy prefix.
func TestNoGPUNodes(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "c", CPUMilli: 16000, MemoryMiB: 65536}}
	pods := []trace.PodSpec{
		{Name: "g", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Creation: 0, Scheduled: 0, Deletion: 10},
		{Name: "c", CPUMilli: 1000, MemoryMiB: 1024, Creation: 0, Scheduled: 0, Deletion: 10},
	}
	w := prepare(t, nodes, pods)
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"fgd"}, Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	want := []FailedGroup{{Reason: ReasonNoGPUNodes, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Pods: 1}}
	if r.FailedPods != 1 || r.Replay.Started != 1 || !reflect.DeepEqual(r.Failed, want) {
		t.Errorf("failed %d started %d groups %+v", r.FailedPods, r.Replay.Started, r.Failed)
	}
	if !strings.Contains(w.Warnings()[0], "requests GPUs and no node of nodes.csv has any: no_gpu_nodes") {
		t.Errorf("warnings %q", w.Warnings())
	}
	_, err = Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"fgd"}, Seeds: 1, Inflate: 1.3})
	if err == nil || err.Error() != "fill needs a cluster with GPUs: arrived demand is measured against GPU capacity" {
		t.Errorf("fill: err = %v", err)
	}
}

// TestReplayNeedsCreationTimes: checked once, before any policy runs, with
// no policy and seed prefix.
func TestReplayNeedsCreationTimes(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 16000, MemoryMiB: 65536, GPUs: 1, Model: "T4"}}
	pods := []trace.PodSpec{{Name: "a", CPUMilli: 1, NumGPU: 1, GPUMilli: 1000, Creation: math.NaN()}}
	w := prepare(t, nodes, pods)
	_, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"fgd", "bestfit"}, Seeds: 3})
	if err == nil || err.Error() != `pods.csv:2: column creation_time: pod "a" has none, and replay needs it` {
		t.Errorf("err = %v", err)
	}
}

// TestReplayDeletedWhileWaiting is the fault report's second input: node-1 has 2
// T4s. p1 and p2 (470 milli-GPU) and p3 (440) start at 10, 11, 12 and run
// to 1000 (deletion − scheduled: 990, 989, 988 s); Best-fit puts p1 and p2
// on one GPU (940) and p3 on the other, so no GPU is whole. p5 (a whole
// GPU) arrives at 14, waits, and leaves the queue at its deletion time 20,
// never started after 6 s. The run spans 10..1000 = 990 s with
// 470·990 + 470·989 + 440·988 milli-GPU-seconds allocated of 2000·990.
func TestReplayDeletedWhileWaiting(t *testing.T) {
	nan := math.NaN()
	w := prepare(t, []trace.NodeSpec{{Name: "node-1", CPUMilli: 96000, MemoryMiB: 393216, GPUs: 2, Model: "T4"}}, []trace.PodSpec{
		{Name: "p1", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 1, GPUMilli: 470, QoS: "LS", Phase: "Running", Creation: 10, Deletion: 1000, Scheduled: 10},
		{Name: "p2", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 1, GPUMilli: 470, QoS: "LS", Phase: "Running", Creation: 11, Deletion: 1000, Scheduled: 11},
		{Name: "p3", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 1, GPUMilli: 440, QoS: "LS", Phase: "Running", Creation: 12, Deletion: 1000, Scheduled: 12},
		{Name: "p5", CPUMilli: 11908, MemoryMiB: 47104, NumGPU: 1, GPUMilli: 1000, QoS: "BE", Phase: "Pending", Creation: 14, Deletion: 20, Scheduled: nan},
	})
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Placements: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	st := r.Replay
	want := []FailedGroup{{Reason: ReasonDeleted, CPUMilli: 11908, MemoryMiB: 47104, NumGPU: 1, GPUMilli: 1000, Pods: 1}}
	if st.Started != 3 || st.NeverStarted != 1 || r.FailedPods != 1 || !reflect.DeepEqual(r.Failed, want) {
		t.Fatalf("started %d never %d failed %d groups %+v", st.Started, st.NeverStarted, r.FailedPods, r.Failed)
	}
	if st.QueueDelayMaxSeconds != 0 || st.SpanSeconds != 990 {
		t.Errorf("max delay %v span %v, want 0 and 990", st.QueueDelayMaxSeconds, st.SpanSeconds)
	}
	if want := (470.0*990 + 470*989 + 440*988) / (2000 * 990); math.Abs(st.TimeWeightedAllocationRatio-want) > 1e-12 {
		t.Errorf("time-weighted allocation %v, want %v", st.TimeWeightedAllocationRatio, want)
	}
	p5 := r.Placements[3]
	if p5.Pod != "p5" || p5.Reason != ReasonDeleted || p5.WaitSeconds != 6 || !math.IsNaN(p5.StartSeconds) || p5.Node != "" {
		t.Errorf("p5: %+v", p5)
	}
	p1 := r.Placements[0]
	if p1.Pod != "p1" || p1.Node != "node-1" || p1.StartSeconds != 10 || p1.WaitSeconds != 0 || p1.GPUMilli != 470 || p1.GPUs.Count() != 1 {
		t.Errorf("p1: %+v", p1)
	}
	if r.Placements[0].GPUs != r.Placements[1].GPUs || r.Placements[2].GPUs == r.Placements[0].GPUs {
		t.Errorf("best fit: p1, p2 on one GPU and p3 on the other; got %+v", r.Placements[:3])
	}
}

// TestEveryOpenbPodList runs every public openb pod list on both openb node
// lists (fill, one seed, Best-fit): pods that fit no node are failures, so
// every list runs.
func TestEveryOpenbPodList(t *testing.T) {
	dir := filepath.Dir(testenv.Openb(t, "openb_node_list_gpu_node.csv"))
	lists, err := filepath.Glob(filepath.Join(dir, "openb_pod_list_*.csv"))
	if err != nil || len(lists) == 0 {
		t.Fatalf("no pod lists in %s: %v", dir, err)
	}
	for _, nl := range []string{"openb_node_list_gpu_node.csv", "openb_node_list_all_node.csv"} {
		nf := filepath.Join(dir, nl)
		nodes, err := trace.ReadNodesFile(nf)
		if err != nil {
			t.Fatal(err)
		}
		for _, pf := range lists {
			pods, err := trace.ReadPodsFile(pf)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Prepare(nf, nodes, pf, pods, 0.95, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"bestfit"}, Seeds: 1, Seed: 42, Inflate: 1.3})
			if err != nil {
				t.Fatalf("%s + %s: %v", nl, filepath.Base(pf), err)
			}
			r := rep.Results[0]
			failed := 0
			for _, g := range r.Failed {
				failed += g.Pods
			}
			if r.Pods == 0 || failed != r.FailedPods || r.GPUAllocationRatio <= 0.5 {
				t.Errorf("%s + %s: %d pods, %d failed (groups say %d), allocation %.3f", nl, filepath.Base(pf), r.Pods, r.FailedPods, failed, r.GPUAllocationRatio)
			}
		}
	}
}

// TestReplayTimelineEndsEmpty: in the fault report's second input p1, p2 and p3 all
// leave at t=1000 (990 s after the first creation). The timeline's last
// point is the cluster then: nothing allocated, nothing waiting. It showed
// 910/2000 = 0.455, the state after only p1 had left, because a sample is
// taken at the first event of its interval.
func TestReplayTimelineEndsEmpty(t *testing.T) {
	nan := math.NaN()
	w := prepare(t, []trace.NodeSpec{{Name: "node-1", CPUMilli: 96000, MemoryMiB: 393216, GPUs: 2, Model: "T4"}}, []trace.PodSpec{
		{Name: "p1", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 1, GPUMilli: 470, Creation: 10, Deletion: 1000, Scheduled: 10},
		{Name: "p2", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 1, GPUMilli: 470, Creation: 11, Deletion: 1000, Scheduled: 11},
		{Name: "p3", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 1, GPUMilli: 440, Creation: 12, Deletion: 1000, Scheduled: 12},
		{Name: "p5", CPUMilli: 11908, MemoryMiB: 47104, NumGPU: 1, GPUMilli: 1000, Creation: 14, Deletion: 20, Scheduled: nan},
	})
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	tl := rep.Results[0].Replay.Timeline
	if want := (TimePoint{Seconds: 990}); len(tl) == 0 || tl[len(tl)-1] != want {
		t.Fatalf("timeline %+v, want it to end with %+v", tl, want)
	}
	if tl[0] != (TimePoint{Seconds: 0, AllocationRatio: 0.235}) {
		t.Errorf("first point %+v, want p1 alone: 470/2000", tl[0])
	}
}

// TestFailedByClass: two runs of one policy, failing 3 no_room + 1
// no_model and 1 deleted_waiting + 2 too_large + 1 no_gpu_nodes: per run
// capacity (3 + 1) / 2 = 2, selector 0.5, size 1, resource kind 0.5.
func TestFailedByClass(t *testing.T) {
	rs := []Result{
		{Policy: "fgd", Failed: []FailedGroup{{Reason: ReasonNoRoom, Pods: 3}, {Reason: ReasonNoModel, Pods: 1}}},
		{Policy: "fgd", Failed: []FailedGroup{{Reason: ReasonDeleted, Pods: 1}, {Reason: ReasonTooLarge, Pods: 2}, {Reason: ReasonNoGPUNodes, Pods: 1}}},
	}
	got := summarise([]string{"fgd"}, rs)[0].FailedByClass
	want := map[string]float64{ClassCapacity: 2, ClassSelector: 0.5, ClassSize: 1, ClassResourceKind: 0.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("by class %v, want %v", got, want)
	}
	for _, r := range []string{ReasonGangUnfit, ReasonGangIncomplete, ReasonNoQuota, ReasonQuotaWait} {
		if FailureClass(r) == "" {
			t.Errorf("reason %s has no class", r)
		}
	}
}
