// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jitterDay writes the bundled day with every timestamp moved by up to
// 50 ms either way (line i: ((37 i) mod 101) - 50 ms), as real scrapes
// are, and returns its path.
func jitterDay(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(dayFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k := strings.LastIndexByte(l, ' ')
		ts, err := strconv.ParseInt(l[k+1:], 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: timestamp %q", dayFile, i+1, l[k+1:])
		}
		ms := ts*1000 + int64((37*i)%101-50)
		lines[i] = l[:k+1] + strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
	}
	p := filepath.Join(t.TempDir(), "jitter.om")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJitteredDay: the day with +-50 ms on every timestamp gives every
// figure of the day (checkDay: 818.16 USD, 144 GPU-hours), with the file's
// interval (30m, not the shortest gap, 29m59.9s) and with --step 30m: the
// grid is placed just after the samples (source.File.DefaultWindow).
// Before, the inferred step drifted and ml/blackwell-1 had 23.5 GPU-hours.
func TestJitteredDay(t *testing.T) {
	p := jitterDay(t)
	for _, step := range []time.Duration{0, 30 * time.Minute} {
		reps := runJSON(t, Options{OpenMetrics: p, Step: step})
		checkDay(t, reps)
		if r := reps["pod"]; r.StepSeconds != 1800 || r.To.Sub(r.From) != 24*time.Hour {
			t.Errorf("step %v: window %v to %v step %v s; want a day at 1800 s", step, r.From, r.To, r.StepSeconds)
		}
	}
}

// TestWindowRefused: a step below the file's interval (every other step
// without a sample: ml/train-1 had 0.067 GPU-hours instead of 8), a window
// of too many steps (--step 1ms ran out of memory) and a stray timestamp
// stretching the default window are errors; a window beyond the data is a
// warning.
func TestWindowRefused(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{OpenMetrics: dayFile, Step: 15 * time.Second}, "step 15s is shorter than the file's sample interval, 30m0s"},
		{Options{OpenMetrics: dayFile, Step: time.Millisecond}, "step 1ms is shorter than the file's sample interval"},
		// A step longer than the interval counted a series sampled at any
		// time of a step for the whole step (--step 1h: ml 298.92 USD, not
		// 283.12) and --step 48h charged two days for one.
		{Options{OpenMetrics: dayFile, Step: time.Hour}, "step 1h0m0s is longer than the file's sample interval, 30m0s"},
		{Options{OpenMetrics: dayFile, Step: 31 * time.Minute}, "step 31m0s is longer than the file's sample interval, 30m0s"},
		{Options{OpenMetrics: dayFile, Step: 48 * time.Hour}, "step 48h0m0s is longer than the file's sample interval, 30m0s"},
		{Options{OpenMetrics: dayFile, From: "0", To: "10000000000"}, "5555556 steps, more than 1100000; want a longer step"}, // 1970 to 2286 at 30 min
	} {
		c.o.By, c.o.Format = "pod", "table"
		if out, _, err := run(t, c.o); err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
	data, err := os.ReadFile(dayFile)
	if err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(t.TempDir(), "stray.om")
	line := `gpuplane_device_health{Hostname="node-z",UUID="GPU-z",modelName="NVIDIA L4"} 1 1000` + "\n"
	if err := os.WriteFile(stray, append([]byte(line), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, Options{OpenMetrics: stray, By: "pod", Format: "table"}); err == nil || !strings.Contains(err.Error(), stray+":1: timestamp 1970-01-01T00:16:40Z lies") {
		t.Errorf("stray: %v", err)
	}
	// --to 30 days on: 29 of them without data, warned.
	_, stderr, err := run(t, Options{OpenMetrics: dayFile, By: "pod", Format: "table", To: "2026-12-01T00:00:00Z"})
	if want := "warning: no samples from 2026-11-02T00:00:00Z to 2026-12-01T00:00:00Z (29.0 days, 96% of the window)"; err != nil || !strings.Contains(stderr, want) {
		t.Errorf("--to: %v, stderr %q lacks %q", err, stderr, want)
	}
}

// TestSparseShareDay: the bundled day with the share series sampled every
// hour (the samples at half past dropped) and the rest every 30 minutes:
// the step is the longest interval, 1 h, but the window ends one finest
// interval (30 min) past the last sample, 23:30, so at midnight: the day's
// 6 GPUs over 24 h, 144 GPU-hours, 818.16 USD. Before, it ran to
// 01:00 the next day: 150 GPU-hours, 852.25 USD.
func TestSparseShareDay(t *testing.T) {
	data, err := os.ReadFile(dayFile)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "gpuplane_device_allocation_share{") {
			ts, err := strconv.ParseInt(l[strings.LastIndexByte(l, ' ')+1:], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if ts%3600 != 0 {
				continue
			}
		}
		keep = append(keep, l)
	}
	p := filepath.Join(t.TempDir(), "sparse.om")
	if err := os.WriteFile(p, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	reps := runJSON(t, Options{OpenMetrics: p})
	for by, r := range reps {
		if got := cents(t, r.AssetUSD); got != dayAsset || !near(r.GPUHours, dayGPUHours) || r.GPUs != 6 {
			t.Errorf("by %s: asset %d c, %v GPU-h, %d GPUs; want %d, %d, 6", by, got, r.GPUHours, r.GPUs, dayAsset, dayGPUHours)
		}
	}
	if r := reps["pod"]; r.StepSeconds != 3600 || !r.From.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || r.To.Sub(r.From) != 24*time.Hour {
		t.Errorf("window %v to %v step %v s; want the day at 3600 s", r.From, r.To, r.StepSeconds)
	}
}

// TestFractionalFrom: --from 1793534400.5, half a second after noon, is
// printed as given (the table said "from 12:00:00Z" while the totals,
// 6 GPUs over 11h59m59.5s = 71.999 GPU-hours, were of the real window).
func TestFractionalFrom(t *testing.T) {
	out, _, err := run(t, Options{OpenMetrics: dayFile, From: "1793534400.5", By: "node", Format: "table"})
	if want := "GPU cost from 2026-11-01T12:00:00.5Z to 2026-11-02T00:00:00Z (step 30m0s)"; err != nil || !strings.HasPrefix(out, want) {
		t.Errorf("error %v, table %q, want it to start %q", err, out, want)
	}
}
