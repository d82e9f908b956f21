// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// t0 is 2026-11-30 00:00 UTC.
var t0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// hourSource is one hour worked by hand:
//
//	g1 A100-80GB on n1, 2.00 USD/h, utilisation 0.5: pod a/p1 (team red)
//	   holds it whole for the first 30 min: 0.5 GPU-h, 100 c, used 0.25.
//	g2 T4 on n2, 0.36 USD/h, no samples: pod b/p2 (team blue) one of 4
//	   time-slicing replicas for the hour, 0.25 GPU-h, 9 c; pod a/p3 (team
//	   red) 500 milli-GPU for the hour, 0.5 GPU-h, 18 c.
//	idle: n1 0.5 GPU-h, 100 c; n2 0.25 GPU-h, 9 c. Asset 236 c, all exact.
//
// Over 3600 s: red 118 c (1.0 GPU held, 0.25 used), blue 9 c (0.25, 0);
// namespaces a and b the same; idle n1 100 c (0.5 GPU), n2 9 c (0.25).
func hourSource(t *testing.T) Source {
	p := &prices.Prices{}
	if err := p.ReadPrices("test", strings.NewReader("A100-80GB 2.00\nT4 0.36")); err != nil {
		t.Fatal(err)
	}
	return func(_ context.Context, from, to time.Time) (alloc.Input, error) {
		f := from.UnixMilli()
		var util []alloc.Sample
		for m := int64(0); m <= 60; m++ {
			util = append(util, alloc.Sample{Time: f + m*60_000, Util: 0.5})
		}
		return alloc.Input{
			GPUs: []alloc.GPU{{Node: "n1", UUID: "g1", Model: "A100-80GB"}, {Node: "n2", UUID: "g2", Model: "T4"}},
			Holdings: []alloc.Holding{
				{Namespace: "a", Pod: "p1", Team: "red", GPU: "g1", Share: alloc.Share{Kind: alloc.Whole}, Start: f, End: f + 1_800_000},
				{Namespace: "b", Pod: "p2", Team: "blue", GPU: "g2", Share: alloc.Share{Kind: alloc.Replica, Replicas: 4}, Start: f, End: to.UnixMilli()},
				{Namespace: "a", Pod: "p3", Team: "red", GPU: "g2", Share: alloc.Share{Kind: alloc.Milli, Milli: 500}, Start: f, End: to.UnixMilli()},
			},
			Util:   map[string][]alloc.Sample{"g1": util},
			Prices: p,
		}, nil
	}
}

// usd returns cents per hour as USD per second, as the expected text.
func usd(centsPerHour int) string {
	return fmt.Sprint(float64(centsPerHour) / 360000)
}

func TestCollect(t *testing.T) {
	e := New(hourSource(t), time.Hour)
	if err := e.Refresh(context.Background(), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`
# HELP gpuplane_cost_team_usd_per_second Cost rate of the GPU shares the team's pods held over the trailing window, USD per second (gpuplane cost; docs/cost.md).
# TYPE gpuplane_cost_team_usd_per_second gauge
gpuplane_cost_team_usd_per_second{team="blue"} %s
gpuplane_cost_team_usd_per_second{team="red"} %s
# HELP gpuplane_cost_namespace_usd_per_second Cost rate of the GPU shares the namespace's pods held over the trailing window, USD per second.
# TYPE gpuplane_cost_namespace_usd_per_second gauge
gpuplane_cost_namespace_usd_per_second{namespace="a"} %s
gpuplane_cost_namespace_usd_per_second{namespace="b"} %s
# HELP gpuplane_cost_idle_usd_per_second Cost rate of the GPU capacity no pod held over the trailing window, per node and GPU model, USD per second.
# TYPE gpuplane_cost_idle_usd_per_second gauge
gpuplane_cost_idle_usd_per_second{model="A100-80GB",node="n1"} %s
gpuplane_cost_idle_usd_per_second{model="T4",node="n2"} %s
# HELP gpuplane_cost_team_allocated_gpus Mean GPUs the team's pods held over the trailing window (MIG slices, replicas and milli-GPU shares as fractions of a GPU).
# TYPE gpuplane_cost_team_allocated_gpus gauge
gpuplane_cost_team_allocated_gpus{team="blue"} 0.25
gpuplane_cost_team_allocated_gpus{team="red"} 1
# HELP gpuplane_cost_team_used_gpus Mean GPUs the team's pods used over the trailing window: held times the GPU's utilisation.
# TYPE gpuplane_cost_team_used_gpus gauge
gpuplane_cost_team_used_gpus{team="blue"} 0
gpuplane_cost_team_used_gpus{team="red"} 0.25
# HELP gpuplane_cost_namespace_allocated_gpus Mean GPUs the namespace's pods held over the trailing window.
# TYPE gpuplane_cost_namespace_allocated_gpus gauge
gpuplane_cost_namespace_allocated_gpus{namespace="a"} 1
gpuplane_cost_namespace_allocated_gpus{namespace="b"} 0.25
# HELP gpuplane_cost_idle_gpus Mean GPUs no pod held over the trailing window, per node and GPU model.
# TYPE gpuplane_cost_idle_gpus gauge
gpuplane_cost_idle_gpus{model="A100-80GB",node="n1"} 0.5
gpuplane_cost_idle_gpus{model="T4",node="n2"} 0.25
# HELP gpuplane_cost_window_seconds Length of the trailing window the cost rates are computed over, in seconds.
# TYPE gpuplane_cost_window_seconds gauge
gpuplane_cost_window_seconds 3600
# HELP gpuplane_cost_last_refresh_timestamp_seconds End of the window of the last successful refresh, in Unix seconds.
# TYPE gpuplane_cost_last_refresh_timestamp_seconds gauge
gpuplane_cost_last_refresh_timestamp_seconds 1.7960004e+09
# HELP gpuplane_cost_refresh_errors_total Refreshes that failed; the last good figures stay published.
# TYPE gpuplane_cost_refresh_errors_total counter
gpuplane_cost_refresh_errors_total 0
`, usd(9), usd(118), usd(118), usd(9), usd(100), usd(9))
	// The namespace's used GPUs are checked apart: a's 0.25, b's 0.
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), metrics.CostTeamUSDPerSecond, metrics.CostNamespaceUSDPerSecond, metrics.CostIdleUSDPerSecond, metrics.CostTeamAllocatedGPUs, metrics.CostTeamUsedGPUs,
		metrics.CostNamespaceAllocatedGPUs, metrics.CostIdleGPUs, metrics.CostWindowSeconds, metrics.CostLastRefreshTimestampSeconds, metrics.CostRefreshErrorsTotal); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(e, metrics.CostNamespaceUsedGPUs); got != 2 {
		t.Errorf("%d namespace used series, want 2", got)
	}
	// Conservation: teams plus idle, and namespaces plus idle, add up to
	// the GPUs' 236 c over the hour.
	e.mu.Lock()
	for _, r := range []alloc.Report{e.teams, e.spaces} {
		var sum int64
		for _, x := range r.Rows {
			sum += x.CostCents
		}
		for _, x := range r.Idle {
			sum += x.CostCents
		}
		if sum != 236 || r.AssetCents != 236 {
			t.Errorf("%s: rows add up to %d c, asset %d c; want 236", r.By, sum, r.AssetCents)
		}
	}
	e.mu.Unlock()
}

// TestLint: every name passes promlint (client_golang's testutil).
func TestLint(t *testing.T) {
	e := New(hourSource(t), time.Hour)
	if err := e.Refresh(context.Background(), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.CollectAndLint(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	if n := testutil.CollectAndCount(e); n != 2+1+3*2+3*2+2*2 {
		t.Errorf("%d series, want 19", n)
	}
}

// TestRefreshError: before the first refresh only the window and the error
// counter are served; a failed refresh keeps the last good figures and
// counts one error.
func TestRefreshError(t *testing.T) {
	good := hourSource(t)
	fail := false
	e := New(func(ctx context.Context, from, to time.Time) (alloc.Input, error) {
		if fail {
			return alloc.Input{}, errors.New("prometheus: connection refused")
		}
		return good(ctx, from, to)
	}, time.Hour)
	if n := testutil.CollectAndCount(e); n != 2 {
		t.Errorf("%d series before a refresh, want 2", n)
	}
	if err := e.Refresh(context.Background(), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	fail = true
	if err := e.Refresh(context.Background(), t0.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err %v", err)
	}
	if v := testutil.ToFloat64(collectorOf(e, metrics.CostRefreshErrorsTotal)); v != 1 {
		t.Errorf("refresh errors %v, want 1", v)
	}
	if v := testutil.ToFloat64(collectorOf(e, metrics.CostLastRefreshTimestampSeconds)); v != float64(t0.Add(time.Hour).Unix()) {
		t.Errorf("last refresh %v, want the first window's end", v)
	}
	// A bad Input (a holding of an unknown GPU) is an error too.
	e = New(func(context.Context, time.Time, time.Time) (alloc.Input, error) {
		return alloc.Input{Holdings: []alloc.Holding{{Namespace: "a", Pod: "p", GPU: "nope"}}}, nil
	}, time.Hour)
	if err := e.Refresh(context.Background(), t0); err == nil || !strings.Contains(err.Error(), `GPU "nope" is not in the GPU list`) {
		t.Fatalf("err %v", err)
	}
}

// collectorOf filters e's metrics to the named one, for testutil.ToFloat64.
type filtered struct {
	e    *Exporter
	name string
}

func collectorOf(e *Exporter, name string) filtered { return filtered{e, name} }

func (f filtered) Describe(ch chan<- *prometheus.Desc) { ch <- descs[f.name] }

func (f filtered) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { f.e.Collect(all); close(all) }()
	for m := range all {
		if m.Desc() == descs[f.name] {
			ch <- m
		}
	}
}

// TestServe serves on port 0, scrapes /metrics in the Prometheus text
// format, and stops when the context ends.
func TestServe(t *testing.T) {
	e := New(hourSource(t), time.Hour)
	if err := e.Refresh(context.Background(), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	for _, want := range []string{`gpuplane_cost_team_usd_per_second{team="red"} ` + usd(118), `gpuplane_cost_idle_gpus{model="T4",node="n2"} 0.25`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %s:\n%s", want, body)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestRun refreshes at once, then stops when the context ends.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	src := hourSource(t)
	e := New(func(c context.Context, from, to time.Time) (alloc.Input, error) {
		calls++
		cancel()
		return src(c, from, to)
	}, time.Hour)
	e.Run(ctx, time.Hour, func(err error) { t.Errorf("refresh: %v", err) })
	if calls != 1 {
		t.Errorf("%d refreshes, want 1", calls)
	}
	if n := testutil.CollectAndCount(e, metrics.CostTeamUSDPerSecond); n != 2 {
		t.Errorf("%d team series after Run, want 2", n)
	}
}

// dashboardFile is the Grafana dashboard whose Cost row queries these
// series.
const dashboardFile = "../../../deploy/grafana/gpuplane-gpus.json"

// TestDashboardQueriesWithPromtool evaluates the dashboard's cost queries
// with promtool (Debian package prometheus) on what the exporter serves for
// hourSource, all nodes selected, and compares them with the figures
// worked by hand there: USD per hour red 1.18, blue 0.09; namespaces a
// 1.18, b 0.09; idle A100-80GB 1.00, T4 0.09; GPUs held red 1, blue 0.25,
// used red 0.25, blue 0.
func TestDashboardQueriesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but promtool is not installed")
		}
		t.Skip("promtool is not installed (Debian: apt-get install -y prometheus)")
	}
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	// USD per hour from cents per hour: 3600 x the served USD per second,
	// as PromQL multiplies it.
	perHour := func(c float64) float64 { return 3600 * (c / 360000) }
	want := map[string]map[string]float64{
		`3600 * sum by (team) (` + metrics.CostTeamUSDPerSecond + `)`:              {`{team="red"}`: perHour(118), `{team="blue"}`: perHour(9)},
		`3600 * sum by (namespace) (` + metrics.CostNamespaceUSDPerSecond + `)`:    {`{namespace="a"}`: perHour(118), `{namespace="b"}`: perHour(9)},
		`3600 * sum by (model) (` + metrics.CostIdleUSDPerSecond + `{node=~".*"})`: {`{model="A100-80GB"}`: perHour(100), `{model="T4"}`: perHour(9)},
		`sum by (team) (` + metrics.CostTeamAllocatedGPUs + `)`:                    {`{team="red"}`: 1, `{team="blue"}`: 0.25},
		`sum by (team) (` + metrics.CostTeamUsedGPUs + `)`:                         {`{team="red"}`: 0.25, `{team="blue"}`: 0},
	}
	var tests strings.Builder
	seen := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			if !strings.Contains(tg.Expr, "gpuplane_cost_") {
				continue
			}
			expr := strings.ReplaceAll(tg.Expr, "$node", ".*")
			exp, ok := want[expr]
			if !ok {
				t.Errorf("panel %q: query %s has no figures worked by hand here", p.Title, expr)
				continue
			}
			seen++
			fmt.Fprintf(&tests, "      - expr: %q\n        eval_time: 2m\n        exp_samples:\n", expr)
			for labels, v := range exp {
				fmt.Fprintf(&tests, "          - labels: %q\n            value: %s\n", labels, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%d cost queries in %s, want %d", seen, dashboardFile, len(want))
	}
	e := New(hourSource(t), time.Hour)
	if err := e.Refresh(context.Background(), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var series strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			s := strconv.FormatFloat(v, 'g', -1, 64)
			fmt.Fprintf(&series, "      - series: '%s{%s}'\n        values: '%s %s %s'\n", mf.GetName(), strings.Join(ls, ","), s, s, s)
		}
	}
	file := filepath.Join(t.TempDir(), "cost_test.yaml")
	text := "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" + series.String() + "    promql_expr_test:\n" + tests.String()
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool test rules: %v\n%s\n%s", err, out, text)
	}
}

func TestRunClock(t *testing.T) {
	// Run ends each window at Now: the source is asked for [11:00, 12:00).
	noon := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(t.Context())
	var from, to time.Time
	e := New(func(_ context.Context, f, tt time.Time) (alloc.Input, error) {
		from, to = f, tt
		cancel()
		return alloc.Input{}, errors.New("stop")
	}, time.Hour)
	e.Now = func() time.Time { return noon }
	e.Run(ctx, time.Hour, nil)
	if !from.Equal(noon.Add(-time.Hour)) || !to.Equal(noon) {
		t.Errorf("window %v to %v, want 11:00 to 12:00", from, to)
	}
}
