// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/testenv"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func openb(t testing.TB, pods string) *Workload {
	t.Helper()
	nf := testenv.Openb(t, "openb_node_list_gpu_node.csv")
	pf := testenv.Openb(t, pods)
	nodes, err := trace.ReadNodesFile(nf)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := trace.ReadPodsFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Prepare(nf, nodes, pf, ps, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestReproducesPaper runs the paper's fill experiment, 10 seeds, and checks
// all six of the paper's policies against the published means, within 0.7
// percentage points, and the published order Random < DotProduct <
// Best-fit < FGD.
func TestReproducesPaper(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 120 simulations")
	}
	for _, file := range []string{"openb_pod_list_default.csv", "openb_pod_list_cpu200.csv", "openb_pod_list_gpushare40.csv"} {
		published, ok := trace.PublishedFor(file)
		if !ok {
			t.Fatalf("%s: no published result", file)
		}
		w := openb(t, file)
		rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"random", "dotproduct", "gpupacking", "gpuclustering", "bestfit", "fgd"},
			Seeds: 10, Seed: 42, Inflate: 1.3, TieBreak: placement.TieFirst})
		if err != nil {
			t.Fatal(err)
		}
		mean := map[string]float64{}
		for _, s := range rep.Summary {
			mean[s.Policy] = 100 * s.GPUAllocationRatioMean
			t.Logf("%s %-10s %.2f%% (published %.2f%%)", file, s.Policy, mean[s.Policy], published.Alloc[s.Policy])
		}
		for p, want := range published.Alloc {
			if d := mean[p] - want; math.Abs(d) > 0.7 {
				t.Errorf("%s %s: %.2f%%, published %.2f%% (off by %+.2f points, more than 0.7)", file, p, mean[p], want, d)
			}
		}
		if !(mean["random"] < mean["dotproduct"] && mean["dotproduct"] < mean["bestfit"] && mean["bestfit"] < mean["fgd"]) {
			t.Errorf("%s: order Random < DotProduct < Best-fit < FGD broken: %v", file, mean)
		}
	}
}

// TestFillByHand: one node with 2 GPUs; pods of one whole GPU each. With
// inflate 1.5 the trace's 2 pods (2000 milli-GPU = capacity) come first,
// then samples until 3000: one more pod, which fails.
func TestFillByHand(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 8192, GPUs: 2, Model: "T4"}}
	pods := []trace.PodSpec{
		{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "b", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
	}
	w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"fgd", "bestfit"}, Seeds: 2, Seed: 1, Inflate: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Pods != 3 || r.FailedPods != 1 || r.AllocatedGPUMilli != 2000 || r.GPUAllocationRatio != 1 || r.ArrivedGPUMilli != 3000 || r.UnallocatedGPUs != 0 {
			t.Errorf("%s seed %d: %+v", r.Policy, r.Seed, r)
		}
		// Two idle T4s would cost 2 × 0.35 USD/h; none are idle.
		if r.IdleUSDPerHour != 0 {
			t.Errorf("idle cost %v, want 0", r.IdleUSDPerHour)
		}
	}
}

// TestReplayByHand: one node with one GPU. Pod a (whole GPU) arrives at 0
// and ran 100 s in the trace; pod b (whole GPU) arrives at 10 and ran 50 s,
// deleted at 110 (after it starts here, so it does not leave the queue);
// pod c (half a GPU) arrives at 200 and was never scheduled in the trace,
// deleted at 260 (so it runs 60 s). b waits 90 s for a. Allocation: 1000
// milli-GPU over [0, 150) and 500 over [200, 260) of the span [0, 260]:
// (150 + 30) / 260.
func TestReplayByHand(t *testing.T) {
	nan := math.NaN()
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 8192, GPUs: 1, Model: "T4"}}
	pods := []trace.PodSpec{
		{Name: "a", CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000, Creation: 0, Scheduled: 0, Deletion: 100},
		{Name: "b", CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000, Creation: 10, Scheduled: 60, Deletion: 110},
		{Name: "c", CPUMilli: 1000, NumGPU: 1, GPUMilli: 500, Creation: 200, Scheduled: nan, Deletion: 260},
	}
	w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Results[0].Replay
	if st.Started != 3 || st.NeverStarted != 0 {
		t.Fatalf("started %d, never %d", st.Started, st.NeverStarted)
	}
	if st.QueueDelayMeanSeconds != 30 || st.QueueDelayMaxSeconds != 90 || st.QueueDelayP95Seconds != 90 {
		t.Errorf("delays mean %v p95 %v max %v, want 30, 90, 90", st.QueueDelayMeanSeconds, st.QueueDelayP95Seconds, st.QueueDelayMaxSeconds)
	}
	if want := 180.0 / 260; math.Abs(st.TimeWeightedAllocationRatio-want) > 1e-12 || st.SpanSeconds != 260 {
		t.Errorf("time-weighted allocation %v over %v s, want %v over 260 s", st.TimeWeightedAllocationRatio, st.SpanSeconds, want)
	}
	// 180 GPU-seconds allocated, 80 idle; a T4 costs 0.35 USD per hour.
	if math.Abs(st.AllocatedGPUHours-180.0/3600) > 1e-12 || math.Abs(st.IdleCostUSD-80.0/3600*0.35) > 1e-12 {
		t.Errorf("GPU-hours %v, idle cost %v", st.AllocatedGPUHours, st.IdleCostUSD)
	}
}

// TestReplayOpenb replays the whole default trace (149 days).
func TestReplayOpenb(t *testing.T) {
	w := openb(t, "openb_pod_list_default.csv")
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"fgd", "bestfit"}, Seeds: 1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		st := r.Replay
		t.Logf("%s: started %d, never %d, delay mean %.0f s p95 %.0f s, time-weighted alloc %.3f, span %.1f days",
			r.Policy, st.Started, st.NeverStarted, st.QueueDelayMeanSeconds, st.QueueDelayP95Seconds, st.TimeWeightedAllocationRatio, st.SpanSeconds/86400)
		if st.Started+st.NeverStarted != 8152 || r.Pods != 8152 {
			t.Errorf("%s: %d started + %d waiting != 8152", r.Policy, st.Started, st.NeverStarted)
		}
		if st.TimeWeightedAllocationRatio <= 0 || st.TimeWeightedAllocationRatio > 1 || st.SpanSeconds < 148*86400 {
			t.Errorf("%s: implausible %+v", r.Policy, st)
		}
	}
}

func benchWorkload(b *testing.B) *Workload { return openb(b, "openb_pod_list_default.csv") }

// BenchmarkFillFGD is one fill run of FGD on the default openb trace
// (about 10,900 pods on 1,213 nodes).
func BenchmarkFillFGD(b *testing.B) {
	w := benchWorkload(b)
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"fgd"}, Seeds: 1, Seed: uint64(42 + i), Inflate: 1.3, Parallel: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFillAllPolicies10Seeds is all 8 policies × 10 seeds, spread over
// the cores.
func BenchmarkFillAllPolicies10Seeds(b *testing.B) {
	w := benchWorkload(b)
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), w, Config{Mode: "fill", Policies: placement.Names, Seeds: 10, Seed: 42, Inflate: 1.3}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplayDefault replays the whole default trace with FGD.
func BenchmarkReplayDefault(b *testing.B) {
	w := benchWorkload(b)
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"fgd"}, Seeds: 1, Seed: 42, Parallel: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFillNeedsGPUs: fill stops at a multiple of GPU capacity, which pods
// without GPUs, or a cluster without GPUs, can never reach.
func TestFillNeedsGPUs(t *testing.T) {
	cpuPods := []trace.PodSpec{{Name: "c", CPUMilli: 1000, MemoryMiB: 1024}}
	gpuNodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 8192, GPUs: 2, Model: "T4"}}
	cpuNodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 8192}}
	for _, tc := range []struct {
		nodes []trace.NodeSpec
		want  string
	}{{gpuNodes, "fill needs pods that request GPUs"}, {cpuNodes, "fill needs a cluster with GPUs"}} {
		w, err := Prepare("nodes", tc.nodes, "pods", cpuPods, 0.95, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"fgd"}, Seeds: 1, Inflate: 1.3})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
