// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package rightsize

import (
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
)

// util10 has p95 exactly 0.10: sorted, rank 0.95×19 = 18.05 falls between
// samples 18 and 19, both 0.10.
var util10 = []float64{0.02, 0.10, 0.02, 0.10, 0.02, 0.10, 0.02, 0.10, 0.02, 0.10,
	0.02, 0.10, 0.02, 0.10, 0.02, 0.10, 0.02, 0.10, 0.02, 0.10}

func constant(u float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = u
	}
	return s
}

func one(t *testing.T, j Job, o Options) Recommendation {
	t.Helper()
	rs, err := Recommend([]Job{j}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("got %d recommendations, want 1", len(rs))
	}
	return rs[0]
}

func TestQuantileIsPrometheus(t *testing.T) {
	// 0.01..0.20: rank 0.95×19 = 18.05, between 0.19 and 0.20 with weight
	// 0.05: 0.19×0.95 + 0.20×0.05 = 0.1905 (Prometheus quantile_over_time).
	v := make([]float64, 20)
	for i := range v {
		v[19-i] = float64(i+1) / 100
	}
	if got := quantile(0.95, v); math.Abs(got-0.1905) > 1e-12 {
		t.Errorf("p95 = %v, want 0.1905", got)
	}
	if got := quantile(0.95, []float64{0.3}); got != 0.3 {
		t.Errorf("p95 of one sample = %v, want 0.3", got)
	}
	if got := quantile(0.95, util10); got != 0.10 {
		t.Errorf("p95 of util10 = %v, want 0.10", got)
	}
}

// The MIG sizes below are internal/gpu's table for A100-80GB (NVML's
// memorySizeMB: 1g.10gb 9856 MiB, 1g.20gb and 2g.20gb 19968 MiB, 3g.40gb and
// 4g.40gb 40192 MiB, 7g.80gb 80384 MiB; profiles from NVIDIA's MIG user
// guide, "Supported MIG Profiles"); a profile is priced by its compute
// slices out of 7.
func TestWholeA100ToMIG(t *testing.T) {
	for _, c := range []struct {
		name        string
		util        []float64
		peak        float64
		want        string
		slices      int
		wantMiB     int64
		cost, saved int64
	}{
		// p95 0.10 needs 0.10 GPU: 1g (1/7 = 0.143) holds it and 9,000
		// MiB fits 1g.10gb. The cost falls to 1/7: 1400 -> 200 cents.
		{"1g.10gb", util10, 9000, "1g.10gb", 1, 9856, 200, 1200},
		// 15,000 MiB does not fit 1g.10gb; 1g.20gb (1 compute slice)
		// holds it at 1/7, cheaper than 2g.20gb at 2/7.
		{"1g.20gb", util10, 15000, "1g.20gb", 1, 19968, 200, 1200},
		// p95 0.30 needs 0.30 GPU: 2g is 2/7 = 0.286, too small; 3g is
		// 3/7 = 0.429. 1400 × 3/7 = 600 cents.
		{"3g.40gb", constant(0.30, 10), 9000, "3g.40gb", 3, 40192, 600, 800},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := one(t, Job{Name: "ml/train", Model: "A100-80GB", GPUs: 1, GPUHours: 10, CostCents: 1400,
				Util: c.util, MemoryMiB: []float64{1000, c.peak, 4000}}, Options{})
			if r.Recommended != c.want || r.RecommendedShare != (alloc.Share{Kind: alloc.MIG, Slices: c.slices}) {
				t.Fatalf("recommended %q %+v, want %s (%s)", r.Recommended, r.RecommendedShare, c.want, r.Reason)
			}
			if r.RecommendedMiB != c.wantMiB || r.RecommendedCostCents != c.cost || r.SavingCents != c.saved {
				t.Errorf("MiB %d cost %d saving %d, want %d %d %d", r.RecommendedMiB, r.RecommendedCostCents, r.SavingCents, c.wantMiB, c.cost, c.saved)
			}
			if r.PeakMiB != c.peak || r.Held != "1 GPU" || r.HeldFraction != 1 {
				t.Errorf("peak %v held %q %v, want %v, 1 GPU, 1", r.PeakMiB, r.Held, r.HeldFraction, c.peak)
			}
			if want := 10 * float64(c.slices) / 7; math.Abs(r.RecommendedGPUHours-want) > 1e-12 {
				t.Errorf("recommended GPU-hours %v, want %v", r.RecommendedGPUHours, want)
			}
			if !strings.Contains(r.Reason, c.want) {
				t.Errorf("reason %q does not name %s", r.Reason, c.want)
			}
		})
	}
}

func TestNoRecommendation(t *testing.T) {
	base := Job{Name: "ml/a", Model: "A100-80GB", GPUs: 1, GPUHours: 1, CostCents: 100, Util: util10, MemoryMiB: []float64{9000}}
	for _, c := range []struct {
		name   string
		edit   func(*Job)
		reason string
	}{
		{"busy", func(j *Job) { j.Util = constant(0.9, 5) }, "not below 0.50"},
		// 0.5 of the share is not below the threshold 0.5.
		{"at threshold", func(j *Job) { j.Util = constant(0.5, 5) }, "not below 0.50"},
		// 50,000 MiB fits only 7g.80gb, the whole GPU.
		{"memory", func(j *Job) { j.MemoryMiB = []float64{50000} }, "no MIG profile of A100-80GB"},
		{"no util", func(j *Job) { j.Util = nil }, "no utilisation samples"},
		{"no memory", func(j *Job) { j.MemoryMiB = nil }, "no memory samples"},
		{"multi-GPU", func(j *Job) { j.GPUs = 8 }, "spans 8 GPUs"},
		// G2 (openb trace) has no MIG and no known memory size.
		{"unknown memory", func(j *Job) { j.Model = "G2" }, "memory of GPU model \"G2\" unknown"},
		// 1g is already the smallest MIG share.
		{"smallest", func(j *Job) { j.Held = alloc.Share{Kind: alloc.MIG, Slices: 1} }, "no MIG profile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := base
			c.edit(&j)
			r := one(t, j, Options{})
			if r.Recommended != "" || r.SavingCents != 0 || r.RecommendedCostCents != j.CostCents {
				t.Fatalf("recommended %q saving %d, want none", r.Recommended, r.SavingCents)
			}
			if !strings.Contains(r.Reason, c.reason) {
				t.Errorf("reason %q, want it to contain %q", r.Reason, c.reason)
			}
		})
	}
}

// TestReasonDigits: a reason for no recommendation shows the comparison.
// A 3g of an A100 (3/7 GPU) at threshold 0.5 allows 1.5/7 = 0.2142857 GPU:
// p95 0.5001 of the 3g uses 0.5001 × 3/7 = 0.2143286 GPU, above it, which 3
// decimals (0.214 and 0.214) hid; p95 0.5 uses exactly the limit.
func TestReasonDigits(t *testing.T) {
	for _, c := range []struct {
		p95  float64
		want string
	}{
		{0.5001, "p95 utilisation 0.2143286 GPU is not below 0.50 of the held MIG 3g (0.2142857 GPU)"},
		{0.5, "p95 utilisation 0.2142857 GPU is not below 0.50 of the held MIG 3g (0.2142857 GPU): equal"},
		{0.6, "p95 utilisation 0.257 GPU is not below 0.50 of the held MIG 3g (0.214 GPU)"},
	} {
		r := one(t, Job{Name: "ml/m", Model: "A100-80GB", Held: alloc.Share{Kind: alloc.MIG, Slices: 3}, GPUs: 1,
			CostCents: 100, Util: constant(c.p95, 4), MemoryMiB: []float64{9000}}, Options{})
		if r.Reason != c.want {
			t.Errorf("p95 %v: reason %q, want %q", c.p95, r.Reason, c.want)
		}
	}
}

func TestNoSamplesGivesNaN(t *testing.T) {
	r := one(t, Job{Name: "a", Model: "A100-80GB", GPUs: 1}, Options{})
	if !math.IsNaN(r.UtilP95) || !math.IsNaN(r.PeakMiB) || r.UtilSamples != 0 {
		t.Errorf("p95 %v peak %v samples %d, want NaN NaN 0", r.UtilP95, r.PeakMiB, r.UtilSamples)
	}
}

func TestMIGToSmallerMIG(t *testing.T) {
	// A 3g instance busy 0.2 of itself uses 0.2 × 3/7 = 0.086 GPU: 1g
	// (1/7) holds it. Cost falls by 1/3: 900 -> 300 cents.
	r := one(t, Job{Name: "ml/m", Model: "A100-80GB", Held: alloc.Share{Kind: alloc.MIG, Slices: 3}, GPUs: 1,
		GPUHours: 3, CostCents: 900, Util: constant(0.2, 4), MemoryMiB: []float64{9000}}, Options{})
	if r.Recommended != "1g.10gb" || r.SavingCents != 600 || r.Held != "MIG 3g" {
		t.Fatalf("got %q saving %d held %q, want 1g.10gb 600 MIG 3g (%s)", r.Recommended, r.SavingCents, r.Held, r.Reason)
	}
	if math.Abs(r.UsedFraction-0.6/7) > 1e-12 || math.Abs(r.RecommendedGPUHours-1) > 1e-12 {
		t.Errorf("used %v GPU-hours %v, want 0.0857 1", r.UsedFraction, r.RecommendedGPUHours)
	}
	// 2g -> 1g halves 101 cents: 50.5 rounds half up to 51, saving 50.
	r = one(t, Job{Name: "ml/h", Model: "A100-80GB", Held: alloc.Share{Kind: alloc.MIG, Slices: 2}, GPUs: 1,
		CostCents: 101, Util: constant(0.2, 4), MemoryMiB: []float64{9000}}, Options{})
	if r.RecommendedCostCents != 51 || r.SavingCents != 50 {
		t.Errorf("cost %d saving %d, want 51 50", r.RecommendedCostCents, r.SavingCents)
	}
}

func TestMilliWithoutMIG(t *testing.T) {
	// T4: 16 GB = 16384 MiB (catalog), no MIG. p95 0.15 needs 150
	// milli-GPU; 3000 MiB needs 3000/16384 = 0.1831 -> 184 milli-GPU.
	j := Job{Name: "ml/t", Model: "T4", GPUs: 1, GPUHours: 5, CostCents: 1000, Util: constant(0.15, 3), MemoryMiB: []float64{3000}}
	r := one(t, j, Options{MilliStep: 1})
	if r.Recommended != "184 milli-GPU" || r.RecommendedShare != (alloc.Share{Kind: alloc.Milli, Milli: 184}) ||
		r.RecommendedCostCents != 184 || r.SavingCents != 816 || r.RecommendedMiB != 184*16384/1000 {
		t.Fatalf("got %q %+v cost %d saving %d MiB %d, want 184 milli-GPU, 184, 816, 3014 (%s)",
			r.Recommended, r.RecommendedShare, r.RecommendedCostCents, r.SavingCents, r.RecommendedMiB, r.Reason)
	}
	// The default step rounds 184 up to 200: 1000 -> 200 cents.
	r = one(t, j, Options{})
	if r.Recommended != "200 milli-GPU" || r.SavingCents != 800 || r.RecommendedMiB != 3276 {
		t.Fatalf("got %q saving %d MiB %d, want 200 milli-GPU 800 3276", r.Recommended, r.SavingCents, r.RecommendedMiB)
	}
	// p95 exactly 0.2 needs 200 milli-GPU, not 201 (float rounding).
	j.Util, j.MemoryMiB = constant(0.2, 3), []float64{100}
	if r = one(t, j, Options{MilliStep: 1}); r.Recommended != "200 milli-GPU" {
		t.Errorf("p95 0.2: got %q, want 200 milli-GPU", r.Recommended)
	}
}

func TestSharedReplicaCountsWholeGPU(t *testing.T) {
	// A 1/4 replica of a T4 whose GPU is busy 0.10 (all its pods) uses at
	// most 0.10 GPU, below 0.5 × 0.25. 2000 MiB needs 2000/16384 = 0.122
	// -> 123 milli, rounded to 200; 200/250 of 500 cents = 400.
	r := one(t, Job{Name: "ml/r", Model: "T4", Held: alloc.Share{Kind: alloc.Replica, Replicas: 4}, GPUs: 1,
		CostCents: 500, Util: constant(0.10, 3), MemoryMiB: []float64{2000}}, Options{})
	if r.Recommended != "200 milli-GPU" || r.RecommendedCostCents != 400 || r.SavingCents != 100 || r.UsedFraction != 0.10 {
		t.Fatalf("got %q cost %d saving %d used %v, want 200 milli-GPU 400 100 0.10 (%s)", r.Recommended, r.RecommendedCostCents, r.SavingCents, r.UsedFraction, r.Reason)
	}
	// Busy 0.2: 0.2 GPU is not below 0.5 × 0.25 = 0.125 GPU.
	r = one(t, Job{Name: "ml/r", Model: "T4", Held: alloc.Share{Kind: alloc.Replica, Replicas: 4}, GPUs: 1,
		CostCents: 500, Util: constant(0.2, 3), MemoryMiB: []float64{2000}}, Options{})
	if r.Recommended != "" {
		t.Errorf("busy replica: got %q, want none", r.Recommended)
	}
}

func TestThresholdOption(t *testing.T) {
	// p95 0.30 is below the default 0.5 but not below 0.25.
	j := Job{Name: "a", Model: "A100-80GB", GPUs: 1, CostCents: 700, Util: constant(0.3, 3), MemoryMiB: []float64{100}}
	if r := one(t, j, Options{Threshold: 0.25}); r.Recommended != "" || !strings.Contains(r.Reason, "not below 0.25") {
		t.Errorf("threshold 0.25: got %q (%s), want none", r.Recommended, r.Reason)
	}
}

func TestOrderBySaving(t *testing.T) {
	mk := func(name string, cost int64) Job {
		return Job{Name: name, Model: "A100-80GB", GPUs: 1, CostCents: cost, Util: util10, MemoryMiB: []float64{100}}
	}
	busy := mk("a-busy", 7000)
	busy.Util = constant(1, 2)
	rs, err := Recommend([]Job{busy, mk("b", 700), mk("c", 1400), mk("a", 700)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Job)
	}
	if strings.Join(got, ",") != "c,a,b,a-busy" {
		t.Errorf("order %v, want c,a,b,a-busy (saving 1200, 600, 600, 0)", got)
	}
}

func TestBadInput(t *testing.T) {
	ok := Job{Name: "ml/x", Model: "A100-80GB", GPUs: 1, Util: []float64{0.1}, MemoryMiB: []float64{1}}
	for _, c := range []struct {
		name string
		edit func(*Job)
		o    Options
		want string
	}{
		{"util range", func(j *Job) { j.Util = []float64{0.1, 1.5} }, Options{}, "job 0 (ml/x): utilisation sample 1 is 1.5"},
		{"util NaN", func(j *Job) { j.Util = []float64{math.NaN()} }, Options{}, "utilisation sample 0 is NaN"},
		{"memory", func(j *Job) { j.MemoryMiB = []float64{-1} }, Options{}, "memory sample 0 is -1 MiB"},
		{"gpus", func(j *Job) { j.GPUs = 0 }, Options{}, "GPUs 0"},
		{"cost", func(j *Job) { j.CostCents = -5 }, Options{}, "cost -5 cents"},
		{"share", func(j *Job) { j.Held = alloc.Share{Kind: alloc.Milli, Milli: 2000} }, Options{}, "held share: milli-GPU 2000"},
		{"threshold", func(*Job) {}, Options{Threshold: 2}, "threshold 2 outside 0..1"},
		{"step", func(*Job) {}, Options{MilliStep: -1}, "step -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := ok
			c.edit(&j)
			_, err := Recommend([]Job{j}, c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestDescribeShareOfShare(t *testing.T) {
	// 2 of 4 time-slicing replicas as the node agent's share series gives
	// them (cost/source: Num/Den of a whole GPU), and 1 of 2 replicas of a 3g.
	for s, want := range map[alloc.Share]string{
		{Kind: alloc.Whole, Num: 2, Den: 4}:          "2/4 of 1 GPU",
		{Kind: alloc.MIG, Slices: 3, Num: 1, Den: 2}: "1/2 of MIG 3g",
		{Kind: alloc.Replica, Replicas: 4}:           "1/4 time-sliced replica",
	} {
		if got := describe(s); got != want {
			t.Errorf("%+v: %q, want %q", s, got, want)
		}
	}
}
