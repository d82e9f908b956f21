// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// dayFile is the bundled scripted day (hack/costday).
const dayFile = "../../../examples/cost/day.om"

// fig is one row's figures worked out by hand: GPU-hours allocated and
// used, cost and unused cost in cents.
type fig struct {
	alloc, used   float64
	cents, unused int64
}

// The scripted day by hand (hack/costday; default prices, internal/cost/prices:
// H100-80GB 11.06, L4 0.56, T4 0.35 USD per GPU-hour). Every cent is whole,
// so no rounding is involved:
//
//	train-1   H100 whole 0-8 h:            8 GPU-h x 1106 c = 8848 c, used 8 x 0.9 = 7.2
//	train-2   H100 whole 8-20 h:          12 GPU-h = 13272 c, used 12 x 0.6 = 7.2
//	infer-1   H100 whole 0-18 h:          18 GPU-h = 19908 c, used 18 x 0.3 = 5.4
//	mig-a     3g.40gb (3/7) 6-18 h:       36/7 GPU-h x 1106 = 36 x 158 = 5688 c, used x 0.5
//	mig-b     1g.10gb (1/7) 0-24 h:       24/7 GPU-h = 24 x 158 = 3792 c, used x 0.25
//	ts-1      L4 1 of 4 replicas 0-12 h:  3 GPU-h x 56 = 168 c, used x 0.4
//	ts-2      L4 2 of 4 replicas 6-24 h:  9 GPU-h = 504 c, used x 0.4
//	(unattributed) L4 1 of 4, 12-14 h:    0.5 GPU-h = 28 c, used x 0.4
//	blackwell-1    "NVIDIA RTX PRO 6000 Blackwell", no price:    24 GPU-h = 0 c, used x 0.5
//
// Unused: the exact cents x (1 - efficiency), rounded half up: 884.8 -> 885,
// 5308.8 -> 5309, 13935.6 -> 13936, 2844, 2844, 100.8 -> 101, 302.4 -> 302,
// 16.8 -> 17, 0.
var dayByPod = map[string]fig{
	"ml/train-1":     {8, 7.2, 8848, 885},
	"ml/train-2":     {12, 7.2, 13272, 5309},
	"web/infer-1":    {18, 5.4, 19908, 13936},
	"ml/mig-a":       {36.0 / 7, 18.0 / 7, 5688, 2844},
	"web/mig-b":      {24.0 / 7, 6.0 / 7, 3792, 2844},
	"web/ts-1":       {3, 1.2, 168, 101},
	"ml/ts-2":        {9, 3.6, 504, 302},
	"(unattributed)": {0.5, 0.2, 28, 17},
	"ml/blackwell-1": {24, 12, 0, 0},
}

// dayIdle is the capacity no pod held: node-a GPU-a0 20-24 h and GPU-a1
// 18-24 h (unhealthy, still an asset) = 10 GPU-h = 11060 c; node-b 24 -
// 36/7 - 24/7 = 108/7 GPU-h = 108 x 158 = 17064 c; node-c 24 - 3 - 9 - 0.5 =
// 11.5 GPU-h = 644 c; node-d 24 GPU-h = 840 c; node-e none.
var dayIdle = map[string]fig{
	"node-a": {alloc: 10, cents: 11060},
	"node-b": {alloc: 108.0 / 7, cents: 17064},
	"node-c": {alloc: 11.5, cents: 644},
	"node-d": {alloc: 24, cents: 840},
	"node-e": {alloc: 0, cents: 0},
}

// dayAsset: 6 GPUs x 24 h = 144 GPU-h; 3 H100 x 24 x 1106 = 79632, L4 1344,
// T4 840, RTX PRO 0: 81816 c.
const dayAsset, dayGPUHours = 81816, 144

// dayGroups are the other dimensions, sums of the pods above (teams file:
// ml is team research, web team product).
var dayGroups = map[string]map[string]int64{
	"job":       {"ml/llm": 22120, "web/infer-1": 19908, "ml/mig-a": 5688, "web/mig-b": 3792, "web/ts-1": 168, "ml/ts-2": 504, "(unattributed)": 28, "ml/blackwell-1": 0},
	"namespace": {"ml": 28312, "web": 23868, "(unattributed)": 28},
	"team":      {"research": 28312, "product": 23868, "(none)": 28},
	"node":      {"node-a": 42028, "node-b": 9480, "node-c": 700, "node-e": 0},
	"model":     {"H100-80GB": 51508, "L4": 700, "NVIDIA RTX PRO 6000 Blackwell": 0},
}

func cents(t *testing.T, usd string) int64 {
	t.Helper()
	var d, c int64
	if _, err := fmt.Sscanf(usd, "%d.%02d", &d, &c); err != nil {
		t.Fatalf("USD %q: %v", usd, err)
	}
	return d*100 + c
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// teamsFile writes a teams file with namespaces only: cost needs no cohort
// or quotas (quota.LoadNamespaces; owners_test gives a full one).
func teamsFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "teams.yaml")
	if err := os.WriteFile(p, []byte("teams:\n- name: research\n  namespaces: [ml]\n- name: product\n  namespaces: [web]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs the command and returns stdout, stderr and its error.
func run(t *testing.T, o Options) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), o, &out, &errOut)
	return out.String(), errOut.String(), err
}

// runJSON runs the command with --format json by each dimension and
// returns the reports by dimension.
func runJSON(t *testing.T, o Options) map[string]Report {
	t.Helper()
	o.Format = "json"
	o.TeamsFile = teamsFile(t)
	out := map[string]Report{}
	for _, by := range []string{"pod", "job", "namespace", "team", "node", "model"} {
		o.By = by
		stdout, _, err := run(t, o)
		if err != nil {
			t.Fatalf("by %s: %v", by, err)
		}
		var r Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("by %s: %v\n%s", by, err, stdout)
		}
		out[by] = r
	}
	return out
}

// checkDay compares every figure of the day's reports with the hand values.
func checkDay(t *testing.T, reps map[string]Report) {
	t.Helper()
	for by, r := range reps {
		if got := cents(t, r.AssetUSD); got != dayAsset || !near(r.GPUHours, dayGPUHours) || r.GPUs != 6 {
			t.Errorf("by %s: asset %d c, %v GPU-h, %d GPUs; want %d, %d, 6", by, got, r.GPUHours, r.GPUs, dayAsset, dayGPUHours)
		}
		// Conservation to the cent: rows plus idle equal the asset cost.
		var sum int64
		for _, x := range r.Rows {
			sum += cents(t, x.CostUSD)
		}
		for _, x := range r.Idle {
			sum += cents(t, x.CostUSD)
			want, ok := dayIdle[x.Node]
			if !ok || cents(t, x.CostUSD) != want.cents || !near(x.GPUHours, want.alloc) {
				t.Errorf("by %s: idle %+v, want %+v", by, x, want)
			}
		}
		if sum != dayAsset || len(r.Idle) != len(dayIdle) {
			t.Errorf("by %s: rows and idle add up to %d c over %d idle rows, want %d c over %d", by, sum, len(r.Idle), dayAsset, len(dayIdle))
		}
		if r.UnattributedSeries != 1 {
			t.Errorf("by %s: %d unattributed series, want 1", by, r.UnattributedSeries)
		}
		if !strings.Contains(strings.Join(r.Warnings, "\n"), `no price for GPU model "NVIDIA RTX PRO 6000 Blackwell"`) {
			t.Errorf("by %s: warnings %q lack the RTX PRO's missing price", by, r.Warnings)
		}
	}
	pods := reps["pod"]
	if len(pods.Rows) != len(dayByPod) {
		t.Errorf("pod rows %+v, want %d", pods.Rows, len(dayByPod))
	}
	for _, x := range pods.Rows {
		w, ok := dayByPod[x.Key]
		if !ok || !near(x.GPUHoursAllocated, w.alloc) || !near(x.GPUHoursUsed, w.used) || cents(t, x.CostUSD) != w.cents || cents(t, x.UnusedUSD) != w.unused ||
			!near(x.Efficiency, w.used/w.alloc) {
			t.Errorf("pod %s: %+v, want %+v", x.Key, x, w)
		}
	}
	for by, want := range dayGroups {
		r := reps[by]
		if len(r.Rows) != len(want) {
			t.Errorf("by %s: rows %+v, want %v", by, r.Rows, want)
		}
		for _, x := range r.Rows {
			if c, ok := want[x.Key]; !ok || cents(t, x.CostUSD) != c {
				t.Errorf("by %s: %s costs %s, want %d c", by, x.Key, x.CostUSD, c)
			}
		}
	}
	if r := rowOf(reps["job"], "ml/llm"); !near(r.GPUHoursAllocated, 20) || !near(r.GPUHoursUsed, 14.4) || r.UnusedUSD != "61.94" || strings.Join(r.Models, ",") != "H100-80GB" {
		// 22120 c x (1 - 14.4/20) = 6193.6 -> 6194 c.
		t.Errorf("job ml/llm: %+v", r)
	}
}

func rowOf(r Report, key string) Row {
	for _, x := range r.Rows {
		if x.Key == key {
			return x
		}
	}
	return Row{}
}

func TestDayOpenMetrics(t *testing.T) {
	reps := runJSON(t, Options{OpenMetrics: dayFile})
	checkDay(t, reps)
	if r := reps["pod"]; !r.From.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || !r.To.Equal(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)) || r.StepSeconds != 1800 {
		t.Errorf("window %v to %v step %v s; want the day, 1800 s (the file's interval)", r.From, r.To, r.StepSeconds)
	}
}

func TestTableAndCSV(t *testing.T) {
	out, stderr, err := run(t, Options{OpenMetrics: dayFile, By: "model", Format: "table"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"by model", "H100-80GB", "515.08", "idle node-b", "170.64", "total", "818.16"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, `warning: no price for GPU model "NVIDIA RTX PRO 6000 Blackwell"`) {
		t.Errorf("stderr %q", stderr)
	}
	out, _, err = run(t, Options{OpenMetrics: dayFile, By: "node", Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind,key,gpu_hours_allocated", "row,node-b,", ",94.80,", "idle,node-d,24,,,8.40,,T4", "total,,144,,,818.16,,"} {
		if !strings.Contains(out, want) {
			t.Errorf("CSV lacks %q:\n%s", want, out)
		}
	}
}

// The CSV reads back with encoding/csv (which refuses records of another
// length than the header's 14), and a row's models split back on ";": the
// bundled day's namespace ml held H100-80GB (train-1, train-2, mig-a), L4
// (ts-2) and "NVIDIA RTX PRO 6000 Blackwell" (blackwell-1), a name with a space (findings 9).
func TestCSVReadsBack(t *testing.T) {
	out, _, err := run(t, Options{OpenMetrics: dayFile, By: "namespace", Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var kinds []string
	for _, r := range recs {
		if len(r) != 14 {
			t.Errorf("%d fields, want 14: %q", len(r), r)
		}
		kinds = append(kinds, r[0])
		if r[0] == "row" && r[1] == "ml" {
			if got := strings.Split(r[7], ";"); !slices.Equal(got, []string{"H100-80GB", "L4", "NVIDIA RTX PRO 6000 Blackwell"}) {
				t.Errorf("ml models %q, want H100-80GB, L4, NVIDIA RTX PRO 6000 Blackwell", got)
			}
		}
	}
	// Header, 3 rows (ml, web, (unattributed)), 5 idle nodes, total, 7 jobs
	// (ml/llm, web/infer-1, ml/mig-a, web/mig-b, web/ts-1, ml/ts-2, ml/blackwell-1).
	if want := "kind row row row idle idle idle idle idle total"; !strings.HasPrefix(strings.Join(kinds, " "), want) || len(kinds) != 17 {
		t.Errorf("kinds %v, want %s then 7 rightsize", kinds, want)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"no source", Options{By: "pod", Format: "table"}, "give one of --prometheus"},
		{"both", Options{Prometheus: "http://x", OpenMetrics: dayFile, By: "pod", Format: "table"}, "give one of"},
		{"by", Options{OpenMetrics: dayFile, By: "cluster", Format: "table"}, `by "cluster"`},
		{"format", Options{OpenMetrics: dayFile, By: "pod", Format: "xml"}, `format "xml"`},
		{"from", Options{OpenMetrics: dayFile, From: "yesterday", By: "pod", Format: "table"}, `--from "yesterday"`},
		{"no data", Options{OpenMetrics: dayFile, From: "2026-12-01T00:00:00Z", To: "1796169600", By: "pod", Format: "table"}, "no node agent data in the window"},
		// No --to: now, rounded down to the step (before, --from and --to
		// were required); a --from after it is refused before any query.
		{"prom from after now", Options{Prometheus: "http://127.0.0.1:1", From: "9999999999", By: "pod", Format: "table"}, "window: now, rounded down to the step, 20"},
		{"prom to before from", Options{Prometheus: "http://127.0.0.1:1", From: "120", To: "60", By: "pod", Format: "table"}, "window: --to 1970-01-01T00:01:00Z is not after --from 1970-01-01T00:02:00Z"},
		{"prom URL", Options{Prometheus: "prometheus:9090", From: "0", To: "60", By: "pod", Format: "table"}, "want a URL"},
		// Findings 11: flags that do nothing are refused.
		{"force without out", Options{OpenMetrics: dayFile, Force: true, By: "pod", Format: "table"}, "--force overwrites a report in --out: give --out"},
		{"serve-window without serve", Options{OpenMetrics: dayFile, ServeWindow: time.Hour, By: "pod", Format: "table"}, "--serve-window and --serve-refresh go with --serve"},
		{"serve-refresh without serve", Options{OpenMetrics: dayFile, ServeRefresh: time.Minute, By: "pod", Format: "table"}, "--serve-window and --serve-refresh go with --serve"},
		{"serve csv", Options{Prometheus: "http://127.0.0.1:1", Serve: ":0", By: "namespace", Format: "csv"}, "--serve serves /metrics in Prometheus's format: no --format"},
		// Findings 14: the window in the flags' terms, not milliseconds
		// (1793491200 is 2026-11-01T00:00:00Z).
		{"reversed window", Options{OpenMetrics: dayFile, From: "2026-11-02T00:00:00Z", To: "2026-11-01T00:00:00Z", By: "pod", Format: "table"}, "window: --to 2026-11-01T00:00:00Z is not after --from 2026-11-02T00:00:00Z"},
		{"after the file", Options{OpenMetrics: dayFile, From: "2026-12-01T00:00:00Z", By: "pod", Format: "table"}, "window: one step past the file's last sample, 2026-11-02T00:00:00Z is not after --from 2026-12-01T00:00:00Z"},
		{"empty window", Options{Prometheus: "http://127.0.0.1:1", From: "1793494800", To: "1793491200.5", By: "pod", Format: "table"}, "window: --to 2026-11-01T00:00:00.5Z is not after --from 2026-11-01T01:00:00Z"},
	} {
		out, _, err := run(t, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("%s: error %v, stdout %q; want an error containing %q and no output", c.name, err, out, c.want)
		}
	}
}

func TestPrometheusDown(t *testing.T) {
	// A port nobody listens on: listen, note it, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	out, _, err := run(t, Options{Prometheus: "http://" + addr, From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z", By: "pod", Format: "table"})
	if err == nil || !strings.Contains(err.Error(), "prometheus http://"+addr) || !strings.Contains(err.Error(), "connection refused") || out != "" {
		t.Fatalf("error %v, stdout %q", err, out)
	}
}

func TestPrometheusAnswersError(t *testing.T) {
	// The first query succeeds with data, the second fails: nothing is
	// printed, as if complete or otherwise.
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"UUID":"GPU-x","Hostname":"n","modelName":"Tesla T4"},"values":[[1793491200,"1"]]}]}}`)
			return
		}
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}`)
	}))
	defer srv.Close()
	out, _, err := run(t, Options{Prometheus: srv.URL, From: "1793491200", To: "1793494800", By: "pod", Format: "json"})
	if err == nil || !strings.Contains(err.Error(), "too many samples") || !strings.Contains(err.Error(), "gpuplane_device_allocation_share") || out != "" {
		t.Fatalf("error %v, stdout %q", err, out)
	}
}

func TestPrometheusWarnings(t *testing.T) {
	// Prometheus answers with a warning (e.g. a partial answer): the
	// report is printed and the warning goes to stderr, once per query
	// (one per metric read, source.Metrics: the node agent's and DCGM's 5,
	// kube-state-metrics' 3 of AMD and Gaudi pods' requests, AMD's
	// device-metrics-exporter's 2 and Gaudi's exporter's 1).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		result := `[]`
		if strings.Contains(r.FormValue("query"), "gpuplane_device_health") {
			result = `[{"metric":{"UUID":"GPU-x","Hostname":"n","modelName":"Tesla T4"},"values":[[1793491200,"1"]]}]`
		}
		fmt.Fprintf(w, `{"status":"success","warnings":["partial response"],"data":{"resultType":"matrix","result":%s}}`, result)
	}))
	defer srv.Close()
	out, stderr, err := run(t, Options{Prometheus: srv.URL, From: "1793491200", To: "1793494800", Step: time.Hour, By: "node", Format: "csv"})
	// One T4 for one hour: 35 c, all idle.
	if err != nil || !strings.Contains(out, "idle,n,1,,,0.35,,T4") || strings.Count(stderr, "partial response") != 11 {
		t.Fatalf("error %v, stdout %q, stderr %q", err, out, stderr)
	}
}

// A prices file prices the day's "NVIDIA RTX PRO 6000 Blackwell" (a name
// with spaces, quoted as it holds a number, findings 10): blackwell-1 held it 24 h, 24 GPU-h x 5 USD = 120.00 USD, the
// total 818.16 + 120.00 = 938.16 USD; a priced model neither the catalog
// nor the day has ("A100-8OGB", a typo) gets a warning (findings 11).
func TestPricesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "prices.txt")
	if err := os.WriteFile(p, []byte("\"NVIDIA RTX PRO 6000 Blackwell\" 5\nA100-8OGB 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, Options{OpenMetrics: dayFile, By: "model", Format: "json", PricesFile: p})
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.AssetUSD != "938.16" {
		t.Errorf("total %s USD, want 938.16", r.AssetUSD)
	}
	rtx := false
	for _, x := range r.Rows {
		if x.Key == "NVIDIA RTX PRO 6000 Blackwell" {
			rtx = true
			if x.CostUSD != "120.00" || x.GPUHoursAllocated != 24 {
				t.Errorf("NVIDIA RTX PRO 6000 Blackwell: %v GPU-h, %s USD; want 24, 120.00", x.GPUHoursAllocated, x.CostUSD)
			}
		}
	}
	if !rtx {
		t.Errorf("no NVIDIA RTX PRO 6000 Blackwell row: %+v", r.Rows)
	}
	want := "warning: " + p + ` prices GPU model "A100-8OGB", which neither the catalog nor the cluster has` + "\n"
	if !strings.Contains(stderr, want) || strings.Contains(stderr, "no price") {
		t.Errorf("stderr %q, want %q and no \"no price\"", stderr, want)
	}
}

// README's gpuplane cost example is the command's output on the bundled
// day, whole, but for the spaces that end lines (findings 17: it ended with "(4 more jobs)" where the command
// prints all 7).
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const intro = "prints, for the bundled day (warnings for its unpriced GPU model on standard error):\n\n```\n"
	_, block, ok := strings.Cut(string(readme), intro)
	if !ok {
		t.Fatalf("README has no %q", intro)
	}
	block, _, _ = strings.Cut(block, "```\n")
	o := DefaultOptions()
	o.OpenMetrics = dayFile
	out, _, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	trim := func(s string) string { return regexp.MustCompile(` +\n`).ReplaceAllString(s, "\n") }
	if block != trim(out) {
		t.Errorf("README's example:\n%s\nthe command prints:\n%s", block, out)
	}
}

// TestTeamsUnmatched: a team of the teams file none of whose namespaces
// holds a GPU in the window is warned, naming the file, the team and its
// namespaces. On the bundled day ml and web hold GPUs all day (web/mig-b
// and ml/b200-1 from 00:00 to 24:00), so research (ml) and product (web)
// are not warned; team old (ml-old, legacy) is, once, and the rows are
// the same.
func TestTeamsUnmatched(t *testing.T) {
	p := filepath.Join(t.TempDir(), "teams.yaml")
	if err := os.WriteFile(p, []byte("teams:\n- name: research\n  namespaces: [ml]\n- name: product\n  namespaces: [web]\n- name: old\n  namespaces: [ml-old, legacy]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, Options{OpenMetrics: dayFile, TeamsFile: p, By: "team", Format: "csv"})
	want := "warning: teams file " + p + ": team old matches no namespace in the window (its namespaces: legacy, ml-old)\n"
	if err != nil || !strings.Contains(stderr, want) || strings.Count(stderr, "matches no namespace") != 1 || !strings.Contains(out, "row,research,") {
		t.Errorf("error %v, stderr %q; want exactly %q", err, stderr, want)
	}
	// The usual teams file: both teams hold GPUs, no warning.
	usual, stderr, err := run(t, Options{OpenMetrics: dayFile, TeamsFile: teamsFile(t), By: "team", Format: "csv"})
	if err != nil || strings.Contains(stderr, "matches no namespace") || usual != out {
		t.Errorf("error %v, stderr %q: want no team warned and the same rows:\n%s\n%s", err, stderr, usual, out)
	}
}
