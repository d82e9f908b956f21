// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

func TestFraction(t *testing.T) {
	for _, c := range []struct {
		v        float64
		num, den int64
		ok       bool
	}{
		{1, 1, 1, true},
		{0.25, 1, 4, true},
		{1.0 / 3, 1, 3, true},  // 1 of 3 replicas, as the node agent writes it
		{2.0 / 3, 2, 3, true},  // 2 of 3
		{0.3, 3, 10, true},     // 300 milli-GPU
		{0.001, 1, 1000, true}, // 1 milli-GPU
		{1.0 / 1024, 1, 1024, true},
		{5.0 / 7, 5, 7, true},
		{1.0 / 1025, 0, 0, false}, // more replicas than time-slicing allows
		{0, 0, 0, false},
		{1.5, 0, 0, false},
		{math.NaN(), 0, 0, false},
	} {
		n, d, ok := fraction(c.v)
		if n != c.num || d != c.den || ok != c.ok {
			t.Errorf("fraction(%v) = %d/%d %v, want %d/%d %v", c.v, n, d, ok, c.num, c.den, c.ok)
		}
	}
}

const gpuLabels = `Hostname="n1",UUID="GPU-1",modelName="NVIDIA L4"`

// TestGrid: samples every 30 s on a 30 s grid, and one 15 s late. The
// share series has samples at 30, 60 and 105 s: at 90 s nothing lies in
// (60, 90], so the holding breaks: [30 s, 90 s) and [120 s, 150 s) (105 s
// counts at 120 s). The window ends at 150 s.
func TestGrid(t *testing.T) {
	f, err := ParseOpenMetrics("g.om", []byte(`# TYPE gpuplane_device_health gauge
gpuplane_device_health{`+gpuLabels+`} 1 0
gpuplane_device_health{`+gpuLabels+`} 1 30
gpuplane_device_health{`+gpuLabels+`} 1 60
gpuplane_device_health{`+gpuLabels+`} 1 90
gpuplane_device_health{`+gpuLabels+`} 1 120
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p",container="c",label_training_kubeflow_org_job_name="pt"} 0.5 30
gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p",container="c",label_training_kubeflow_org_job_name="pt"} 0.5 60.000
gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p",container="c",label_training_kubeflow_org_job_name="pt"} 0.5 105
gpuplane_device_allocation_share{`+gpuLabels+`} 0.25 0
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{`+gpuLabels+`} 50 30
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{`+gpuLabels+`,namespace="ns",pod="p",container="c"} 1024 30
DCGM_FI_DEV_FB_USED{`+gpuLabels+`,namespace="ns",pod="p",container="c"} 2048 60
# TYPE other gauge
other{x="y"} 1 0
# EOF
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.MinTime != 0 || f.MaxTime != 120_000 || f.Samples != 12 || f.Interval() != 30_000 {
		t.Fatalf("file: min %d max %d samples %d interval %d", f.MinTime, f.MaxTime, f.Samples, f.Interval())
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 150_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	in := r.Input
	if len(in.GPUs) != 1 || in.GPUs[0] != (alloc.GPU{Node: "n1", UUID: "GPU-1", Model: "L4"}) {
		t.Fatalf("GPUs %+v", in.GPUs)
	}
	half := alloc.Share{Kind: alloc.Whole, Num: 1, Den: 2}
	want := []alloc.Holding{
		{Namespace: "ns", Pod: "p", Job: "pt", GPU: "GPU-1", Share: half, Start: 30_000, End: 90_000},
		{Namespace: "ns", Pod: "p", Job: "pt", GPU: "GPU-1", Share: half, Start: 120_000, End: 150_000},
		{GPU: "GPU-1", Share: alloc.Share{Kind: alloc.Whole, Num: 1, Den: 4}, Start: 0, End: 30_000},
	}
	if len(in.Holdings) != len(want) {
		t.Fatalf("holdings %+v", in.Holdings)
	}
	for i := range want {
		if in.Holdings[i] != want[i] {
			t.Errorf("holding %d: %+v, want %+v", i, in.Holdings[i], want[i])
		}
	}
	// Utilisation: one sample, at 30 s, standing for [30 s, 60 s), in
	// percent (DCGM_FI_DEV_GPU_UTIL), scaled by 0.01.
	if g := in.UtilGrid["GPU-1"]; g.Start != 0 || g.Step != 30_000 || len(g.U) != 5 || g.U[1] != 50 || g.Scale != 0.01 || g.U[0] == g.U[0] || g.U[2] == g.U[2] || len(in.Util) != 0 {
		t.Errorf("util %+v %+v", in.UtilGrid, in.Util)
	}
	if r.Unattributed != 1 || r.Series != 5 {
		t.Errorf("unattributed %d series %d, want 1 and 5", r.Unattributed, r.Series)
	}
	// Usage: from 30 s to 60 s, memory 1024 and 2048 MiB, utilisation 0.5
	// and none.
	if len(r.Usage) != 1 {
		t.Fatalf("usage %+v", r.Usage)
	}
	u := r.Usage[0]
	if u.Pod != "p" || u.Namespace != "ns" || u.Model != "L4" || u.Start != 30_000 || u.Step != 30_000 || len(u.FBUsedMiB) != 2 ||
		u.FBUsedMiB[0] != 1024 || u.FBUsedMiB[1] != 2048 || u.Util[0] != 0.5 || !math.IsNaN(float64(u.Util[1])) {
		t.Errorf("usage %+v", u)
	}
}

func TestMappingWarnings(t *testing.T) {
	f, err := ParseOpenMetrics("w.om", []byte(`# TYPE gpuplane_device_health gauge
gpuplane_device_health{Hostname="n1",UUID="GPU-1",modelName="Acme X1"} 1 0
gpuplane_device_health{Hostname="n1",modelName="NVIDIA L4"} 1 0
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{Hostname="n1",UUID="GPU-1",modelName="Acme X1",namespace="a",pod="b"} 0.123456 0
# EOF
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 60_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.Warnings, "\n")
	for _, want := range []string{`GPU model "Acme X1" (modelName) is not in the catalog`, "1 gpuplane_device_health series without a UUID label", "1 gpuplane_device_allocation_share values are no fraction k/n with n <= 1024 in (0, 1]; not counted (the first: w.om:5: 0.123456 of gpuplane_device_allocation_share{Hostname=\"n1\", UUID=\"GPU-1\", modelName=\"Acme X1\", namespace=\"a\", pod=\"b\"} at 1970-01-01T00:00:00Z)"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	if _, err := ReadOpenMetrics(f, Window{From: 0, To: 60_000}); err == nil || !strings.Contains(err.Error(), "step 0 ms") {
		t.Errorf("step 0: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"garbage", "# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\"} 1 0\ngpuplane_device_health{UUID=\"g\" 1 30\n# EOF\n", "e.om:3:"},
		{"no timestamp", "# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\"} 1\n# EOF\n", "e.om:2: gpuplane_device_health: sample without a timestamp"},
		{"no EOF", "# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\"} 1 0\n", "e.om:3: data does not end with # EOF"},
		{"NaN", "gpuplane_device_allocation_share{UUID=\"g\"} NaN 0\n# EOF\n", "e.om:1: gpuplane_device_allocation_share: value NaN"},
		{"twice", "gpuplane_device_health{UUID=\"g\"} 1 0\ngpuplane_device_health{UUID=\"g\"} 0 0\n# EOF\n", `e.om:2: a second sample of gpuplane_device_health{UUID="g"} at 1970-01-01T00:00:00Z (the first is on line 1)`},
		{"empty", "# EOF\n", "e.om: no samples"},
		// CR LF line ends (the parser reads `gauge\r` as a type): the
		// lines counted as in the file.
		{"CRLF garbage", "# TYPE gpuplane_device_health gauge\r\ngpuplane_device_health{UUID=\"g\"} 1 0\r\ngpuplane_device_health{UUID=\"g\" 1 30\r\n# EOF\r\n", "e.om:3:"},
		{"CRLF no timestamp", "# TYPE gpuplane_device_health gauge\r\n# HELP gpuplane_device_health h\r\ngpuplane_device_health{UUID=\"g\"} 1\r\n# EOF\r\n", "e.om:3: gpuplane_device_health: sample without a timestamp"},
		// Health is 1 or 0 (docs/metrics.md).
		{"health 2", "gpuplane_device_health{UUID=\"g\"} 1 0\ngpuplane_device_health{UUID=\"g\"} 2 30\n# EOF\n", `e.om:2: gpuplane_device_health{UUID="g"}: value 2: want 0 (unhealthy) or 1 (healthy)`},
		{"health -1", "gpuplane_device_health{UUID=\"g\"} -1 0\n# EOF\n", `e.om:1: gpuplane_device_health{UUID="g"}: value -1: want 0 (unhealthy) or 1 (healthy)`},
		{"health CRLF", "# TYPE gpuplane_device_health gauge\r\ngpuplane_device_health{UUID=\"g\"} 1.5 0\r\n# EOF\r\n", `e.om:2: gpuplane_device_health{UUID="g"}: value 1.5: want 0`},
	} {
		_, err := ParseOpenMetrics("e.om", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestCRLF: a file with CR LF line ends reads as the same file with LF
// ones (the bundled day: the same series, samples, lines and window), and
// so does one whose last line ends with a CR alone. Before, it was refused
// on its first line: invalid metric type "gauge\r".
func TestCRLF(t *testing.T) {
	lf, err := os.ReadFile("../../../examples/cost/day.om")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseOpenMetrics("d.om", lf)
	if err != nil {
		t.Fatal(err)
	}
	crlf := []byte(strings.ReplaceAll(string(lf), "\n", "\r\n"))
	for name, data := range map[string][]byte{"CR LF": crlf, "CR at the end": crlf[:len(crlf)-1]} {
		got, err := ParseOpenMetrics("d.om", data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the file reads otherwise than with LF line ends: %d samples from line %d to %d, want %d from %d to %d",
				name, got.Samples, got.minLine, got.maxLine, want.Samples, want.minLine, want.maxLine)
		}
	}
}

func FuzzParseOpenMetrics(f *testing.F) {
	f.Add([]byte("# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\",Hostname=\"n\",modelName=\"NVIDIA L4\"} 1 0\n# EOF\n"))
	f.Add([]byte("gpuplane_device_allocation_share{UUID=\"g\",GPU_I_PROFILE=\"1g.10gb\",pod=\"p\",namespace=\"n\"} 0.5 30\n# EOF\n"))
	f.Add([]byte("DCGM_FI_DEV_GPU_UTIL{UUID=\"g\"} 50 1e9\n# EOF\n"))
	f.Add([]byte("# TYPE gpuplane_device_health gauge\r\ngpuplane_device_health{UUID=\"g\"} 1 0\r\n# EOF\r"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseOpenMetrics("f.om", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.om") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		_, _ = ReadOpenMetrics(file, Window{From: file.MinTime, To: file.MinTime + 10*file.Interval(), Step: file.Interval()})
	})
}

// TestWindowLimits: a day at 1 ms steps is 86,400,000 grid times, refused
// before anything is allocated (it took 3.9 GB and ran out of memory); a
// year at 30 s, 1,051,200, is not. Window errors give RFC 3339 times.
func TestWindowLimits(t *testing.T) {
	for _, c := range []struct {
		w    Window
		want string
	}{
		{Window{From: 0, To: 86_400_000, Step: 1}, "window 1970-01-01T00:00:00Z to 1970-01-02T00:00:00Z at step 1ms: 86400000 steps, more than 1100000; want a longer step"},
		{Window{From: 0, To: 365 * 86_400_000, Step: 30_000}, ""},
		{Window{From: 60_000, To: 0, Step: 30_000}, "window: to 1970-01-01T00:00:00Z is not after from 1970-01-01T00:01:00Z"},
	} {
		err := c.w.check()
		if (c.want == "") != (err == nil) || err != nil && err.Error() != c.want {
			t.Errorf("%+v: error %v, want %q", c.w, err, c.want)
		}
	}
}

// om writes an OpenMetrics file: each line "metric{labels} value seconds".
func om(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n# EOF\n") }

// TestInterval: per metric the lower median of the gaps, rounded to whole
// seconds within 1%, and of the metrics the longest. Health gaps 1799.95,
// 1800.10, 1799.95 s: median 1799.95 s, 30m0s; utilisation every 60 s.
func TestInterval(t *testing.T) {
	h := `gpuplane_device_health{` + gpuLabels + `} 1 `
	u := `DCGM_FI_DEV_GPU_UTIL{` + gpuLabels + `} 50 `
	f, err := ParseOpenMetrics("i.om", om(h+"0", h+"1799.95", h+"3600.05", h+"5400", u+"0", u+"60", u+"120"))
	if err != nil {
		t.Fatal(err)
	}
	if iv, m, _ := f.interval(); iv != 1_800_000 || m != metrics.DeviceHealth {
		t.Errorf("interval %d ms of %s, want 1800000 of %s", iv, m, metrics.DeviceHealth)
	}
	// 1.5 s is kept: 1 s and 2 s are more than 1% off.
	f, err = ParseOpenMetrics("i.om", om(h+"0", h+"1.5", h+"3"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval() != 1500 {
		t.Errorf("interval %d ms, want 1500", f.Interval())
	}
	// A step shorter than the interval leaves steps without a sample.
	_, err = ReadOpenMetrics(f, Window{From: 0, To: 3000, Step: 1000})
	if want := "step 1s is shorter than the file's sample interval, 1.5s (gpuplane_device_health)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("step 1 s: %v, want %q", err, want)
	}
}

// TestJitter: two GPUs' series sampled every 30 minutes from T0 =
// 2026-11-01T00:00:00Z, each timestamp up to 50 ms early or late. The
// offsets of the samples modulo 30 minutes from the first (T0 - 50 ms) are
// 0, 10, 50, 80, 90 and 100 ms: the widest gap follows 100 ms, so the grid
// starts at T0 - 50 ms + 100 ms = T0 + 50 ms and every sample counts at
// the grid time just after it. The last sample is at T0 + 3600.04 s; plus
// the interval (30m: gaps 1799.91 to 1800.08 s) that ends at T0 + 5400.04 s,
// so To = T0 + 50 ms + 3 steps. GPU-1's pod holds it at all three samples:
// one holding of the three steps. With the grid at T0 - 50 ms (the first
// sample, as before) the sample at 1800.03 s would count at the second
// grid time after it, and the holding would break.
func TestJitter(t *testing.T) {
	const t0 = 1793491200
	g2 := `Hostname="n1",UUID="GPU-2",modelName="NVIDIA L4"`
	at := func(off float64) string { return strconv.FormatFloat(t0+off, 'f', 3, 64) }
	var lines []string
	for _, off := range []float64{-0.05, 1800.03, 3600} {
		lines = append(lines, `gpuplane_device_health{`+gpuLabels+`} 1 `+at(off),
			`gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p"} 1 `+at(off))
	}
	for _, off := range []float64{0.05, 1799.96, 3600.04} {
		lines = append(lines, `gpuplane_device_health{`+g2+`} 1 `+at(off))
	}
	f, err := ParseOpenMetrics("j.om", om(lines...))
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.DefaultWindow(f.Interval())
	const from = t0*1000 + 50
	if err != nil || w != (Window{From: from, To: from + 3*1_800_000, Step: 1_800_000}) {
		t.Fatalf("window %+v %v, want [%d, +3 steps) at 30 min", w, err, from)
	}
	r, err := ReadOpenMetrics(f, w)
	if err != nil {
		t.Fatal(err)
	}
	want := alloc.Holding{Namespace: "ns", Pod: "p", GPU: "GPU-1", Start: from, End: from + 3*1_800_000}
	if len(r.Input.Holdings) != 1 || r.Input.Holdings[0] != want {
		t.Errorf("holdings %+v, want %+v", r.Input.Holdings, want)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// TestStrayTimestamp: a day of samples every 30 minutes and one sample at
// 1000 s (1970) or in 2030: the default window would span 56 or 3 years of
// idle GPUs; refused, naming the stray sample's line. An explicit window
// reads the file.
func TestStrayTimestamp(t *testing.T) {
	const t0 = 1793491200
	var day []string
	for i := range 48 {
		day = append(day, `gpuplane_device_health{`+gpuLabels+`} 1 `+strconv.Itoa(t0+1800*i))
	}
	for _, c := range []struct {
		name string
		file []string
		want string
	}{
		{"1970", append([]string{`gpuplane_device_health{UUID="GPU-9"} 1 1000`}, day...), "s.om:1: timestamp 1970-01-01T00:16:40Z lies 20758.0 days from the other samples (2026-11-01T00:00:00Z to 2026-11-01T23:30:00Z): a stray timestamp?"},
		{"2030", append(slices.Clone(day), `gpuplane_device_health{UUID="GPU-9"} 1 1893456000`), "s.om:49: timestamp 2030-01-01T00:00:00Z lies 1156.0 days from the other samples (2026-11-01T00:00:00Z to 2026-11-01T23:30:00Z): a stray timestamp?"},
	} {
		f, err := ParseOpenMetrics("s.om", om(c.file...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.DefaultWindow(f.Interval()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		r, err := ReadOpenMetrics(f, Window{From: t0 * 1000, To: (t0 + 86400) * 1000, Step: 1_800_000})
		if err != nil || len(r.Input.GPUs) != 1 || len(r.Warnings) != 0 {
			t.Errorf("%s: explicit window: %+v %v", c.name, r, err)
		}
	}
	// The day alone: [T0, T0 + 24 h).
	f, err := ParseOpenMetrics("s.om", om(day...))
	if err != nil {
		t.Fatal(err)
	}
	if w, err := f.DefaultWindow(f.Interval()); err != nil || w != (Window{From: t0 * 1000, To: (t0 + 86400) * 1000, Step: 1_800_000}) {
		t.Errorf("day: window %+v %v", w, err)
	}
}

// TestTimestampRange: OpenMetrics timestamps are seconds; milliseconds
// (year 58800), negative ones and ones that overflow are refused with
// their line instead of failing later in the JSON report.
func TestTimestampRange(t *testing.T) {
	h := `gpuplane_device_health{` + gpuLabels + `} 1 `
	for _, c := range []struct{ ts, want string }{
		{"1793491200000", "r.om:2: gpuplane_device_health: timestamp 1793491200000.000: want Unix seconds from 1970 to 9999"},
		{"-5", "r.om:2: gpuplane_device_health: timestamp -5.000: want Unix seconds"},
		{"253402300800", "r.om:2: gpuplane_device_health: timestamp 253402300800.000: want Unix seconds"},     // 10000-01-01
		{"99999999999999999999", "r.om:2: gpuplane_device_health: timestamp out of range: want Unix seconds"}, // 1e23 ms overflows int64
	} {
		_, err := ParseOpenMetrics("r.om", om(h+"0", h+c.ts))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.ts, err, c.want)
		}
	}
	if _, err := ParseOpenMetrics("r.om", om(h+"253402300799")); err != nil { // 9999-12-31T23:59:59Z
		t.Errorf("9999: %v", err)
	}
}

// TestCoverage: a window of 10 steps of 30 s with samples at the first two
// only: 8 steps (4 minutes, 80%) without data, charged as idle, warned.
// Through the builder (ReadPrometheus's path), a series with a value at
// every other step: 3 of the 5 steps from its first to last value have
// one, 40% have none, the sign of a step below the scrape interval.
func TestCoverage(t *testing.T) {
	h := `gpuplane_device_health{` + gpuLabels + `} 1 `
	f, err := ParseOpenMetrics("c.om", om(h+"0", h+"30"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 300_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	want := "no samples from 1970-01-01T00:01:00Z to 1970-01-01T00:05:00Z (4m0s, 80% of the window): the GPUs' cost there is idle"
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], want) {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
	b := newBuilder(Window{From: 0, To: 150_000, Step: 30_000})
	l := map[string]string{metrics.LabelUUID: "GPU-1", metrics.LabelHostname: "n1", metrics.LabelModelName: "NVIDIA L4"}
	if err := b.add(metrics.DeviceHealth, "h", l, []int64{0, 60_000, 120_000}, []float64{1, 1, 1}); err != nil {
		t.Fatal(err)
	}
	r, err = b.finish()
	if err != nil {
		t.Fatal(err)
	}
	want = "40% of the steps between a series' first and last samples have no sample: a step (30s) shorter than the scrape interval, or a grid off the samples' phase?"
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], want) {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
}

// TestCoverageGap: a window of 30 steps of 30 s (15 minutes) with a sample
// at every step but 2 and 3 (00:01:00 to 00:02:00, 1 minute, 6% of the
// window) and 10 (one missed scrape): the stretch of two steps is warned,
// though under a tenth of the window; the single step is not. Before, a
// two-hour hole in the bundled day went unsaid.
func TestCoverageGap(t *testing.T) {
	var lines []string
	for i := 0; i < 30; i++ {
		if i != 2 && i != 3 && i != 10 {
			lines = append(lines, fmt.Sprintf("gpuplane_device_health{%s} 1 %d", gpuLabels, 30*i))
		}
	}
	f, err := ParseOpenMetrics("g.om", om(lines...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 900_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	want := "no samples from 1970-01-01T00:01:00Z to 1970-01-01T00:02:00Z (1m0s, 6% of the window): the GPUs' cost there is idle (the node agents or Prometheus down?)"
	if len(r.Warnings) != 1 || r.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
}

// TestStdin: "-" reads standard input.
func TestStdin(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.om")
	if err := os.WriteFile(p, om(`gpuplane_device_health{`+gpuLabels+`} 1 0`, `gpuplane_device_health{`+gpuLabels+`} 1 x`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	if _, err := LoadOpenMetrics("-"); err == nil || !strings.HasPrefix(err.Error(), "standard input:2: ") {
		t.Errorf("error %v, want one on standard input line 2", err)
	}
}

// TestOffPhase: samples every 30 minutes on the hour and half hour read
// on a grid from 00:10: each counts at the first grid time at or after it,
// 10 minutes late (00:00 at 00:10, 00:30 at 00:40); warned, with the
// window on the samples' phase, from 00:00.
func TestOffPhase(t *testing.T) {
	const t0 = 1793491200
	var day []string
	for i := range 48 {
		day = append(day, `gpuplane_device_health{`+gpuLabels+`} 1 `+strconv.Itoa(t0+1800*i))
	}
	f, err := ParseOpenMetrics("p.om", om(day...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: (t0 + 600) * 1000, To: (t0 + 86400) * 1000, Step: 1_800_000})
	if err != nil {
		t.Fatal(err)
	}
	want := "the grid from 2026-11-01T00:10:00Z is off the samples' phase: samples count up to 10m0s after their time, so holdings shift or break; a window from 2026-11-01T00:00:00Z would count each sample at most 0s after it"
	if len(r.Warnings) != 1 || r.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
	// On the phase: no warning.
	if r, err = ReadOpenMetrics(f, Window{From: t0 * 1000, To: (t0 + 86400) * 1000, Step: 1_800_000}); err != nil || len(r.Warnings) != 0 {
		t.Errorf("on the phase: %q %v", r.Warnings, err)
	}
}

// TestOffPhaseJitter: TestJitter's health series read on a grid from T0,
// the samples' nominal time: a sample a little late counts at the next grid
// time, nearly a step after it (GPU-1's at T0 + 1800.03 s counts at T0 +
// 3600 s, 29m59.97s later, the most), so holdings would break; warned, with
// the window on the phase nearest T0: T0 + 50 ms, where each sample counts
// at most 100 ms after it (TestJitter's spread).
func TestOffPhaseJitter(t *testing.T) {
	const t0 = 1793491200
	g2 := `Hostname="n1",UUID="GPU-2",modelName="NVIDIA L4"`
	at := func(off float64) string { return strconv.FormatFloat(t0+off, 'f', 3, 64) }
	var lines []string
	for _, off := range []float64{-0.05, 1800.03, 3600} {
		lines = append(lines, `gpuplane_device_health{`+gpuLabels+`} 1 `+at(off))
	}
	for _, off := range []float64{0.05, 1799.96, 3600.04} {
		lines = append(lines, `gpuplane_device_health{`+g2+`} 1 `+at(off))
	}
	f, err := ParseOpenMetrics("j.om", om(lines...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: t0 * 1000, To: t0*1000 + 3*1_800_000, Step: 1_800_000})
	if err != nil {
		t.Fatal(err)
	}
	want := "the grid from 2026-11-01T00:00:00Z is off the samples' phase: samples count up to 29m59.97s after their time, so holdings shift or break; a window from 2026-11-01T00:00:00.05Z would count each sample at most 100ms after it"
	if len(r.Warnings) == 0 || r.Warnings[0] != want {
		t.Errorf("warnings %q, want first %q", r.Warnings, want)
	}
}

// TestGPULife: a GPU whose series start or stop inside the window (its
// node added or removed) lives from its first grid time to one step past
// its last; one seen at both ends of the window has no bounds (the whole
// window). Window 0-150 s, step 30 s: GPU-2 is seen at 60 and 90 s, so it
// lives [60 s, 120 s); GPU-1 at 0 to 120 s, the last grid time, so always.
func TestGPULife(t *testing.T) {
	const gpu2 = `Hostname="n2",UUID="GPU-2",modelName="NVIDIA L4"`
	f, err := ParseOpenMetrics("life.om", []byte(`# TYPE gpuplane_device_health gauge
gpuplane_device_health{`+gpuLabels+`} 1 0
gpuplane_device_health{`+gpuLabels+`} 1 30
gpuplane_device_health{`+gpuLabels+`} 1 60
gpuplane_device_health{`+gpuLabels+`} 1 90
gpuplane_device_health{`+gpuLabels+`} 1 120
gpuplane_device_health{`+gpu2+`} 1 60
gpuplane_device_health{`+gpu2+`} 1 90
# EOF
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 150_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	want := []alloc.GPU{
		{Node: "n1", UUID: "GPU-1", Model: "L4"},
		{Node: "n2", UUID: "GPU-2", Model: "L4", Start: 60_000, End: 120_000},
	}
	if len(r.Input.GPUs) != 2 || r.Input.GPUs[0] != want[0] || r.Input.GPUs[1] != want[1] {
		t.Fatalf("GPUs %+v, want %+v", r.Input.GPUs, want)
	}
}

// TestMIGDeviceUnheld: a window in which a MIG device has utilisation
// samples but no pod held it (the bundled day up to 00:15, before ml/mig-a
// starts) keeps no grid for the device, so the books give no warning of
// "utilisation samples for GPU GPU-1/1, which is not in the GPU list".
func TestMIGDeviceUnheld(t *testing.T) {
	const h100 = `Hostname="n1",UUID="GPU-1",modelName="NVIDIA H100 80GB HBM3"`
	f, err := ParseOpenMetrics("m.om", om(
		`gpuplane_device_health{`+h100+`} 1 0`,
		`DCGM_FI_PROF_GR_ENGINE_ACTIVE{GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",`+h100+`} 0.5 0`,
		`DCGM_FI_PROF_GR_ENGINE_ACTIVE{`+h100+`} 0.25 0`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 30_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Input.UtilGrid["GPU-1"]; !ok || len(r.Input.UtilGrid) != 1 {
		t.Errorf("utilisation grids %v, want GPU-1's only", r.Input.UtilGrid)
	}
	r.Input.Prices = prices.Default()
	l, err := alloc.Compute(r.Input)
	if err != nil || len(l.Warnings) > 0 {
		t.Errorf("books: %v, warnings %q; want none", err, l.Warnings)
	}
}
