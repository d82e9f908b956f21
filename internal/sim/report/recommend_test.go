// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// recNodes: 2 A100-80GB servers of 8 GPUs and a CPU node; at 2.5 USD per
// GPU-hour the cluster costs 16 × 2.5 = 40 USD/h, 29,200 USD per month.
var recNodes = []trace.NodeSpec{
	{Name: "a", CPUMilli: 128000, MemoryMiB: 2048 * 1024, GPUs: 8, Model: "A100-80GB"},
	{Name: "b", CPUMilli: 128000, MemoryMiB: 2048 * 1024, GPUs: 8, Model: "A100-80GB"},
	{Name: "c", CPUMilli: 64000, MemoryMiB: 256 * 1024},
}

func flat(string) float64 { return 2.5 }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRecommendFill(t *testing.T) {
	r := &engine.Report{Mode: "fill", Summary: []engine.Summary{
		{Policy: "bestfit", Runs: 3, GPUAllocationRatioMean: 0.85, GPUAllocationRatioStd: 0.02, UnallocatedGPUsMean: 2.4, IdleUSDPerHourMean: 6},
		{Policy: "fgd", Runs: 3, GPUAllocationRatioMean: 0.90, GPUAllocationRatioStd: 0.01, UnallocatedGPUsMean: 1.6, IdleUSDPerHourMean: 4},
	}}
	rec := Recommend(r, recNodes, flat)
	// fgd: 90% against 85%: 5 points; spread 1 + 2 = 3 points: significant.
	if rec.Policy != "fgd" || rec.Sharing != "fractional" || rec.RunnerUpPolicy != "bestfit" {
		t.Fatalf("choice %+v", rec)
	}
	if !near(rec.Margin, 5) || !near(rec.Spread, 3) || !rec.Significant {
		t.Errorf("margin %v spread %v significant %v, want 5, 3, true", rec.Margin, rec.Spread, rec.Significant)
	}
	if rec.Nodes != 3 || rec.GPUs != 16 || !near(rec.USDPerHour, 40) || !near(rec.USDPerMonth, 29200) {
		t.Errorf("cluster %d nodes %d GPUs %v USD/h %v USD/month", rec.Nodes, rec.GPUs, rec.USDPerHour, rec.USDPerMonth)
	}
	// Left on the table: fgd's 1.6 idle GPUs at 4 USD/h: 2,920 USD a month.
	if !near(rec.IdleGPUs, 1.6) || !near(rec.IdleUSDPerMonth, 2920) {
		t.Errorf("idle %v GPUs %v USD/month, want 1.6, 2920", rec.IdleGPUs, rec.IdleUSDPerMonth)
	}
	want := []engine.NodeCount{{Model: "A100-80GB", GPUs: 8, CPU: 128, MemoryGiB: 2048, Nodes: 2}, {CPU: 64, MemoryGiB: 256, Nodes: 1}}
	if len(rec.Cluster) != 2 || rec.Cluster[0] != want[0] || rec.Cluster[1] != want[1] {
		t.Errorf("cluster %+v, want %+v", rec.Cluster, want)
	}
	var b bytes.Buffer
	writeRecommendation(&b, rec)
	for _, s := range []string{"fgd, sharing fractional", "2 A100-80GB nodes (16 GPUs) + 1 CPU-only node", "29,200.00 USD per month (40.00 USD/h × 730 h",
		"1.6 GPUs unallocated, 2,920.00 USD per month", "5.00 points more than bestfit (85.00%)", "significant"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
	// 88% against 85%: 3 points, within the spread of 3: not significant.
	r.Summary[1].GPUAllocationRatioMean = 0.88
	if rec = Recommend(r, recNodes, flat); rec.Significant || !strings.Contains(rec.Reason, "not significant") {
		t.Errorf("3 points within 3: %+v", rec)
	}
	// One seed: no spread, never significant.
	r.Summary[0].Runs, r.Summary[1].Runs, r.Summary[1].GPUAllocationRatioMean = 1, 1, 0.95
	if rec = Recommend(r, recNodes, flat); rec.Significant || !strings.Contains(rec.Reason, "one seed") {
		t.Errorf("one seed: %+v", rec)
	}
}

func TestRecommendSharingAndReplay(t *testing.T) {
	// --sharing: rows, not the summary; idle = (1 − alloc) of the cluster.
	r := &engine.Report{Mode: "fill", Summary: []engine.Summary{{Policy: "fgd", Runs: 2}}, Sharing: &engine.SharingReport{Rows: []engine.SharingRow{
		{Sharing: "exclusive", Policy: "fgd", Runs: 2, GPUAllocationRatio: 0.75},
		{Sharing: "timeslice:2", Policy: "fgd", Runs: 2, GPUAllocationRatio: 0.875, GPUAllocationRatioStd: 0.005},
	}}}
	rec := Recommend(r, recNodes, flat)
	// 87.5% of 16 GPUs: 2 idle, 12.5% of 29,200 = 3,650 USD a month.
	if rec.Sharing != "timeslice:2" || rec.RunnerUpSharing != "exclusive" || !near(rec.Margin, 12.5) || !near(rec.IdleGPUs, 2) || !near(rec.IdleUSDPerMonth, 3650) || !rec.Significant {
		t.Errorf("sharing: %+v", rec)
	}
	// Replay: lowest p95 first. fgd's seeds wait 60 and 120 s (mean 90,
	// std 30), random's 600 and 1200 (900, std 300): margin 810 s, spread
	// 330 s. bestfit has an unbounded p95 in one seed: last.
	run := func(pol string, p95, alloc float64) engine.Result {
		return engine.Result{Policy: pol, Replay: &engine.ReplayStats{QueueDelayP95Seconds: p95, TimeWeightedAllocationRatio: alloc, SpanSeconds: 3600}}
	}
	r = &engine.Report{Mode: "replay", Summary: []engine.Summary{{Policy: "random", Runs: 2}, {Policy: "bestfit", Runs: 2}, {Policy: "fgd", Runs: 2}},
		Results: []engine.Result{run("random", 600, 0.5), run("random", 1200, 0.5), run("bestfit", 0, 0.5), run("bestfit", math.Inf(1), 0.5), run("fgd", 60, 0.4), run("fgd", 120, 0.4)}}
	rec = Recommend(r, recNodes, flat)
	if rec.Policy != "fgd" || rec.RunnerUpPolicy != "random" || !near(rec.Margin, 810) || !near(rec.Spread, 330) || !rec.Significant || rec.Unit != "seconds of p95 wait" {
		t.Errorf("replay: %+v", rec)
	}
	if _, err := json.Marshal(rec); err != nil {
		t.Error(err)
	}
	// Every p95 unbounded: the cluster is too small, said.
	inf := math.Inf(1)
	r2 := &engine.Report{Mode: "replay", Summary: []engine.Summary{{Policy: "a", Runs: 1}, {Policy: "b", Runs: 1}},
		Results: []engine.Result{run("a", inf, 0.5), run("b", inf, 0.6)}}
	if rec := Recommend(r2, recNodes, flat); rec.Policy != "b" || !strings.Contains(rec.Reason, "the cluster is too small") {
		t.Errorf("all unbounded: %+v", rec)
	} else if _, err := json.Marshal(rec); err != nil {
		t.Error(err)
	}
	// Equal p95 waits: the higher allocation wins, margin in points.
	r.Results[4].Replay.QueueDelayP95Seconds, r.Results[5].Replay.QueueDelayP95Seconds = 600, 1200
	if rec = Recommend(r, recNodes, flat); rec.Policy != "random" || !near(rec.Margin, 10) {
		t.Errorf("tie on p95: %+v", rec)
	}
}

func TestRecommendSizing(t *testing.T) {
	list := []trace.NodeSpec{{Name: "t", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 2, Model: "T4"}}
	ty := sizing.TypeName(list[0])
	v := func(x float64) *float64 { return &x }
	// fgd: add 1 T4 node, 2 nodes, 4 GPUs × 2.5 = 10 USD/h; bestfit adds 2,
	// 15 USD/h: 5 USD/h, 3,650 USD a month more. Both clear 99% by more
	// than their spread. The node fgd adds: 2 GPUs × 2.5 × 730 = 3,650
	// USD a month.
	r := &sizing.Report{Target: "placed>=99%", Mode: "fill", Seeds: 3, Results: []sizing.Result{
		{Policy: "bestfit", NodeType: ty, Model: "T4", GPUsPerNode: 2, Reached: true, Answer: sizing.Step{Nodes: 3, Added: 2, GPUs: 6, USDPerHour: 15, Value: v(1), Std: 0.001}},
		{Policy: "fgd", NodeType: ty, Model: "T4", GPUsPerNode: 2, Reached: true, Answer: sizing.Step{Nodes: 2, Added: 1, GPUs: 4, USDPerHour: 10, Value: v(0.995), Std: 0.001, GPUAllocationRatio: 0.75}},
		{Policy: "random", NodeType: ty, Reached: false},
	}}
	rec := RecommendSizing(r, list, list, flat)
	if rec.Policy != "fgd" || rec.Nodes != 2 || rec.GPUs != 4 || !near(rec.USDPerMonth, 7300) || !near(rec.Margin, 3650) || !rec.Significant {
		t.Fatalf("%+v", rec)
	}
	if rec.Add == nil || rec.Add.Nodes != 1 || !near(rec.Add.USDPerMonth, 3650) || len(rec.Alternatives) != 2 || rec.Alternatives[0].Nodes != 2 || rec.Alternatives[1].Reached {
		t.Errorf("add %+v, alternatives %+v", rec.Add, rec.Alternatives)
	}
	if want := "add 1 × " + ty + ": +3,650 USD per month with fgd (fractional)"; !strings.HasPrefix(rec.Reason, want) {
		t.Errorf("reason %q, want it to start %q", rec.Reason, want)
	}
	if !near(rec.IdleGPUs, 1) || !near(rec.IdleUSDPerMonth, 1825) || rec.Cluster[0].Nodes != 2 || rec.Cluster[0].Model != "T4" {
		t.Errorf("idle %v, %v; cluster %+v", rec.IdleGPUs, rec.IdleUSDPerMonth, rec.Cluster)
	}
	// fgd's 99.5% within 0.6 points of the target's spread: not significant.
	r.Results[1].Answer.Std = 0.006
	if rec = RecommendSizing(r, list, list, flat); rec.Significant || !strings.Contains(rec.Reason, "not significant") {
		t.Errorf("fragile answer: %+v", rec)
	}
	if rec = RecommendSizing(&sizing.Report{Results: []sizing.Result{{Policy: "x"}}}, list, list, flat); rec != nil {
		t.Errorf("nothing reached: %+v", rec)
	}
}

// TestTenths: the GPUs left idle carry thousands separators, as the
// money beside them does (5806.0 was printed before).
func TestTenths(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 68.94: "68.9", 5806: "5,806.0", 1234567.25: "1,234,567.3", 999.96: "1,000.0"} {
		if got := tenths(v); got != want {
			t.Errorf("tenths(%v) = %q, want %q", v, got, want)
		}
	}
}

// sharedRun runs n pods of 200 milli-GPU, each once, on one A100-80GB
// node of gpus GPUs, under each of modes and each of policies, and
// returns the report with its sharing rows, as gpuplane simulate
// --sharing makes it.
func sharedRun(t *testing.T, gpus, n int, modes string, policies ...string) (*engine.Report, []trace.NodeSpec) {
	t.Helper()
	nodes := []trace.NodeSpec{{Name: "a100", CPUMilli: 64000, MemoryMiB: 1 << 20, GPUs: gpus, Model: "A100-80GB", Line: 2}}
	var pods []trace.PodSpec
	for i := range n {
		pods = append(pods, trace.PodSpec{Name: fmt.Sprintf("p%d", i), CPUMilli: 100, NumGPU: 1, GPUMilli: 200, Deletion: math.NaN(), Scheduled: math.NaN(), Line: int32(i + 2)})
	}
	w, err := engine.Prepare("nodes.csv", nodes, "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := engine.ParseSharing(modes)
	if err != nil {
		t.Fatal(err)
	}
	var rep *engine.Report
	sr := &engine.SharingReport{}
	for _, m := range ms {
		v, _, err := w.WithSharing(m, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := engine.Run(context.Background(), v, engine.Config{Mode: "fill", Once: true, Policies: policies, Seeds: 1, Seed: 1, TieBreak: placement.TieFirst})
		if err != nil {
			t.Fatal(err)
		}
		if rep == nil {
			rep = r
		}
		sr.Rows = append(sr.Rows, engine.SharingRows(r)...)
	}
	rep.Sharing = sr
	return rep, nodes
}

// TestRecommendServed: 2 GPUs, 10 pods of 200 milli-GPU. Exclusive pads
// each to a whole GPU and places 2 (served 400 milli, padding 1,600);
// fractional places all 10 (served 2,000, no padding). Exclusive allocates
// 100% as fractional does, so allocation cannot tell them apart: served
// demand does, and fractional is recommended, with what it isolates.
func TestRecommendServed(t *testing.T) {
	r, nodes := sharedRun(t, 2, 10, "exclusive,fractional", "bestfit")
	rows := r.Sharing.Rows
	if len(rows) != 2 || rows[0].PlacedPods != 2 || !near(rows[0].ServedGPUs, 0.4) || !near(rows[0].PaddingGPUs, 1.6) || !near(rows[0].ServedRatio, 0.2) ||
		rows[1].PlacedPods != 10 || !near(rows[1].ServedGPUs, 2) || rows[1].PaddingGPUs != 0 || !near(rows[1].ServedRatio, 1) {
		t.Fatalf("rows %+v", rows)
	}
	if !near(rows[0].GPUAllocationRatio, 1) || !near(rows[1].GPUAllocationRatio, 1) {
		t.Errorf("both allocate every GPU: %v, %v", rows[0].GPUAllocationRatio, rows[1].GPUAllocationRatio)
	}
	// Both hold 2 GPUs: the same USD/h, per 0.4 and 2 served GPUs.
	if !near(rows[0].USDPerServedGPUHour, 5*rows[1].USDPerServedGPUHour) || rows[1].USDPerServedGPUHour <= 0 {
		t.Errorf("USD per served GPU-hour %v, %v", rows[0].USDPerServedGPUHour, rows[1].USDPerServedGPUHour)
	}
	rec := Recommend(r, nodes, flat)
	if rec.Verdict != VerdictRecommended || rec.Sharing != "fractional" || rec.RunnerUpSharing != "exclusive" || !near(rec.Margin, 80) || rec.PlacedPods != 10 || rec.ArrivedPods != 10 {
		t.Fatalf("%+v", rec)
	}
	var b bytes.Buffer
	writeRecommendation(&b, rec)
	for _, s := range []string{"bestfit, sharing fractional", "isolation: nothing on the GPU", "served: 10 of 10 arrived pods placed, 100.00% of the arrived GPU demand",
		"bestfit (fractional) serves 100.00% of the arrived GPU demand and places 10 of 10 pods, against 20.00% and 2 for bestfit (exclusive)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
	// Exclusive alone places 2 of 10, fewer than half, but allocates both
	// GPUs: a fill's arrivals grow with the cluster, so more GPUs would
	// place no larger share; not infeasible (a new-user pass got
	// "infeasible ... grow it" at 2 and at 50 nodes).
	r, nodes = sharedRun(t, 2, 10, "exclusive", "bestfit", "fgd")
	if rec = Recommend(r, nodes, flat); rec.Verdict == VerdictInfeasible {
		t.Errorf("exclusive, every GPU allocated: %+v", rec)
	}
}

// TestRecommendNothingPlaced: pods of 100 cores on a node of 64 place
// none, so no GPU demand is served either: infeasible, not a
// recommendation by allocation (a new-user pass got "fgd, sharing mig"
// for 0 of 27 pods placed).
func TestRecommendNothingPlaced(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "a100", CPUMilli: 64000, MemoryMiB: 1 << 20, GPUs: 2, Model: "A100-80GB", Line: 2}}
	var pods []trace.PodSpec
	for i := range 4 {
		pods = append(pods, trace.PodSpec{Name: fmt.Sprintf("p%d", i), CPUMilli: 100000, NumGPU: 1, GPUMilli: 500, Deletion: math.NaN(), Scheduled: math.NaN(), Line: int32(i + 2)})
	}
	w, err := engine.Prepare("nodes.csv", nodes, "pods.csv", pods, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.Run(context.Background(), w, engine.Config{Mode: "fill", Once: true, Policies: []string{"fgd"}, Seeds: 1, Seed: 1, TieBreak: placement.TieFirst})
	if err != nil {
		t.Fatal(err)
	}
	rec := Recommend(r, nodes, flat)
	if rec.Verdict != VerdictInfeasible || rec.Policy != "" || !strings.Contains(rec.Reason, "places 0 of 4 arrived pods (0.00%), fewer than half; no policy or sharing mode simulated makes this cluster fit this workload: it allocates 0.00% of the GPUs") {
		t.Errorf("nothing placed: %+v", rec)
	}
	var b bytes.Buffer
	writeRecommendation(&b, rec)
	if !strings.Contains(b.String(), "none: the configuration is infeasible") {
		t.Errorf("infeasible text:\n%s", b.String())
	}
}

// TestRecommendTie: every policy places the 10 pods of 200 milli-GPU on 2
// GPUs under fractional: no policy differs, keep yours, not the first in
// order; with exclusive beside it, the mode is still chosen.
func TestRecommendTie(t *testing.T) {
	r, nodes := sharedRun(t, 2, 10, "fractional", "random", "bestfit", "fgd")
	rec := Recommend(r, nodes, flat)
	if rec.Verdict != VerdictTie || rec.Policy != "" || rec.Sharing != "fractional" || rec.Significant ||
		!strings.Contains(rec.Reason, "no policy differs on this workload: keep yours. random, bestfit, fgd each place 10 of 10 pods and serve 100.00% of the arrived GPU demand (spread over the policies: 0.00 points") {
		t.Fatalf("%+v", rec)
	}
	var b bytes.Buffer
	writeRecommendation(&b, rec)
	if !strings.Contains(b.String(), "no policy differs on this workload: keep yours, sharing fractional") {
		t.Errorf("text:\n%s", b.String())
	}
	r, nodes = sharedRun(t, 2, 10, "exclusive,fractional", "random", "bestfit")
	if rec = Recommend(r, nodes, flat); rec.Verdict != VerdictTie || rec.Sharing != "fractional" || rec.RunnerUpSharing != "exclusive" ||
		!strings.HasPrefix(rec.Reason, "Sharing fractional is the best mode: ") || !strings.Contains(rec.Reason, "Within it, no policy differs") {
		t.Errorf("tie within the best mode: %+v", rec)
	}
}
