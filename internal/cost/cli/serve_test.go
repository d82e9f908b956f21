// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestServe serves the cost rates of the hour [11:00, 12:00) of the bundled
// day from a real Prometheus into which promtool backfilled it, scrapes
// them once and compares every figure with the hour worked out by hand
// (hack/costday; H100 1106, L4 56, T4 35 cents per GPU-hour; teams file: ml
// is research, web product):
//
//	ml   train-2 whole H100 1 h: 1106 c, used 0.6; mig-a 3g 3/7 h: 474 c,
//	     used 0.5 x 3/7; ts-2 2 of 4 L4 replicas 0.5 h: 28 c, used 0.2;
//	     blackwell-1 1 h unpriced: 0 c, used 0.5 -> 1608 c; GPUs 1 + 3/7 + 0.5 + 1
//	     = 41/14, used 0.6 + 3/14 + 0.2 + 0.5.
//	web  infer-1 whole H100: 1106 c, used 0.3; mig-b 1g 1/7: 158 c, used
//	     0.25/7; ts-1 1 of 4: 14 c, used 0.1 -> 1278 c; GPUs 39/28, used
//	     0.4 + 0.25/7.
//	idle node-a none (both H100s held); node-b 1 - 4/7 = 3/7: 474 c; node-c
//	     1 - 3/4 = 1/4: 14 c; node-d the T4: 35 c; node-e none.
//
// The (unattributed) replica starts at 12:00, after the window. Rates are
// cents / (100 x 3600) USD per second; rows plus idle: 3409 c, the GPUs'
// cost for the hour (3 x 1106 + 56 + 35).
func TestServe(t *testing.T) {
	base := startPrometheus(t, backfill(t, dayFile))
	o := DefaultOptions()
	o.Prometheus, o.Serve, o.Step, o.TeamsFile = base, "127.0.0.1:0", 30*time.Minute, teamsFile(t)
	o.now = func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &testenv.LockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, &stdout, stderr) }()

	addrRE := regexp.MustCompile(`serving cost rates on (http://\S+/metrics)\n`)
	var page string
	deadline := time.After(time.Minute)
	for page == "" {
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, stderr)
		case <-deadline:
			t.Fatalf("no refreshed figures after a minute:\n%s", stderr)
		case <-time.After(50 * time.Millisecond):
		}
		m := addrRE.FindStringSubmatch(stderr.String())
		if m == nil {
			continue
		}
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "gpuplane_cost_last_refresh_timestamp_seconds ") {
			page = string(b)
		}
	}
	cancel()
	if err := <-done; err != nil || stdout.Len() != 0 || strings.Contains(stderr.String(), "warning") {
		t.Errorf("serve: %v, stdout %q, stderr %q", err, stdout.String(), stderr)
	}

	usd := func(cents float64) float64 { return cents / (100 * 3600) }
	want := map[string]float64{
		`gpuplane_cost_team_usd_per_second{team="research"}`:                                     usd(1608),
		`gpuplane_cost_team_usd_per_second{team="product"}`:                                      usd(1278),
		`gpuplane_cost_namespace_usd_per_second{namespace="ml"}`:                                 usd(1608),
		`gpuplane_cost_namespace_usd_per_second{namespace="web"}`:                                usd(1278),
		`gpuplane_cost_team_allocated_gpus{team="research"}`:                                     41.0 / 14,
		`gpuplane_cost_team_allocated_gpus{team="product"}`:                                      39.0 / 28,
		`gpuplane_cost_namespace_allocated_gpus{namespace="ml"}`:                                 41.0 / 14,
		`gpuplane_cost_namespace_allocated_gpus{namespace="web"}`:                                39.0 / 28,
		`gpuplane_cost_team_used_gpus{team="research"}`:                                          1.3 + 3.0/14,
		`gpuplane_cost_team_used_gpus{team="product"}`:                                           0.4 + 0.25/7,
		`gpuplane_cost_namespace_used_gpus{namespace="ml"}`:                                      1.3 + 3.0/14,
		`gpuplane_cost_namespace_used_gpus{namespace="web"}`:                                     0.4 + 0.25/7,
		`gpuplane_cost_idle_usd_per_second{model="H100-80GB",node="node-a"}`:                     0,
		`gpuplane_cost_idle_usd_per_second{model="H100-80GB",node="node-b"}`:                     usd(474),
		`gpuplane_cost_idle_usd_per_second{model="L4",node="node-c"}`:                            usd(14),
		`gpuplane_cost_idle_usd_per_second{model="T4",node="node-d"}`:                            usd(35),
		`gpuplane_cost_idle_usd_per_second{model="NVIDIA RTX PRO 6000 Blackwell",node="node-e"}`: 0,
		`gpuplane_cost_idle_gpus{model="H100-80GB",node="node-a"}`:                               0,
		`gpuplane_cost_idle_gpus{model="H100-80GB",node="node-b"}`:                               3.0 / 7,
		`gpuplane_cost_idle_gpus{model="L4",node="node-c"}`:                                      0.25,
		`gpuplane_cost_idle_gpus{model="T4",node="node-d"}`:                                      1,
		`gpuplane_cost_idle_gpus{model="NVIDIA RTX PRO 6000 Blackwell",node="node-e"}`:           0,
		`gpuplane_cost_window_seconds`:                                                           3600,
		`gpuplane_cost_last_refresh_timestamp_seconds`:                                           1793534400,
		`gpuplane_cost_refresh_errors_total`:                                                     0,
	}
	got := map[string]float64{}
	for _, line := range strings.Split(page, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[line[:i]] = v
	}
	for k, w := range want {
		// Money is exact cents over the window's seconds; used GPUs carry
		// float32 utilisation (cost/source).
		if v, ok := got[k]; !ok || math.Abs(v-w) > 1e-6*max(1, math.Abs(w)) {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, w)
		}
		if strings.Contains(k, "usd") && got[k] != w {
			t.Errorf("%s = %v, want exactly %v", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s", k)
		}
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{OpenMetrics: dayFile, Serve: ":0"}, "--serve needs --prometheus"},
		{Options{Prometheus: "http://127.0.0.1:1", Serve: ":0", From: "0"}, "not --from and --to"},
		{Options{Prometheus: "http://127.0.0.1:1", Serve: ":0", Out: t.TempDir()}, "no --out"},
		{Options{Prometheus: "http://127.0.0.1:1", Serve: ":0", ServeWindow: -time.Hour}, "want positive durations"},
		{Options{Prometheus: "http://127.0.0.1:1", Serve: "127.0.0.1:http-bad"}, "--serve: listen tcp"},
	} {
		o := DefaultOptions()
		o.Prometheus, o.OpenMetrics, o.Serve, o.From, o.Out = c.o.Prometheus, c.o.OpenMetrics, c.o.Serve, c.o.From, c.o.Out
		if c.o.ServeWindow != 0 {
			o.ServeWindow = c.o.ServeWindow
		}
		out, _, err := run(t, o)
		if err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("%+v: error %v, stdout %q; want %q", c.o, err, out, c.want)
		}
	}
}
