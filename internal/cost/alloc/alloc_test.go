// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package alloc

import (
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"math"
	"math/big"
	"strings"
	"testing"
)

const (
	minute = 60_000
	hour   = 3_600_000
)

func testPrices(t testing.TB, lines string) *cost.Prices {
	t.Helper()
	p := &cost.Prices{}
	if err := p.ReadPrices("test", strings.NewReader(lines)); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustMIG(t *testing.T, model, profile string) Share {
	t.Helper()
	s, err := MIGShare(model, profile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func rowByKey(t *testing.T, r Report, key string) Row {
	t.Helper()
	for _, x := range r.Rows {
		if x.Key == key {
			return x
		}
	}
	t.Fatalf("no row %q in %+v", key, r.Rows)
	return Row{}
}

func sumCents(r Report) int64 {
	var s int64
	for _, x := range r.Rows {
		s += x.CostCents
	}
	for _, x := range r.Idle {
		s += x.CostCents
	}
	return s
}

// TestMIGHour works the brief's example by hand. An A100 at 2.00 USD/h for
// 1 h; 3g is 3 of the A100's 7 compute slices, 1g is 1 of 7 (NVIDIA MIG User
// Guide, "Supported MIG Profiles", A100-80GB table).
//
//	a: 3/7 x 0.5 h = 3/14 GPU-h; 3/14 x 200 c = 42 6/7 c
//	b: 1/7 x 1 h   = 1/7 GPU-h;  1/7 x 200 c  = 28 4/7 c
//	idle: 1 - 3/14 - 2/14 = 9/14 GPU-h = 128 4/7 c
//
// Floors 42 + 28 + 128 = 198 of 200: a (6/7) gets a cent, then b and idle tie
// at 4/7 and the holding row wins: a 43, b 29, idle 128.
//
// Utilisation 0.5 for the first half hour, 1.0 after (samples every 5 min):
// a used 3/7 x 0.5 h x 0.5 = 3/28 GPU-h, efficiency 0.5, unused 42 6/7 / 2 =
// 21.43 -> 21 c; b used 1/7 x (0.25 + 0.5) = 3/28 GPU-h, efficiency 0.75,
// unused 28 4/7 / 4 = 7.14 -> 7 c.
func TestMIGHour(t *testing.T) {
	var util []Sample
	for m := int64(0); m < 60; m += 5 {
		u := 0.5
		if m >= 30 {
			u = 1
		}
		util = append(util, Sample{Time: m * minute, Util: u})
	}
	in := Input{
		From: 0, To: hour,
		GPUs: []GPU{{Node: "n1", UUID: "GPU-a", Model: "A100-80GB"}},
		Holdings: []Holding{
			{Namespace: "ns", Pod: "a", GPU: "GPU-a", Share: mustMIG(t, "A100-80GB", "3g.40gb"), Start: 0, End: 30 * minute},
			{Namespace: "ns", Pod: "b", GPU: "GPU-a", Share: mustMIG(t, "A100-80GB", "1g.10gb"), Start: 0, End: hour},
		},
		Util:   map[string][]Sample{"GPU-a": util},
		Prices: testPrices(t, "A100-80GB 2.00"),
	}
	l, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report(ByPod)
	a, b := rowByKey(t, r, "ns/a"), rowByKey(t, r, "ns/b")
	if a.CostCents != 43 || b.CostCents != 29 || len(r.Idle) != 1 || r.Idle[0].CostCents != 128 || r.AssetCents != 200 {
		t.Fatalf("cents a %d b %d idle %+v asset %d; want 43 29 128 200", a.CostCents, b.CostCents, r.Idle, r.AssetCents)
	}
	if !near(a.GPUHoursAllocated, 3.0/14) || !near(b.GPUHoursAllocated, 1.0/7) || !near(r.Idle[0].GPUHours, 9.0/14) || !near(r.GPUHours, 1) {
		t.Fatalf("GPU-hours a %v b %v idle %v total %v", a.GPUHoursAllocated, b.GPUHoursAllocated, r.Idle[0].GPUHours, r.GPUHours)
	}
	if !near(a.GPUHoursUsed, 3.0/28) || !near(a.Efficiency, 0.5) || a.UnusedCents != 21 {
		t.Fatalf("a used %v eff %v unused %d; want 3/28 0.5 21", a.GPUHoursUsed, a.Efficiency, a.UnusedCents)
	}
	if !near(b.GPUHoursUsed, 3.0/28) || !near(b.Efficiency, 0.75) || b.UnusedCents != 7 {
		t.Fatalf("b used %v eff %v unused %d; want 3/28 0.75 7", b.GPUHoursUsed, b.Efficiency, b.UnusedCents)
	}
	if len(a.Models) != 1 || a.Models[0] != "A100-80GB" || len(l.Warnings) != 0 {
		t.Fatalf("models %v warnings %v", a.Models, l.Warnings)
	}
}

// TestUtilGrid: TestMIGHour's utilisation as a grid of 5-minute cells
// gives the same used GPU-hours (a 3/28, b 3/28); a NaN cell (no sample)
// counts as unused: b loses 1/7 x 5 min x 1.0 = 1/84 GPU-h.
func TestUtilGrid(t *testing.T) {
	u := make([]float32, 12)
	for i := range u {
		u[i] = 0.5
		if i >= 6 {
			u[i] = 1
		}
	}
	in := Input{
		From: 0, To: hour,
		GPUs: []GPU{{Node: "n1", UUID: "GPU-a", Model: "A100-80GB"}},
		Holdings: []Holding{
			{Namespace: "ns", Pod: "a", GPU: "GPU-a", Share: mustMIG(t, "A100-80GB", "3g.40gb"), Start: 0, End: 30 * minute},
			{Namespace: "ns", Pod: "b", GPU: "GPU-a", Share: mustMIG(t, "A100-80GB", "1g.10gb"), Start: 0, End: hour},
		},
		UtilGrid: map[string]Grid{"GPU-a": {Start: 0, Step: 5 * minute, U: u}},
		Prices:   testPrices(t, "A100-80GB 2.00"),
	}
	l, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report(ByPod)
	if a, b := rowByKey(t, r, "ns/a"), rowByKey(t, r, "ns/b"); !near(a.GPUHoursUsed, 3.0/28) || !near(b.GPUHoursUsed, 3.0/28) || a.CostCents != 43 {
		t.Fatalf("a %+v b %+v", a, b)
	}
	u[11] = float32(math.NaN())
	if l, err = Compute(in); err != nil {
		t.Fatal(err)
	}
	if b := rowByKey(t, l.Report(ByPod), "ns/b"); !near(b.GPUHoursUsed, 3.0/28-1.0/84) {
		t.Fatalf("b used %v, want 3/28 - 1/84", b.GPUHoursUsed)
	}
	u[0] = 2
	if _, err := Compute(in); err == nil || !strings.Contains(err.Error(), "device GPU-a: utilisation 2 at 1970-01-01T00:00:00Z outside 0..1") {
		t.Errorf("utilisation 2: %v", err)
	}
	u[0] = 0.5
	in.Util = map[string][]Sample{"GPU-a": {{Time: 0, Util: 1}}}
	if _, err := Compute(in); err == nil || !strings.Contains(err.Error(), "both as samples and as a grid") {
		t.Errorf("both: %v", err)
	}
}

// TestReplicasAndMilli works two nodes for 2 h by hand. n1: a T4 at 0.35
// USD/h with 4 time-slicing replicas, p1 and p2 one replica each for 2 h:
// 1/4 x 2 h x 35 c = 17.5 c each, idle 35 c. n2: an L4 at 0.56 USD/h, p3 500
// milli-GPU for the first hour (0.5 x 56 = 28 c), p4 the whole GPU for the
// second (56 c), idle 28 c. Asset 70 + 112 = 182 c. By pod the floors add up
// to 181: p1 and p2 tie at 0.5 and p1, first, gets the cent.
func TestReplicasAndMilli(t *testing.T) {
	in := Input{
		From: 0, To: 2 * hour,
		GPUs: []GPU{{Node: "n1", UUID: "GPU-t4", Model: "T4"}, {Node: "n2", UUID: "GPU-l4", Model: "L4"}},
		Holdings: []Holding{
			{Namespace: "x", Pod: "p1", Job: "j", Team: "red", GPU: "GPU-t4", Share: Share{Kind: Replica, Replicas: 4}, Start: 0, End: 2 * hour},
			{Namespace: "x", Pod: "p2", Job: "j", Team: "red", GPU: "GPU-t4", Share: Share{Kind: Replica, Replicas: 4}, Start: 0, End: 2 * hour},
			{Namespace: "y", Pod: "p3", Team: "blue", GPU: "GPU-l4", Share: Share{Kind: Milli, Milli: 500}, Start: 0, End: hour},
			{Namespace: "y", Pod: "p4", Team: "blue", GPU: "GPU-l4", Share: Share{Kind: Whole}, Start: hour, End: 2 * hour},
		},
		Prices: cost.Default(), // T4 0.35, L4 0.56 (GCP, internal/cost/prices)
	}
	l, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[By]map[string]int64{
		ByPod:       {"x/p1": 18, "x/p2": 17, "y/p3": 28, "y/p4": 56},
		ByJob:       {"x/j": 35, "y/p3": 28, "y/p4": 56},
		ByNamespace: {"x": 35, "y": 84},
		ByTeam:      {"red": 35, "blue": 84},
		ByNode:      {"n1": 35, "n2": 84},
		ByModel:     {"T4": 35, "L4": 84},
	}
	for by, rows := range want {
		r := l.Report(by)
		if len(r.Rows) != len(rows) {
			t.Fatalf("by %s: rows %+v", by, r.Rows)
		}
		for k, c := range rows {
			if got := rowByKey(t, r, k).CostCents; got != c {
				t.Errorf("by %s: %s costs %d c, want %d", by, k, got, c)
			}
		}
		if r.AssetCents != 182 || sumCents(r) != 182 {
			t.Errorf("by %s: asset %d, rows sum %d; want 182", by, r.AssetCents, sumCents(r))
		}
		if len(r.Idle) != 2 || r.Idle[0].Node != "n1" || r.Idle[0].CostCents != 35 || !near(r.Idle[0].GPUHours, 1) ||
			r.Idle[1].Node != "n2" || r.Idle[1].CostCents != 28 || !near(r.Idle[1].GPUHours, 0.5) {
			t.Errorf("by %s: idle %+v", by, r.Idle)
		}
	}
	// No utilisation samples: nothing counts as used, all of the cost is unused.
	if p4 := rowByKey(t, l.Report(ByPod), "y/p4"); p4.GPUHoursUsed != 0 || p4.UnusedCents != 56 {
		t.Errorf("p4 used %v unused %d, want 0 and 56", p4.GPUHoursUsed, p4.UnusedCents)
	}
}

// every5 returns samples every 5 min over 1 h: a for the first half hour, b after.
func every5(a, b float64) []Sample {
	var out []Sample
	for m := int64(0); m < 60; m += 5 {
		u := a
		if m >= 30 {
			u = b
		}
		out = append(out, Sample{Time: m * minute, Util: u})
	}
	return out
}

// TestMIGReplicas: a 3g instance of an A100 (3/7) time-sliced as 2
// replicas, p1 and p2 one each (Num 1, Den 2) for 1 h at 2.80 USD/h: 3/14
// GPU-h each, 3/14 x 280 c = 60 c exactly; a 1g instance (1/7) held whole
// by p3 for 1 h, 40 c; idle 1 - 3/7 - 1/7 = 3/7 GPU-h, 120 c. Total 280 c.
func TestMIGReplicas(t *testing.T) {
	half := mustMIG(t, "A100-80GB", "3g.40gb")
	half.Num, half.Den = 1, 2
	in := Input{
		From: 0, To: hour,
		GPUs: []GPU{{Node: "n1", UUID: "GPU-a", Model: "A100-80GB"}},
		Holdings: []Holding{
			{Namespace: "ns", Pod: "p1", GPU: "GPU-a", Share: half, Start: 0, End: hour},
			{Namespace: "ns", Pod: "p2", GPU: "GPU-a", Share: half, Start: 0, End: hour},
			{Namespace: "ns", Pod: "p3", GPU: "GPU-a", Share: mustMIG(t, "A100-80GB", "1g.10gb"), Start: 0, End: hour, Util: "GPU-a/9"},
		},
		Prices: testPrices(t, "A100-80GB 2.80"),
		// The 3g instance's holders take the GPU's utilisation (0.5); the
		// 1g instance its own (0.25 from 0, 1 from 30 min, samples every
		// 5 min, MaxSampleHold 5 min).
		Util: map[string][]Sample{"GPU-a": every5(0.5, 0.5), "GPU-a/9": every5(0.25, 1)},
	}
	l, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report(ByPod)
	for k, c := range map[string]int64{"ns/p1": 60, "ns/p2": 60, "ns/p3": 40} {
		if row := rowByKey(t, r, k); row.CostCents != c {
			t.Errorf("%s: %d c, want %d", k, row.CostCents, c)
		}
	}
	// p1: 3/14 GPU-h x 0.5 = 3/28; p3: 1/7 x (0.5 h x 0.25 + 0.5 h x 1) = 5/56.
	if p1, p3 := rowByKey(t, r, "ns/p1"), rowByKey(t, r, "ns/p3"); !near(p1.GPUHoursUsed, 3.0/28) || !near(p3.GPUHoursUsed, 5.0/56) || !near(p3.Efficiency, 0.625) {
		t.Errorf("used p1 %v p3 %v eff %v; want 3/28, 5/56, 0.625", p1.GPUHoursUsed, p3.GPUHoursUsed, p3.Efficiency)
	}
	if !near(rowByKey(t, r, "ns/p1").GPUHoursAllocated, 3.0/14) || len(r.Idle) != 1 || r.Idle[0].CostCents != 120 || !near(r.Idle[0].GPUHours, 3.0/7) || sumCents(r) != 280 || len(l.Warnings) != 0 {
		t.Fatalf("report %+v warnings %v", r, l.Warnings)
	}
}

// TestOvercommitClamped: a whole GPU for 1 h at 2.00 USD/h, and a half
// (2 replicas) on it for the second half hour: 1.5 GPU, scaled by 1/1.5.
// a: 0.5 h + 0.5 h x 2/3 = 5/6 GPU-h = 166 2/3 c; b: 0.5 h x 1/2 x 2/3 = 1/6
// GPU-h = 33 1/3 c; idle 0. Floors 199: a gets the cent (2/3 > 1/3).
func TestOvercommitClamped(t *testing.T) {
	in := Input{
		From: 0, To: hour,
		GPUs: []GPU{{Node: "n1", UUID: "GPU-a", Model: "A100-80GB"}},
		Holdings: []Holding{
			{Namespace: "ns", Pod: "a", GPU: "GPU-a", Share: Share{Kind: Whole}, Start: -hour, End: 2 * hour},
			{Namespace: "ns", Pod: "b", GPU: "GPU-a", Share: Share{Kind: Replica, Replicas: 2}, Start: 30 * minute, End: hour},
		},
		Util:   map[string][]Sample{"GPU-a": {{Time: 0, Util: 1}}},
		Prices: testPrices(t, "A100-80GB 2"),
		// One sample stands for the whole hour.
		MaxSampleHold: hour,
	}
	l, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "GPU-a") || !strings.Contains(l.Warnings[0], "1.500") {
		t.Fatalf("warnings %q", l.Warnings)
	}
	r := l.Report(ByPod)
	a, b := rowByKey(t, r, "ns/a"), rowByKey(t, r, "ns/b")
	if a.CostCents != 167 || b.CostCents != 33 || r.Idle[0].CostCents != 0 || r.AssetCents != 200 {
		t.Fatalf("a %d b %d idle %d asset %d; want 167 33 0 200", a.CostCents, b.CostCents, r.Idle[0].CostCents, r.AssetCents)
	}
	if !near(a.GPUHoursAllocated, 5.0/6) || !near(b.GPUHoursAllocated, 1.0/6) || !near(a.GPUHoursUsed, 5.0/6) || !near(b.Efficiency, 1) {
		t.Fatalf("a %+v b %+v", a, b)
	}
}

// TestStaleSample: one sample of 1.0 at the start and none after stands for
// 5 minutes (Prometheus's default lookback delta), so a whole GPU held 1 h
// used 1/12 GPU-h.
func TestStaleSample(t *testing.T) {
	l, err := Compute(Input{
		From: 0, To: hour,
		GPUs:     []GPU{{Node: "n", UUID: "g", Model: "T4"}},
		Holdings: []Holding{{Namespace: "ns", Pod: "p", GPU: "g", Start: 0, End: hour}},
		Util:     map[string][]Sample{"g": {{Time: 0, Util: 1}}},
		Prices:   cost.Default(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Report(ByPod).Rows[0]; !near(p.GPUHoursUsed, 1.0/12) {
		t.Fatalf("used %v, want 1/12", p.GPUHoursUsed)
	}
}

// TestUnpriced: a model without a price costs 0 and is warned about once;
// a holding outside the window makes no row.
func TestUnpriced(t *testing.T) {
	l, err := Compute(Input{
		From: 0, To: hour,
		GPUs: []GPU{{Node: "n", UUID: "g1", Model: "Z9"}, {Node: "n", UUID: "g2", Model: "Z9"}},
		Holdings: []Holding{{Namespace: "ns", Pod: "p", GPU: "g1", Start: 0, End: hour},
			// Before the window: no row.
			{Namespace: "ns", Pod: "early", Team: "old", GPU: "g2", Start: -hour, End: 0}},
		Prices: cost.Default(),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report(ByTeam)
	if len(r.Rows) != 1 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], `"Z9"`) || r.AssetCents != 0 || r.Rows[0].Key != "(none)" || !near(r.Rows[0].GPUHoursAllocated, 1) || !near(r.Idle[0].GPUHours, 1) {
		t.Fatalf("warnings %q report %+v", l.Warnings, r)
	}
}

func TestErrors(t *testing.T) {
	gpus := []GPU{{Node: "n", UUID: "g", Model: "A100-80GB"}, {Node: "n", UUID: "t", Model: "T4"}}
	for _, c := range []struct {
		name string
		in   Input
		want string
	}{
		{"window", Input{From: 5, To: 5, GPUs: gpus}, "window"},
		{"unknown GPU", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Namespace: "ns", Pod: "p", GPU: "x"}}}, `holding 0 (ns/p): GPU "x"`},
		{"end before start", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "g", Start: 2, End: 1}}}, "end 1970-01-01T00:00:00.001Z before start 1970-01-01T00:00:00.002Z"},
		{"MIG slices", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "g", Share: Share{Kind: MIG, Slices: 8}}}}, "MIG slices 8 outside 1..7"},
		{"MIG on T4", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "t", Share: Share{Kind: MIG, Slices: 1}}}}, "no MIG slice count"},
		{"milli", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "g", Share: Share{Kind: Milli, Milli: 1001}}}}, "milli-GPU 1001"},
		{"replicas", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "g", Share: Share{Kind: Replica}}}}, "replicas 0"},
		{"util", Input{To: 1, GPUs: gpus, Util: map[string][]Sample{"g": {{Time: 0, Util: math.NaN()}}}}, "GPU g: utilisation NaN"},
		{"duplicate GPU", Input{To: 1, GPUs: append(gpus, gpus[0])}, "UUID g listed twice"},
		{"part", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "g", Share: Share{Kind: Whole, Num: 3, Den: 2}}}}, "part 3/2 outside"},
		{"part zero", Input{To: 1, GPUs: gpus, Holdings: []Holding{{Pod: "p", GPU: "g", Share: Share{Kind: Whole, Num: 0, Den: 2}}}}, "part 0/2 outside"},
	} {
		_, err := Compute(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := MIGShare("A100-80GB", "9g.1gb"); err == nil {
		t.Error("MIGShare of an unknown profile: no error")
	}
	if _, err := ParseBy("cluster"); err == nil {
		t.Error("ParseBy(cluster): no error")
	}
}

// TestLargestRemainder: thirds of a cent; and 0.5 + 0.5 + 0.5 + 0.5 = 2 (the
// first two halves win their ties).
func TestLargestRemainder(t *testing.T) {
	third := big.NewRat(1, 3)
	if got := largestRemainder([]*big.Rat{third, third, third}, 1); got[0] != 1 || got[1] != 0 || got[2] != 0 {
		t.Errorf("thirds: %v", got)
	}
	h := big.NewRat(5, 2) // 2.5
	if got := largestRemainder([]*big.Rat{h, h, h, h}, 10); got[0] != 3 || got[1] != 3 || got[2] != 2 || got[3] != 2 {
		t.Errorf("halves: %v", got)
	}
	if got := roundHalfUp(big.NewRat(5, 2)); got != 3 {
		t.Errorf("roundHalfUp(2.5) = %d", got)
	}
}

// TestGPULife: a node added and removed within the window costs only while
// it is there. Window 0:00-2:00; an A100 at 2.00 USD/h lives 0:30-1:30 (1 h:
// 200 c, not the window's 400 c). Pod a holds it 0:00-1:00 by its series
// (say, a stale allocation): cut to 0:30-1:00, 0.5 GPU-h, 100 c, with a
// warning; idle 1:00-1:30, 0.5 GPU-h, 100 c. A second A100 with no life
// given costs the whole window: 2 GPU-h of idle, 400 c. Asset 600 c over
// 3 GPU-h.
func TestGPULife(t *testing.T) {
	in := Input{From: 0, To: 2 * hour, Prices: testPrices(t, "A100-80GB 2.00"),
		GPUs: []GPU{
			{Node: "n1", UUID: "GPU-a", Model: "A100-80GB", Start: hour / 2, End: 3 * hour / 2},
			{Node: "n2", UUID: "GPU-b", Model: "A100-80GB"},
		},
		Holdings: []Holding{{Namespace: "ns", Pod: "a", GPU: "GPU-a", Share: Share{Kind: Whole}, Start: 0, End: hour}},
	}
	l, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Report(ByPod)
	if r.AssetCents != 600 || !near(r.GPUHours, 3) {
		t.Fatalf("asset %d c over %v GPU-h, want 600 c over 3 GPU-h", r.AssetCents, r.GPUHours)
	}
	a := rowByKey(t, r, "ns/a")
	if a.CostCents != 100 || !near(a.GPUHoursAllocated, 0.5) {
		t.Errorf("pod a: %d c, %v GPU-h; want 100 c, 0.5 GPU-h", a.CostCents, a.GPUHoursAllocated)
	}
	want := map[string]int64{"n1": 100, "n2": 400}
	for _, x := range r.Idle {
		if x.CostCents != want[x.Node] {
			t.Errorf("idle %s: %d c, want %d", x.Node, x.CostCents, want[x.Node])
		}
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "outside the GPU's life in the window (1970-01-01T00:30:00Z to 1970-01-01T01:30:00Z); cut to it") {
		t.Errorf("warnings %q, want the cut", l.Warnings)
	}
	if sumCents(r) != r.AssetCents {
		t.Errorf("rows add up to %d c, asset %d c", sumCents(r), r.AssetCents)
	}
	in.GPUs[0].Start, in.GPUs[0].End = 2*hour, hour
	if _, err := Compute(in); err == nil || !strings.Contains(err.Error(), "GPU GPU-a: life ends at 1970-01-01T01:00:00Z before it starts at 1970-01-01T02:00:00Z") {
		t.Errorf("a life ending before it starts: %v", err)
	}
}
