// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// backfill loads an OpenMetrics file into a new TSDB directory with
// promtool, as an operator backfills.
func backfill(t testing.TB, file string) string {
	t.Helper()
	promtool := testenv.Tool(t, "promtool", "apt-get install -y prometheus")
	dir := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", file, dir).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
	return dir
}

// startPrometheus serves the TSDB at dir with a real Prometheus
// (testenv.StartPrometheus) and returns its URL once ready. Retention far
// beyond the scripted day, so the backfilled blocks are not deleted as old
// at start-up.
func startPrometheus(t testing.TB, dir string) string {
	t.Helper()
	return testenv.StartPrometheus(t, context.Background(), "global: {scrape_interval: 1h}\n", dir, "--storage.tsdb.retention.time=100y")
}

// TestDayPrometheus backfills the scripted day into a real Prometheus and
// reads it back over the HTTP API: every figure as worked out by hand, and
// the same report, by every dimension and format, as from the file.
func TestDayPrometheus(t *testing.T) {
	base := startPrometheus(t, backfill(t, dayFile))
	o := Options{Prometheus: base, From: "2026-11-01T00:00:00Z", To: "1793577600", Step: 30 * time.Minute}
	reps := runJSON(t, o)
	checkDay(t, reps)
	files := runJSON(t, Options{OpenMetrics: dayFile})
	if !reflect.DeepEqual(reps, files) {
		t.Errorf("Prometheus and file reports differ:\n%+v\n%+v", reps, files)
	}
	for _, format := range []string{"table", "csv"} {
		o.By, o.Format = "pod", format
		p, _, err := run(t, o)
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := run(t, Options{OpenMetrics: dayFile, By: "pod", Format: format})
		if err != nil || p != f {
			t.Errorf("%s: Prometheus and file differ (%v):\n%s\n%s", format, err, p, f)
		}
	}

	// A part of the day, 6 h to 12 h, by node, by hand: node-a train-1 2 h
	// + train-2 4 h + infer-1 6 h = 12 GPU-h x 1106 = 13272 c; node-b
	// mig-a 3/7 x 6 h = 18/7 GPU-h = 18 x 158 = 2844 c, mig-b 6/7 = 948 c;
	// node-c ts-1 1/4 x 6 + ts-2 2/4 x 6 = 4.5 GPU-h x 56 = 252 c; node-e 0.
	// Idle: node-b 18/7 GPU-h = 2844 c, node-c 1.5 GPU-h = 84 c, node-d 6 x
	// 35 = 210 c, node-a 0. Asset 3 x 6 x 1106 + 6 x 56 + 210 = 20454 c.
	o = Options{Prometheus: base, From: "2026-11-01T06:00:00Z", To: "2026-11-01T12:00:00Z", Step: 30 * time.Minute, By: "node", Format: "csv"}
	p, _, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"row,node-a,12,", ",132.72,", "row,node-b,3.428571429,", ",37.92,", "row,node-c,4.5,", ",2.52,",
		"idle,node-a,0,,,0.00,,H100-80GB", "idle,node-b,2.571428571,,,28.44,", "idle,node-c,1.5,,,0.84,", "idle,node-d,6,,,2.10,", "total,,36,,,204.54,,"} {
		if !strings.Contains(p, want) {
			t.Errorf("6 h to 12 h lacks %q:\n%s", want, p)
		}
	}
	o.Prometheus, o.OpenMetrics = "", dayFile
	if f, _, err := run(t, o); err != nil || f != p {
		t.Errorf("6 h to 12 h: file differs (%v):\n%s", err, f)
	}

	// A step of 15 minutes, below the 30-minute samples: every other grid
	// time has none. A series of n samples every 30 minutes has values at n
	// of its 2n - 1 steps; the day's 30 series (hack/costday) span 2,106
	// steps with 1,044 values (the 3g.40gb instance's engine series has
	// samples at 24 of the 48 half-hours from its first to its last): 1,062 missing, 50.4%; warned (cost/source),
	// since Prometheus cannot say its scrape interval.
	o = Options{Prometheus: base, From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z", Step: 15 * time.Minute, By: "pod", Format: "table"}
	_, stderr, err := run(t, o)
	const gaps = "warning: 50% of the steps between a series' first and last samples have no sample: a step (15m0s) shorter than the scrape interval"
	if err != nil || !strings.Contains(stderr, gaps) {
		t.Errorf("step 15m: %v, stderr %q lacks %q", err, stderr, gaps)
	}

	// A step of an hour, above the 30-minute samples: the last hour of the
	// day holds 2 samples of each health series (23:00 and 23:30), one
	// every 30 minutes, and 1 h > 1.5 x 30 min: warned. The day's own
	// 30-minute step is not.
	o = Options{Prometheus: base, From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z", Step: time.Hour, By: "pod", Format: "table"}
	_, stderr, err = run(t, o)
	const coarse = "warning: the step (1h0m0s) is coarser than Prometheus's samples (about one every 30m0s over the window's last 1h0m0s)"
	if err != nil || !strings.Contains(stderr, coarse) {
		t.Errorf("step 1h: %v, stderr %q lacks %q", err, stderr, coarse)
	}
	o.Step = 30 * time.Minute
	if _, stderr, err = run(t, o); err != nil || strings.Contains(stderr, "coarser") {
		t.Errorf("step 30m: %v, stderr %q: want no coarse-step warning", err, stderr)
	}

	// No --from or --to: the 24 hours before now, rounded down to the
	// step. At 00:29:59.999 on the next day with --step 30m the end is
	// 2026-11-02T00:00:00Z and the start 24 h before it: the bundled day,
	// every figure as from --from and --to (checkDay).
	late := time.Date(2026, 11, 2, 0, 29, 59, 999_000_000, time.UTC)
	o = Options{Prometheus: base, Step: 30 * time.Minute, now: func() time.Time { return late }}
	reps = runJSON(t, o)
	checkDay(t, reps)
	if r := reps["pod"]; !r.From.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || !r.To.Equal(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("default window at %v: %v to %v, want the day", late, r.From, r.To)
	}
	// --to alone: the 24 hours before it. From 12:00 on the day to 12:00
	// the next: the day's second half, then 12 hours without samples
	// (warned, charged as idle).
	o = Options{Prometheus: base, Step: 30 * time.Minute, To: "2026-11-02T12:00:00Z", By: "pod", Format: "json", now: func() time.Time { return late }}
	out, stderr, err := run(t, o)
	if want := "warning: no samples from 2026-11-02T00:00:00Z to 2026-11-02T12:00:00Z (12h0m0s, 50% of the window)"; err != nil || !strings.Contains(out, `"from": "2026-11-01T12:00:00Z"`) || !strings.Contains(stderr, want) {
		t.Errorf("--to alone: error %v, stdout %.200q, stderr %q; want from 12:00 and %q", err, out, stderr, want)
	}

	// A window without data, before the day.
	o = Options{Prometheus: base, From: "2026-10-01T00:00:00Z", To: "2026-10-02T00:00:00Z", By: "pod", Format: "json"}
	out, _, err = run(t, o)
	if err == nil || !strings.Contains(err.Error(), "no node agent data in the window") || out != "" {
		t.Errorf("window without data: error %v, stdout %q", err, out)
	}
}

// TestDefaultWindowEnd: without --to the window ends now rounded down to
// a whole step of Unix time: 2026-11-02T00:00:17Z at 30 s is 00:00:00,
// at 00:00:30 itself, and 00:29:59.999 at 30 min is 00:00:00.
func TestDefaultWindowEnd(t *testing.T) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC).UnixMilli() // 1793577600000
	for _, c := range []struct{ now, step, want int64 }{
		{day + 17_000, 30_000, day},
		{day + 30_000, 30_000, day + 30_000},
		{day + 1_799_999, 1_800_000, day},
		{day - 1, 1_800_000, day - 1_800_000},
	} {
		if got := floorStep(c.now, c.step); got != c.want {
			t.Errorf("floorStep(%d, %d) = %d, want %d", c.now, c.step, got, c.want)
		}
	}
}

// TestHealthOutOfRangePrometheus: a gpuplane_device_health sample of 2
// in Prometheus (not the node agent's 0 or 1) is an error naming the
// series and its time, exit 1 and nothing printed; from the file the
// same line is refused with its line number.
func TestHealthOutOfRangePrometheus(t *testing.T) {
	file := filepath.Join(t.TempDir(), "health.om")
	const series = `gpuplane_device_health{Hostname="n1",UUID="GPU-1",modelName="NVIDIA L4"}`
	data := "# TYPE gpuplane_device_health gauge\n" + series + " 1 1793491200\n" + series + " 2 1793493000\n# EOF\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startPrometheus(t, backfill(t, file))
	out, _, err := run(t, Options{Prometheus: base, From: "2026-11-01T00:00:00Z", To: "2026-11-01T01:00:00Z", Step: 30 * time.Minute, By: "pod", Format: "table"})
	want := "prometheus " + base + `: gpuplane_device_health{Hostname="n1", UUID="GPU-1", modelName="NVIDIA L4"}: value 2: want 0 (unhealthy) or 1 (healthy), the node agent's (at 2026-11-01T00:30:00Z)`
	if err == nil || err.Error() != want || out != "" {
		t.Errorf("error %v, stdout %q; want %q", err, out, want)
	}
	_, _, err = run(t, Options{OpenMetrics: file, By: "pod", Format: "table"})
	if want := file + `:3: gpuplane_device_health{Hostname="n1", UUID="GPU-1", modelName="NVIDIA L4"}: value 2: want 0 (unhealthy) or 1 (healthy)`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("file: error %v, want %q", err, want)
	}
}
