// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func sample() *engine.Report {
	return &engine.Report{Source: "a + b", Mode: "fill", Nodes: 2, GPUs: 4, Pods: 3, Inflate: 1.3,
		Results: []engine.Result{
			{Policy: "fgd", Seed: 1, GPUAllocationRatio: 0.95, FragmentationRatio: 0.90, Curve: []engine.Point{{ArrivedRatio: 0.1, AllocationRatio: 0.1, FragmentationRatio: 0.2}, {ArrivedRatio: 1.3, AllocationRatio: 0.95, FragmentationRatio: 0.9}}},
			{Policy: "fgd", Seed: 2, GPUAllocationRatio: 0.93, FragmentationRatio: 0.80, Curve: []engine.Point{{ArrivedRatio: 0.1, AllocationRatio: 0.1, FragmentationRatio: 0.2}, {ArrivedRatio: 1.3, AllocationRatio: 0.93, FragmentationRatio: 0.8}}},
			{Policy: "bestfit", Seed: 1, GPUAllocationRatio: 0.9, FragmentationRatio: 0.95, Curve: []engine.Point{{ArrivedRatio: 0.1, AllocationRatio: 0.1, FragmentationRatio: 0.3}, {ArrivedRatio: 1.3, AllocationRatio: 0.9, FragmentationRatio: 0.95}}},
		},
		Summary: []engine.Summary{{Policy: "fgd", Runs: 2, GPUAllocationRatioMean: 0.94, GPUAllocationRatioStd: 0.01}, {Policy: "bestfit", Runs: 1, GPUAllocationRatioMean: 0.9}},
	}
}

// TestReplayTable: the fault report's replay input (2 T4s at 0.35 USD/h, 990 s)
// leaves 2000·990 − (470·990 + 470·989 + 440·988) milli-GPU-seconds idle:
// 615150/1000/3600 = 0.170875 GPU-hours, 0.0598 USD. The table showed both
// as 0; with one decimal of GPU-hours and cents they read 0.2 and 0.06.
func TestReplayTable(t *testing.T) {
	r := &engine.Report{Source: "r.csv + rp.csv", Mode: "replay", Nodes: 1, GPUs: 2, Pods: 4,
		Results: []engine.Result{{Policy: "bestfit", Seed: 42, Replay: &engine.ReplayStats{NeverStarted: 1,
			TimeWeightedAllocationRatio: 0.6893181818181818, IdleGPUHours: 0.170875, IdleCostUSD: 0.170875 * 0.35}}},
		Summary: []engine.Summary{{Policy: "bestfit", Runs: 1, TimeWeightedAllocMean: 0.6893181818181818}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	var row []string // the table's row, above the legend and notes
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "bestfit" {
			row = f
		}
	}
	if !strings.Contains(b.String(), "note: bestfit: 1.0 of 4 pods (25.0%) never started") {
		t.Errorf("no never-started note:\n%s", b.String())
	}
	if got, want := row, []string{"bestfit", "1", "68.93", "0.00", "0.00", "0.00", "1.0", "0.2", "0.06"}; !reflect.DeepEqual(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
}

// TestLegend: the fill legend's facts are the run's, never canned: the
// fragmentation range (74% and 80%, not "about 99%"), the failed pods of
// the arrived ones, and whether the arrived demand exceeds the capacity
// (5,200 of 4,000 milli-GPU: 130%, so at least 1 − 1/1.3 = 23% cannot
// fit; 2,000 of 4,000: the cluster could hold it all).
func TestLegend(t *testing.T) {
	for _, tc := range []struct {
		arrived int64
		want    string
	}{
		{5200, "frag 74.00% to 80.00% at the end; failed 3 to 4 pods of 10 arrived per run; arrived GPU demand 130% of GPU capacity, so at least 23% of it cannot fit"},
		{2000, "arrived GPU demand 50% of GPU capacity: the cluster could hold it all, so each failure is the placement's or the pod's shape"},
	} {
		r := sample()
		r.Results = r.Results[:2]
		for k := range r.Results {
			x := &r.Results[k]
			x.Pods, x.FailedPods, x.ArrivedGPUMilli, x.TotalGPUMilli, x.FragmentationRatio = 10, 3+k, tc.arrived, 4000, 0.74+0.06*float64(k)
		}
		var b bytes.Buffer
		if err := WriteTable(&b, r); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(b.String()), " ") // the table breaks the line after each ";"
		if !strings.Contains(text, tc.want) || strings.Contains(text, "99%") || strings.Contains(text, "expected") {
			t.Errorf("arrived %d: legend lacks %q or says a canned figure:\n%s", tc.arrived, tc.want, b.String())
		}
		if h := string(HTML(r)); !strings.Contains(h, html.EscapeString(tc.want)) || strings.Contains(h, "about 99%") || strings.Contains(h, "are expected") {
			t.Errorf("arrived %d: the HTML note lacks the run's facts", tc.arrived)
		}
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sample()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"fgd", "94.00", "1.00", "bestfit", "90.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestTableHeaderCounts: one node, one GPU, one pod and one run are
// written in the singular ("1 GPUs" was).
func TestTableHeaderCounts(t *testing.T) {
	r := sample()
	r.Nodes, r.GPUs, r.Pods = 1, 1, 1
	r.Results = r.Results[:1]
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "gpuplane simulate: a + b, 1 node, 1 GPU, 1 trace pod, mode fill, inflate 1.30, 1 run in "
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, want) {
		t.Errorf("header %q, want %q...", first, want)
	}
	b.Reset()
	r = sample()
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "a + b, 2 nodes, 4 GPUs, 3 trace pods, mode fill"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var back engine.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Results) != 3 || back.Summary[0].GPUAllocationRatioMean != 0.94 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

// TestHTMLSelfContained checks that the page loads nothing: no scripts, no
// external URLs; a fill report has three charts (allocation, its end
// enlarged, fragmentation).
func TestHTMLSelfContained(t *testing.T) {
	page := string(HTML(sample()))
	if n := strings.Count(page, "<polyline"); n != 6 {
		t.Errorf("%d chart lines, want 3 charts × 2 policies", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<link") || strings.Contains(page, "<img") {
		t.Error("page loads scripts, styles or images")
	}
	for _, u := range regexp.MustCompile(`https?://[^"' )]+`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("external URL %s", u)
		}
	}
}

// TestParamsHTML: the run parameters show the tie-break, the popularity
// and the price of each GPU model, models in name order, in cents.
func TestParamsHTML(t *testing.T) {
	r := sample()
	r.Params = &engine.Params{TieBreak: "first", Popularity: 0.95, PricesUSDPerGPUHour: map[string]float64{"V100M32": 2.48, "T4": 0.35}}
	page := string(HTML(r))
	for _, want := range []string{
		"<tr><th>tie-break</th><td>first</td></tr>",
		"<tr><th>popularity</th><td>0.95</td></tr>",
		"<tr><th>prices (USD per GPU-hour)</th><td>T4 0.35, V100M32 2.48</td></tr>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// TestSummaryHTML: fgd's two seeds allocate 95% and 93% (mean 94, population
// deviation 1) with fragmentation 90% and 80% (85 ± 5); bestfit's one seed
// 90% and 95%. fgd is best in allocation; fragmentation, which the docs
// say not to compare at the end of a fill, is never bold; one run shows no
// deviation.
func TestSummaryHTML(t *testing.T) {
	page := string(HTML(sample()))
	for _, want := range []string{
		`<tr><td>fgd</td><td>2</td><td class="best">94.00 <span class="sd">± 1.00</span></td><td>85.00 <span class="sd">± 5.00</span></td>`,
		`<tr><td>bestfit</td><td>1</td><td>90.00</td><td>95.00</td>`,
		`Highest GPU allocation at the end of the run: <b>fgd</b>, 94.00%; lowest: bestfit, 90.00%. The difference is 4.00 points, 0 of the cluster's 4 GPUs.`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "published") {
		t.Error("an unrecognised pod list shows published values")
	}
}

// texts returns the text of the elements of class cls in an SVG.
func texts(svg, cls string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`class="`+cls+`"[^>]*>([^<]*)<`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestPaperRecognised: the default openb pod list's SHA-256 on the openb GPU
// node list (1,213 nodes, 6,212 GPUs) in a fill run to 1.3 shows the
// published means (Weng et al., 2023: FGD 95.39, Best-fit 93.08) in the
// summary and as diamonds on the enlarged chart.
func TestPaperRecognised(t *testing.T) {
	r := sample()
	r.Inputs, r.Nodes, r.GPUs = []engine.Input{{Role: "pods", SHA256: "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8"}}, 1213, 6212
	page := string(HTML(r))
	for _, want := range []string{`<th>published, %</th>`, `± 1.00</span></td><td>95.39</td>`, `<td>90.00</td><td>93.08</td>`, "openb_pod_list_default.csv"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := strings.Count(page, `class="mark"`); n != 2 {
		t.Errorf("%d published diamonds, want 2", n)
	}
	r.Inflate = 1.5
	if strings.Contains(string(HTML(r)), "published") {
		t.Error("published values shown for a run to 150%")
	}
}

// TestFailedHTML: fgd fails 5 and 3 pods in its two seeds, bestfit 4 in
// one: shape A (1 × 0.5 GPU, 8 CPU, 32 GiB, no room) 3 + 3 for fgd, 4 for
// bestfit (10 in all); shape B (8 × 1 GPU of V100M32, 96 CPU, 720 GiB,
// larger than every node) 2 for fgd. Per run: fgd 4.0 all, 3.0 A, 1.0 B;
// bestfit 4.0, 4.0, 0.0.
func TestFailedHTML(t *testing.T) {
	a := engine.FailedGroup{Reason: engine.ReasonNoRoom, CPUMilli: 8000, MemoryMiB: 32768, NumGPU: 1, GPUMilli: 500}
	b := engine.FailedGroup{Reason: engine.ReasonTooLarge, CPUMilli: 96000, MemoryMiB: 737280, NumGPU: 8, GPUMilli: 1000, GPUSpec: "V100M32"}
	with := func(g engine.FailedGroup, n int) engine.FailedGroup { g.Pods = n; return g }
	r := sample()
	r.Results[0].FailedPods, r.Results[0].Failed = 5, []engine.FailedGroup{with(a, 3), with(b, 2)}
	r.Results[1].FailedPods, r.Results[1].Failed = 3, []engine.FailedGroup{with(a, 3)}
	r.Results[2].FailedPods, r.Results[2].Failed = 4, []engine.FailedGroup{with(a, 4)}
	page := string(HTML(r))
	for _, want := range []string{
		`<th>1 × 0.5 GPU,<br>8 CPU, 32 GiB<br><span class="sd">no room</span></th><th>8 × 1 GPU (V100M32),<br>96 CPU, 720 GiB<br><span class="sd">larger than every node</span></th></tr>`,
		`<tr><td>fgd</td><td>4.0</td><td>3.0</td><td>1.0</td></tr>`,
		`<tr><td>bestfit</td><td>4.0</td><td>4.0</td><td>0.0</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// Six more shapes of one pod each for bestfit: the five most frequent
	// shapes show (A, B and the first three by name), the rest is other.
	for i := 1; i <= 6; i++ {
		r.Results[2].Failed = append(r.Results[2].Failed, engine.FailedGroup{Reason: engine.ReasonNoRoom, CPUMilli: int64(i) * 1000, Pods: 1})
	}
	r.Results[2].FailedPods = 10
	page = string(HTML(r))
	if want := `<tr><td>bestfit</td><td>10.0</td><td>4.0</td><td>0.0</td><td>1.0</td><td>1.0</td><td>1.0</td><td>3.0</td></tr>`; !strings.Contains(page, want) {
		t.Errorf("page lacks %s", want)
	}
}

// TestByModelHTML: T4 allocation 50% and 70% for fgd's seeds (mean 60),
// 80% for bestfit's: bestfit is best. The first seed's nodes are drawn:
// two full (blue), one at 600‰ (orange, ≤ 75%), one idle (grey); 61 full
// nodes of G2 wrap after 60 cells.
func TestByModelHTML(t *testing.T) {
	r := sample()
	full := make([]int, 61)
	for i := range full {
		full[i] = 1000
	}
	r.Results[0].AllocatedGPUMilli = 1
	r.Results[0].ByModel = []engine.ModelUse{
		{Model: "G2", Nodes: 61, GPUs: 488, AllocationRatio: 1, NodeAllocation: full},
		{Model: "T4", Nodes: 4, GPUs: 8, AllocationRatio: 0.5, NodeAllocation: []int{1000, 1000, 600, 0}}}
	r.Results[1].ByModel = []engine.ModelUse{{Model: "G2", Nodes: 61, GPUs: 488, AllocationRatio: 1}, {Model: "T4", Nodes: 4, GPUs: 8, AllocationRatio: 0.7}}
	r.Results[2].ByModel = []engine.ModelUse{{Model: "G2", Nodes: 61, GPUs: 488, AllocationRatio: 1}, {Model: "T4", Nodes: 4, GPUs: 8, AllocationRatio: 0.8}}
	page := string(HTML(r))
	for _, want := range []string{
		`<th>T4<br><span class="sd">4 nodes, 8 GPUs</span></th>`,
		`<tr><td>fgd</td><td>100.00</td><td>60.00</td></tr>`,
		`<tr><td>bestfit</td><td>100.00</td><td class="best">80.00</td></tr>`,
		`T4: 4 nodes, 50.00% of GPUs allocated`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	var runs []string
	for _, m := range regexp.MustCompile(`data-nodes="(\d+)"[^>]*stroke="(#[0-9a-f]+)"`).FindAllStringSubmatch(page, -1) {
		runs = append(runs, m[1]+m[2])
	}
	if got, want := strings.Join(runs, " "), "60#08306b 1#08306b 2#08306b 1#f16913 1#e4e4e4"; got != want {
		t.Errorf("node cells %q, want %q", got, want)
	}
}

// replaySample: two policies, one seed each, equal time-weighted
// allocation. Delays: 0 up to the 90th percentile, then 60 s per
// percentile, 600 s at the 100th.
func replaySample() *engine.Report {
	q := make([]float64, 101)
	for i := 91; i <= 100; i++ {
		q[i] = 60 * float64(i-90)
	}
	st := func(mean float64) *engine.ReplayStats {
		return &engine.ReplayStats{TimeWeightedAllocationRatio: 0.5, QueueDelayMeanSeconds: mean, DelayPercentiles: q,
			Timeline: []engine.TimePoint{{Seconds: 0, AllocationRatio: 0.2}, {Seconds: 86400, AllocationRatio: 0.6, Waiting: 3}}}
	}
	return &engine.Report{Source: "x", Mode: "replay", Nodes: 1, GPUs: 8, Pods: 100,
		Results: []engine.Result{{Policy: "fgd", Seed: 1, Replay: st(30)}, {Policy: "random", Seed: 1, Replay: st(5400)}},
		Summary: []engine.Summary{{Policy: "fgd", Runs: 1}, {Policy: "random", Runs: 1}}}
}

// TestReplayHTML: the equal allocation is bold for neither policy; the
// lead says so and names the shorter wait; the waiting-time CDF starts at
// the 90th percentile (the last wait of at most 1 s) and its log axis ends
// at 10 min.
func TestReplayHTML(t *testing.T) {
	page := string(HTML(replaySample()))
	for _, want := range []string{
		`<tr><td>fgd</td><td>1</td><td>50.00</td><td class="best">30 s</td>`,
		`<tr><td>random</td><td>1</td><td>50.00</td><td>1.50 h</td>`,
		`Every policy reaches 50.00% time-weighted GPU allocation. Shortest mean wait for a node: <b>fgd</b>, 30 s; longest: random, 1.50 h.`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	i := strings.Index(page, "Share of started pods")
	if i < 0 {
		t.Fatal("no waiting-time chart")
	}
	svg := page[i:]
	svg = svg[:strings.Index(svg, "</svg>")]
	if got := strings.Join(texts(svg, "xtick"), "|"); got != "1 s|10 s|1 min|10 min" {
		t.Errorf("CDF ticks %q", got)
	}
	// 11 points: percentiles 90 to 100.
	m := regexp.MustCompile(`<polyline[^>]*points="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil || len(strings.Fields(m[1])) != 11 {
		t.Errorf("CDF line %v, want 11 points", m)
	}
}

// chromiumArgs run headless Chromium (Debian package chromium) with the
// network off.
func chromium(t *testing.T, dir string) (string, []string) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but chromium is not installed")
		}
		t.Skip("chromium not installed")
	}
	return path, []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--user-data-dir=" + filepath.Join(dir, "profile")}
}

// bigSample is a full-size fill report: 8 policies with long names, 3
// seeds, 7 GPU models with the openb node counts, failed pods of 6 shapes.
func bigSample() *engine.Report {
	r := &engine.Report{Source: "/work/shared/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv + /work/shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv", Mode: "fill",
		Nodes: 1213, GPUs: 6212, Pods: 8152, Inflate: 1.3, Inputs: []engine.Input{{Role: "pods", SHA256: "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8"}}}
	models := []struct {
		name        string
		nodes, gpus int
	}{{"A10", 2, 2}, {"G2", 549, 4392}, {"G3", 39, 312}, {"P100", 134, 265}, {"T4", 404, 842}, {"V100M16", 55, 195}, {"V100M32", 30, 204}}
	for p, name := range []string{"random", "dotproduct", "gpupacking", "gpuclustering", "bestfit", "fgd", "leastallocated", "mostallocated"} {
		r.Summary = append(r.Summary, engine.Summary{Policy: name, Runs: 3})
		for s := 0; s < 3; s++ {
			end := 0.87 + 0.01*float64(p) + 0.002*float64(s)
			x := engine.Result{Policy: name, Seed: uint64(42 + s), GPUAllocationRatio: end, FragmentationRatio: 0.98, FailedPods: 2000 + 100*p, UnallocatedGPUs: 500, IdleUSDPerHour: 1234.56, AllocatedGPUMilli: 1}
			for i := 0; i <= 130; i++ {
				a := float64(i) / 100
				x.Curve = append(x.Curve, engine.Point{ArrivedRatio: a, AllocationRatio: min(a, end), FragmentationRatio: min(0.98, 0.14+a*a)})
			}
			for m, md := range models {
				u := engine.ModelUse{Model: md.name, Nodes: md.nodes, GPUs: md.gpus, AllocationRatio: end}
				if s == 0 {
					for n := 0; n < md.nodes; n++ {
						u.NodeAllocation = append(u.NodeAllocation, 1000-(n*(p+m+1))%1001)
					}
				}
				x.ByModel = append(x.ByModel, u)
			}
			for k := 0; k < 6; k++ {
				x.Failed = append(x.Failed, engine.FailedGroup{Reason: engine.ReasonNoRoom, CPUMilli: int64(1000 * (k + 1)), MemoryMiB: 262144, NumGPU: 1 + k%8, GPUMilli: 1000, GPUSpec: "V100M16|V100M32", Pods: 100 - k})
			}
			r.Results = append(r.Results, x)
		}
	}
	// The recommendation on the openb-like cluster, and --sharing with 4
	// modes: the page shows every mode and the decision.
	var nodes []trace.NodeSpec
	for _, md := range models {
		for n := 0; n < md.nodes; n++ {
			nodes = append(nodes, trace.NodeSpec{Name: fmt.Sprintf("%s-%d", md.name, n), CPUMilli: 96000, MemoryMiB: 786432, GPUs: md.gpus / md.nodes, Model: md.name})
		}
	}
	r.Sharing = &engine.SharingReport{}
	for _, m := range []string{"exclusive", "fractional", "mig", "timeslice:2"} {
		for _, s := range r.Summary {
			r.Sharing.Rows = append(r.Sharing.Rows, engine.SharingRow{Sharing: m, Policy: s.Policy, Runs: 3, GPUAllocationRatio: 0.9, GPUsNeeded: 6000, USDPerHour: 12345.67})
		}
	}
	r.Recommendation = Recommend(r, nodes, func(string) float64 { return 2.19 })
	return r
}

// TestHTMLInChromium renders a full-size report in headless Chromium at
// 800 and 1280 pixels wide and measures it: the page does not scroll
// sideways and no table needs its own scroll bar; the DOM holds the
// summary's values; the screenshots are as wide as the window. Set
// GPUPLANE_REPORT_SHOTS to a directory to keep the screenshots.
func TestHTMLInChromium(t *testing.T) {
	dir := t.TempDir()
	bin, args := chromium(t, dir)
	path, err := WriteHTML(dir, bigSample())
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the page with a script that writes the measurements into
	// the DOM; the report itself has no script.
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>(function(){var o=[document.documentElement.scrollWidth,window.innerWidth];` +
		`document.querySelectorAll('.wrap').forEach(function(e){if(e.scrollWidth>e.clientWidth)o.push(e.firstElementChild.id)});` +
		`var p=document.createElement('pre');p.id='probe';p.textContent=o.join(' ');document.body.appendChild(p)})()</script></body>`
	measured := filepath.Join(dir, "measured.html")
	if err := os.WriteFile(measured, bytes.Replace(page, []byte("</body>"), []byte(probe), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{800, 1280} {
		// One start of Chromium both dumps the DOM and takes the screenshot.
		shot := filepath.Join(dir, fmt.Sprintf("report-%d.png", width))
		dom, err := exec.Command(bin, append(args, fmt.Sprintf("--window-size=%d,4000", width), "--screenshot="+shot, "--dump-dom", "file://"+measured)...).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		m := regexp.MustCompile(`<pre id="probe">([^<]*)</pre>`).FindSubmatch(dom)
		if m == nil {
			t.Fatalf("%d px: no measurement in the DOM", width)
		}
		f := strings.Fields(string(m[1]))
		sw, _ := strconv.Atoi(f[0])
		iw, _ := strconv.Atoi(f[1])
		if iw != width || sw > iw {
			t.Errorf("%d px: page is %d px wide in a %d px window", width, sw, iw)
		}
		if len(f) > 2 {
			t.Errorf("%d px: tables %v scroll sideways", width, f[2:])
		}
		for _, want := range []string{`<td>random</td><td>3</td><td>87.20 <span class="sd">± 0.16</span></td><td>87.47</td>`, `<td class="best">94.20 <span class="sd">± 0.16</span></td>`,
			`<h2>Recommendation</h2>`, `USD per month</b>`, `; 96 runs in 4 sharing modes`, `<td>timeslice:2</td><td>mostallocated</td>`} {
			if !bytes.Contains(dom, []byte(want)) {
				t.Errorf("%d px: rendered DOM lacks %s", width, want)
			}
		}
		f2, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f2)
		f2.Close()
		if err != nil {
			t.Fatalf("%d px: screenshot: %v", width, err)
		}
		if b := img.Bounds(); b.Dx() != width || b.Dy() != 4000 {
			t.Errorf("%d px: screenshot %dx%d", width, b.Dx(), b.Dy())
		}
		// The first policy's line colour (#1f77b4) and the best cell's
		// background (#eef6ee) were painted.
		seen := map[[3]uint32]bool{}
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				seen[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			}
		}
		for _, c := range [][3]uint32{{0x1f, 0x77, 0xb4}, {0xee, 0xf6, 0xee}} {
			if !seen[c] {
				t.Errorf("%d px: screenshot has no pixel of colour %02x%02x%02x", width, c[0], c[1], c[2])
			}
		}
		if keep := os.Getenv("GPUPLANE_REPORT_SHOTS"); keep != "" {
			data, _ := os.ReadFile(shot)
			if err := os.WriteFile(filepath.Join(keep, filepath.Base(shot)), data, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestHTMLOddReports: reports with nothing in them, a policy without runs,
// curves of one point, a replay without delays, NaN and infinite values:
// the page renders and shows no NaN.
func TestHTMLOddReports(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for i, r := range []*engine.Report{
		{},
		{Mode: "fill", Summary: []engine.Summary{{Policy: "fgd"}, {Policy: "bestfit"}}},
		{Mode: "fill", Inflate: 1.3, Results: []engine.Result{{Policy: "fgd", Curve: []engine.Point{{ArrivedRatio: 1, AllocationRatio: 0.5}}, FailedPods: 3}},
			Summary: []engine.Summary{{Policy: "fgd", Runs: 1}, {Policy: "random"}}},
		{Mode: "replay", Results: []engine.Result{{Policy: "fgd", Replay: &engine.ReplayStats{Timeline: []engine.TimePoint{{Seconds: 5}}}}, {Policy: "fgd"}},
			Summary: []engine.Summary{{Policy: "fgd", Runs: 2}}},
		{Mode: "fill", Results: []engine.Result{{Policy: "fgd", GPUAllocationRatio: nan, Curve: []engine.Point{{ArrivedRatio: inf, AllocationRatio: nan}, {ArrivedRatio: 2, AllocationRatio: 1}}}},
			Summary: []engine.Summary{{Policy: "fgd", Runs: 1}}},
	} {
		page := string(HTML(r))
		if !strings.HasSuffix(page, "</body></html>\n") {
			t.Errorf("report %d: page cut short", i)
		}
		if i < 4 && strings.Contains(page, "NaN") {
			t.Errorf("report %d: page shows NaN", i)
		}
	}
}

// TestTeamsHTML: a replay with two teams, fgd over two seeds and random
// over one. vision under fgd: GPU-hours (10+20)/2 = 15.0, borrowed
// (2+4)/2 = 3.0, mean wait (30+90)/2 s = 1.0 min, p95 (3600+7200)/2 s =
// 1.50 h, preemptions 1.5, never started 0.5. The bars are 720−170−90 =
// 460 units at the longest (15 GPU-hours); vision·fgd's borrowed end is
// 460·3/15 = 92 long, from x = 170+368 = 538.
func TestTeamsHTML(t *testing.T) {
	r := replaySample()
	r.Results = append(r.Results, engine.Result{Policy: "fgd", Seed: 2, Replay: r.Results[0].Replay})
	r.Summary[0].Runs = 2
	team := func(gh, bor, wait, p95 float64, pre, never int) []engine.TeamStats {
		return []engine.TeamStats{
			{Team: "vision", Pods: 1200, GPUHours: gh, BorrowedGPUHours: bor, WaitMeanSeconds: wait, WaitP95Seconds: p95, Preemptions: pre, NeverStarted: never},
			{Team: "nlp", Pods: 7, GPUHours: 5}}
	}
	r.Results[0].Teams = team(10, 2, 30, 3600, 1, 0)
	r.Results[1].Teams = team(12, 0, 0, 0, 0, 0)
	r.Results[2].Teams = team(20, 4, 90, 7200, 2, 1)
	page := string(HTML(r))
	for _, want := range []string{
		`<tr><td>vision</td><td>fgd</td><td>1,200</td><td>15.0</td><td>3.0</td><td>1.0 min</td><td>1.50 h</td><td>1.5</td><td>0.5</td></tr>`,
		`<tr><td>vision</td><td>random</td><td>1,200</td><td>12.0</td><td>0.0</td><td>0 s</td><td>0 s</td><td>0.0</td><td>0.0</td></tr>`,
		`<tr><td>nlp</td><td>fgd</td><td>7</td><td>5.0</td><td>0.0</td>`,
		`<rect class="nominal" x="170" y="36.0" width="368.0" height="14" fill="#1f77b4"/><rect class="borrowed" x="538.0" y="36.0" width="92.0"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if i, j := strings.Index(page, `id="summary"`), strings.Index(page, `id="teams"`); i < 0 || j < i || j > strings.Index(page, "GPU allocation over time") {
		t.Errorf("teams table at %d, want after the summary (%d) and before the charts", j, i)
	}
	if strings.Contains(string(HTML(replaySample())), `id="teams"`) {
		t.Error("a replay without teams shows a teams table")
	}
}
