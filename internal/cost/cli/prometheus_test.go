package cli

import (
	"context"
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

	// A window without data, before the day.
	o = Options{Prometheus: base, From: "2026-10-01T00:00:00Z", To: "2026-10-02T00:00:00Z", By: "pod", Format: "json"}
	out, _, err := run(t, o)
	if err == nil || !strings.Contains(err.Error(), "no node agent data in the window") || out != "" {
		t.Errorf("window without data: error %v, stdout %q", err, out)
	}
}
