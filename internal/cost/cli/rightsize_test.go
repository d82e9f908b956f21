// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"math"
	"strings"
	"testing"
)

// rsFig is one job's right-sizing worked out by hand.
type rsFig struct {
	held               string
	samples            int // utilisation and memory samples alike
	p95, used, peak    float64
	rec                string
	recFrac            float64
	recMiB             int64
	gpuH, recGPUH      float64
	cost, recCost, sav string
	reason             string
}

// The bundled day's right-sizing by hand (hack/costday; internal/gpu's MIG
// table for H100-80GB: 1g.10gb 10240, 2g.20gb 20480, 3g.40gb 40960 MiB).
// Only train-1, infer-1 and mig-a have DCGM_FI_DEV_FB_USED series with
// their pod labels; the day is sampled every 30 minutes.
//
//	web/infer-1  whole H100 0-18 h: 36 samples, util 30 % (p95 0.3 < 0.5 x 1),
//	             peak 9216 MiB. Slices/7 >= 0.3: 3 (2/7 = 0.286 is too
//	             little) -> 3g.40gb (40960 >= 9216). Cost 19908 c x 3/7 =
//	             8532 c, saving 11376 c; 18 GPU-h x 3/7 = 54/7.
//	ml/llm       train-1's samples only (train-2 has no FB series): 16 at
//	             90 %, peak 61440: 0.9 is not below 0.5 -> none.
//	ml/mig-a     3g.40gb 6-18 h: 24 samples at engine 0.5 of the instance
//	             = 0.5 x 3/7 = 3/14 GPU, not below 0.5 x 3/7 -> none.
//	             With threshold 0.8 (3/14 < 0.8 x 3/7): slices >= 1.5 -> 2g
//	             with 20480 >= 20480 MiB -> 2g.20gb, 5688 c x 2/3 = 3792 c,
//	             saving 1896 c; 36/7 GPU-h x 2/3 = 24/7.
//	the others   no memory series with pod labels -> none.
var dayRightsizing = map[string]rsFig{
	"web/infer-1":    {"1 GPU", 36, 0.3, 0.3, 9216, "3g.40gb", 3.0 / 7, 40960, 18, 54.0 / 7, "199.08", "85.32", "113.76", "fit 3g.40gb (3/7 GPU, 40960 MiB)"},
	"ml/llm":         {"1 GPU", 16, 0.9, 0.9, 61440, "", 0, 0, 20, 20, "221.20", "221.20", "0.00", "is not below 0.50 of the held 1 GPU"},
	"ml/mig-a":       {"MIG 3g", 24, 0.5, 1.5 / 7, 20480, "", 0, 0, 36.0 / 7, 36.0 / 7, "56.88", "56.88", "0.00", "is not below 0.50 of the held MIG 3g"},
	"web/mig-b":      {"MIG 1g", 0, nan, nan, nan, "", 0, 0, 24.0 / 7, 24.0 / 7, "37.92", "37.92", "0.00", noUsage},
	"web/ts-1":       {"1/4 of 1 GPU", 0, nan, nan, nan, "", 0, 0, 3, 3, "1.68", "1.68", "0.00", noUsage},
	"ml/ts-2":        {"1/2 of 1 GPU", 0, nan, nan, nan, "", 0, 0, 9, 9, "5.04", "5.04", "0.00", noUsage},
	"ml/blackwell-1": {"1 GPU", 0, nan, nan, nan, "", 0, 0, 24, 24, "0.00", "0.00", "0.00", noUsage},
}

var nan = math.NaN()

// nearPtr compares a nullable figure: nil stands for NaN. Utilisation is
// float32 (cost/source), so 0.3 is within 1e-7.
func nearPtr(p *float64, want float64) bool {
	if math.IsNaN(want) {
		return p == nil
	}
	return p != nil && math.Abs(*p-want) < 1e-7
}

func checkRightsizing(t *testing.T, got []Rightsizing, want map[string]rsFig) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d right-sizing entries, want %d: %+v", len(got), len(want), got)
	}
	for _, x := range got {
		w, ok := want[x.Job]
		if !ok || x.Held != w.held || x.UtilSamples != w.samples || x.MemorySamples != w.samples || x.GPUs != 1 ||
			!nearPtr(x.P95Util, w.p95) || !nearPtr(x.UsedFraction, w.used) || !nearPtr(x.PeakMiB, w.peak) ||
			x.Recommended != w.rec || !near(x.RecommendedFraction, w.recFrac) || x.RecommendedMiB != w.recMiB ||
			!near(x.GPUHours, w.gpuH) || !near(x.RecommendedGPUHours, w.recGPUH) ||
			x.CostUSD != w.cost || x.RecommendedCostUSD != w.recCost || x.SavingUSD != w.sav || !strings.Contains(x.Reason, w.reason) {
			t.Errorf("job %s: %+v, want %+v", x.Job, x, w)
		}
	}
}

func TestDayRightsizing(t *testing.T) {
	r := runJSON(t, Options{OpenMetrics: dayFile})["pod"]
	checkRightsizing(t, r.Rightsizing, dayRightsizing)
	// Largest saving first, then by job.
	var order []string
	for _, x := range r.Rightsizing {
		order = append(order, x.Job)
	}
	if got := strings.Join(order, " "); got != "web/infer-1 ml/blackwell-1 ml/llm ml/mig-a ml/ts-2 web/mig-b web/ts-1" {
		t.Errorf("order %s", got)
	}

	want := map[string]rsFig{}
	for k, v := range dayRightsizing {
		want[k] = v
	}
	w := want["ml/mig-a"]
	w.rec, w.recFrac, w.recMiB, w.recGPUH, w.recCost, w.sav, w.reason = "2g.20gb", 2.0/7, 20480, 24.0/7, "37.92", "18.96", "fit 2g.20gb (2/7 GPU, 20480 MiB) instead of the held MIG 3g"
	want["ml/mig-a"] = w
	w = want["ml/llm"]
	w.reason = "is not below 0.80 of the held 1 GPU (0.800 GPU)"
	want["ml/llm"] = w
	r = runJSON(t, Options{OpenMetrics: dayFile, RightsizeThreshold: 0.8})["pod"]
	checkRightsizing(t, r.Rightsizing, want)

	out, _, err := run(t, Options{OpenMetrics: dayFile, By: "job", Format: "table"})
	if err != nil {
		t.Fatal(err)
	}
	// Columns compared with runs of spaces as one.
	flat := strings.Join(strings.Fields(out), " ")
	for _, line := range []string{"web/infer-1 H100-80GB 1 GPU 0.300 9216 199.08 113.76 3g.40gb ml/blackwell-1",
		// 0.5 × 3/7 is the limit 0.5 × 3/7: the digits show it.
		"ml/mig-a H100-80GB MIG 3g 0.500 20480 56.88 0.00 p95 utilisation 0.2142857 GPU is not below 0.50 of the held MIG 3g (0.2142857 GPU): equal ml/ts-2",
		"web/ts-1 L4 1/4 of 1 GPU - - 1.68 0.00 " + noUsage} {
		if !strings.Contains(flat, line) {
			t.Errorf("table lacks %q:\n%s", line, out)
		}
	}
	out, _, err = run(t, Options{OpenMetrics: dayFile, By: "job", Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nrightsize,web/infer-1,18,,,199.08,,H100-80GB,1 GPU,0.3,9216,3g.40gb,113.76,"; !strings.Contains(out, want) {
		t.Errorf("CSV lacks %q:\n%s", want, out)
	}
	for _, bad := range []float64{-0.1, 1.5} {
		if out, _, err := run(t, Options{OpenMetrics: dayFile, By: "job", Format: "table", RightsizeThreshold: bad}); err == nil || !strings.Contains(err.Error(), "threshold") || out != "" {
			t.Errorf("threshold %v: error %v, stdout %q", bad, err, out)
		}
	}
}
