// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package sizing

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/prices"
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

func counts(nodes []trace.NodeSpec) (a, b, c int) {
	for _, n := range nodes {
		switch n.Name[0] {
		case 'a':
			a++
		case 'b':
			b++
		case 'c':
			c++
		}
	}
	return
}

func TestScale(t *testing.T) {
	l := list()
	if got := len(Types(l)); got != 3 {
		t.Fatalf("Types: %d types, want 3 (A, B, C)", got)
	}
	// Sainte-Laguë by hand, quotients c/(2a+1) for A=6, B=2, C=1:
	// n=1: 6, 2, 1 -> A (A: 6/3=2); n=2: 2, 2, 1 -> A first on the tie
	// (A: 6/5=1.2); n=3: 1.2, 2, 1 -> B (B: 2/3); n=4: 1.2, .67, 1 -> A
	// (A: 6/7=.86); n=5: .86, .67, 1 -> C.
	want := [][3]int{{1, 0, 0}, {2, 0, 0}, {2, 1, 0}, {3, 1, 0}, {3, 1, 1}}
	for n, w := range want {
		a, b, c := counts(Scale(l, n+1))
		if [3]int{a, b, c} != w {
			t.Errorf("Scale(list, %d) = A %d, B %d, C %d; want %v", n+1, a, b, c, w)
		}
	}
	// Scale 1 is the list's own mix, scale 2 twice it, each node once
	// more with a "+1" name.
	if a, b, c := counts(Scale(l, 9)); a != 6 || b != 2 || c != 1 {
		t.Errorf("Scale(list, 9) = %d, %d, %d; want the list's 6, 2, 1", a, b, c)
	}
	s18 := Scale(l, 18)
	if a, b, c := counts(s18); a != 12 || b != 4 || c != 2 {
		t.Errorf("Scale(list, 18) = %d, %d, %d; want 12, 4, 2", a, b, c)
	}
	names := map[string]bool{}
	for _, n := range s18 {
		if names[n.Name] {
			t.Errorf("Scale(list, 18): name %s twice", n.Name)
		}
		names[n.Name] = true
	}
	if !names["a5+1"] || !names["c0+1"] || !names["b1+1"] {
		t.Errorf("Scale(list, 18) names %v, want a5+1, b1+1 and c0+1 among them", names)
	}
	// House monotone: each size is the previous one plus a node.
	prev := Scale(l, 0)
	for n := 1; n <= 40; n++ {
		cur := Scale(l, n)
		for i := range prev {
			if !reflect.DeepEqual(cur[i], prev[i]) {
				t.Fatalf("Scale(list, %d) changes node %d of Scale(list, %d)", n, i, n-1)
			}
		}
		prev = cur
	}
}

func TestSearch(t *testing.T) {
	l := list() // 9 nodes
	target := Target{Metric: "placed", Value: 1}
	for _, need := range []int{1, 2, 5, 9, 10, 37, 200} {
		var tried []int
		eval := func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
			tried = append(tried, len(nodes))
			if len(nodes) >= need {
				return 1, nil
			}
			return 0.5, nil
		}
		r, err := Search(context.Background(), l, target, prices.Default(), eval)
		if err != nil || !r.Reached || r.Answer.Nodes != need {
			t.Errorf("need %d: Search = %+v, %v", need, r.Answer, err)
			continue
		}
		seen := map[int]bool{}
		for i, s := range r.Curve {
			if seen[s.Nodes] || (i > 0 && s.Nodes < r.Curve[i-1].Nodes) {
				t.Errorf("need %d: curve not one step per size in order: %+v", need, r.Curve)
			}
			seen[s.Nodes] = true
			if s.Holds != (s.Nodes >= need) {
				t.Errorf("need %d: step %d holds = %v", need, s.Nodes, s.Holds)
			}
		}
		if len(tried) != len(r.Curve) {
			t.Errorf("need %d: %d evals for %d steps", need, len(tried), len(r.Curve))
		}
		if tried[0] != 9 {
			t.Errorf("need %d: first eval at %d nodes, want the list's 9", need, tried[0])
		}
		if len(tried) > 2*int(math.Log2(float64(need+9)))+3 {
			t.Errorf("need %d: %d evals (%v), more than bracketing and bisection take", need, len(tried), tried)
		}
	}
	// need 37 by hand: 9 fails, 18, 36 fail, 72 holds; bisection 54, 45,
	// 40, 38, 37 hold.
	var tried []int
	r, _ := Search(context.Background(), l, target, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
		tried = append(tried, len(nodes))
		return map[bool]float64{true: 1, false: 0}[len(nodes) >= 37], nil
	})
	if want := []int{9, 18, 36, 72, 54, 45, 40, 38, 37}; !slices.Equal(tried, want) {
		t.Errorf("need 37: tried %v, want %v", tried, want)
	}
	// The answer's cost: 37 nodes = 25 A (8 V100M32) + 8 B + 4 C (2 T4).
	a, b, c := counts(Scale(l, 37))
	p := prices.Default()
	wantUSD := float64(8*a)*p.USDPerHour("V100M32") + float64(2*c)*p.USDPerHour("T4")
	if r.Answer.GPUs != 8*a+2*c || math.Abs(r.Answer.USDPerHour-wantUSD) > 1e-9 || b == 0 {
		t.Errorf("37 nodes (A %d, B %d, C %d): answer %d GPUs, %v USD/h; want %d, %v", a, b, c, r.Answer.GPUs, r.Answer.USDPerHour, 8*a+2*c, wantUSD)
	}
	if math.Abs(r.Answer.Scale-37.0/9) > 1e-12 {
		t.Errorf("scale %v, want 37/9", r.Answer.Scale)
	}
	// An infinite wait is a null value, and never holds.
	r, _ = Search(context.Background(), l[:1], Target{Metric: "p95wait", Value: 60}, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
		if len(nodes) < 3 {
			return math.Inf(1), nil
		}
		return 0, nil
	})
	if r.Answer.Nodes != 3 || r.Curve[0].Value != nil || r.Curve[0].Holds {
		t.Errorf("p95wait: answer %d nodes, first step %+v; want 3 and a null value", r.Answer.Nodes, r.Curve[0])
	}
	boom := errors.New("boom")
	if _, err := Search(context.Background(), l, target, prices.Default(), func(context.Context, []trace.NodeSpec) (float64, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("eval error: %v", err)
	}
}
