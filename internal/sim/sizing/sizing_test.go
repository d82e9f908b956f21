// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package sizing

import (
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		value  float64
		mode   string
	}{
		{"placed>=99%", "placed", 0.99, "fill"},
		{"placed >= 100%", "placed", 1, "fill"},
		{"p95wait<=10m", "p95wait", 600, "replay"},
		{"p95wait<=1h30m", "p95wait", 5400, "replay"},
		{"p95wait<=0s", "p95wait", 0, "replay"},
	} {
		got, err := ParseTarget(tc.in)
		if err != nil || got.Metric != tc.metric || math.Abs(got.Value-tc.value) > 1e-12 || got.Mode() != tc.mode || got.Text != tc.in {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %s %v (%s)", tc.in, got, err, tc.metric, tc.value, tc.mode)
		}
	}
	for _, in := range []string{"", "placed>=99", "placed>=0%", "placed>=101%", "placed>=x%", "p95wait<=10", "p95wait<=-1m", "p99wait<=1m", "placed<=99%"} {
		if _, err := ParseTarget(in); err == nil || !strings.Contains(err.Error(), "--size") {
			t.Errorf("ParseTarget(%q) = %v, want an error naming --size", in, err)
		}
	}
}

func TestHoldsAndReachable(t *testing.T) {
	placed := Target{Metric: "placed", Value: 0.99}
	if !placed.Holds(0.99) || placed.Holds(0.9899) || !placed.Holds(1) {
		t.Error("placed>=99%: Holds wrong at 0.99, 0.9899 or 1")
	}
	// 1 of 100 pods fits no node: 99% is the most that can place.
	if !placed.Reachable(100, 1) || placed.Reachable(100, 2) {
		t.Error("placed>=99% of 100 pods: reachable with 1 unfit pod, not with 2")
	}
	wait := Target{Metric: "p95wait", Value: 600}
	if !wait.Holds(600) || wait.Holds(601) || wait.Holds(math.Inf(1)) {
		t.Error("p95wait<=10m: Holds wrong at 600, 601 or +Inf")
	}
	// Nearest rank: the p95 of 20 pods is the 19th smallest, so 1 pod may
	// never start and 2 may not; of 10 pods, the 10th: none may.
	if !wait.Reachable(20, 1) || wait.Reachable(20, 2) || wait.Reachable(10, 1) || !wait.Reachable(10, 0) {
		t.Error("p95wait: Reachable wrong for 20 pods with 1 or 2 unfit, or 10 with 1 or 0")
	}
}

func TestP95(t *testing.T) {
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(20 - i) // 20, 19, ..., 1
	}
	if got := P95(xs); got != 19 { // ⌈0.95·20⌉ = 19th smallest
		t.Errorf("P95(1..20) = %v, want 19", got)
	}
	if got := P95([]float64{5, math.Inf(1), 1}); !math.IsInf(got, 1) { // ⌈2.85⌉ = 3rd
		t.Errorf("P95 of 3 with one +Inf = %v, want +Inf", got)
	}
	if P95(nil) != 0 {
		t.Error("P95(nil) != 0")
	}
}

func TestMeasure(t *testing.T) {
	fill := Target{Metric: "placed", Value: 1}
	got, err := fill.Measure([]engine.Result{{Pods: 10, FailedPods: 2}, {Pods: 10, FailedPods: 0}})
	if err != nil || math.Abs(got-0.9) > 1e-12 { // (0.8 + 1.0) / 2
		t.Errorf("placed of 8/10 and 10/10 = %v, %v; want 0.9", got, err)
	}
	wait := Target{Metric: "p95wait", Value: 60}
	run := engine.Result{Pods: 2, Placements: []engine.Placement{{WaitSeconds: 30}, {WaitSeconds: 90}}}
	if got, err := wait.Measure([]engine.Result{run}); err != nil || got != 90 { // ⌈1.9⌉ = 2nd
		t.Errorf("p95 wait of 30 s and 90 s = %v, %v; want 90", got, err)
	}
	run.Placements[1].Reason = engine.ReasonNoRoom
	if got, _ := wait.Measure([]engine.Result{run}); !math.IsInf(got, 1) {
		t.Errorf("p95 wait with a pod never started = %v, want +Inf", got)
	}
	if _, err := wait.Measure([]engine.Result{{Pods: 3, Placements: run.Placements}}); err == nil {
		t.Error("replay runs without a placement per pod: no error")
	}
}

// list is 6 A nodes (8 GPUs) and 2 B nodes (CPU only) and 1 C node.
func list() []trace.NodeSpec {
	var l []trace.NodeSpec
	for i := range 6 {
		l = append(l, trace.NodeSpec{Name: "a" + string(rune('0'+i)), CPUMilli: 96000, MemoryMiB: 1 << 19, GPUs: 8, Model: "V100M32"})
	}
	l = append(l, trace.NodeSpec{Name: "b0", CPUMilli: 64000, MemoryMiB: 1 << 18},
		trace.NodeSpec{Name: "b1", CPUMilli: 64000, MemoryMiB: 1 << 18, Model: "T4", IgnoredModel: "T4"}, // 0 GPUs: model ignored, same type
		trace.NodeSpec{Name: "c0", CPUMilli: 104000, MemoryMiB: 1 << 19, GPUs: 2, Model: "t4"})
	return l
}
