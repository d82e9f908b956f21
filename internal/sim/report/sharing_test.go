// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// A replay row: the wait
// columns in hours (5400 s = 1.50 h, 7200 s = 2.00 h); 1 of 4 training
// pods on a shared GPU is 25.00 %.
func TestSharingTable(t *testing.T) {
	r := &engine.Report{Source: "n + p", Mode: "replay", Nodes: 1, GPUs: 2, Pods: 4,
		Sharing: &engine.SharingReport{Rows: []engine.SharingRow{{Sharing: "timeslice:4", Policy: "fgd", Runs: 1, GPUAllocationRatio: 0.5,
			PlacedPods: 3, FailedPods: 1, GPUsNeeded: 2, USDPerHour: 2.5, QueueDelayMeanSeconds: 5400, QueueDelayP95Seconds: 7200,
			SharedPods: 2, TrainingPods: 4, TrainingOnSharedGPU: 1}},
			MIGLayouts: []engine.MIGLayoutUse{{Model: "A100-80GB", Nodes: 3, MIGGPUsPerNode: 2, GPUsPerNode: 8, Layout: []string{"4g.40gb", "3g.40gb"}, Source: "chosen"}}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], "sharing timeslice:4") {
		t.Errorf("header %q does not name the first mode", lines[0])
	}
	layout := -1 // the layout line, under the table's last row and above its legend
	for i, l := range lines {
		if strings.HasPrefix(l, "MIG layout") {
			layout = i
		}
	}
	if layout < 1 || lines[layout] != "MIG layout (chosen): A100-80GB, 3 nodes: 2 of 8 GPUs each as 4g.40gb + 3g.40gb" {
		t.Fatalf("no layout line:\n%s", b.String())
	}
	if !strings.Contains(b.String(), SharingLegend) {
		t.Errorf("no legend under the sharing table")
	}
	// placed, failed, served %, served GPUs, padding GPUs, GPU alloc %,
	// GPUs needed, USD/h, USD per served GPU-h, waits, shared, training.
	want := []string{"timeslice:4", "fgd", "1", "3.0", "1.0", "0.00", "0.0", "0.0", "50.00", "2.0", "2.50", "0.00", "1.50", "2.00", "2.0", "25.00"}
	if got := strings.Fields(lines[layout-1]); !reflect.DeepEqual(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	h := string(HTML(r))
	for _, s := range []string{`<h2>Sharing modes</h2>`, `<td>timeslice:4</td>`, `<td>25.00</td>`, "4g.40gb + 3g.40gb"} {
		if !strings.Contains(h, s) {
			t.Errorf("HTML lacks %q", s)
		}
	}
}

// TestSharingHTMLAllModes: --sharing with 4 modes, 2 policies and 3 seeds
// ran 24 runs; Results hold the first mode's 6. The page counts 24, names
// every mode in the sharing table and labels the first mode's sections.
func TestSharingHTMLAllModes(t *testing.T) {
	r := sample()
	r.Results = append(r.Results, r.Results[2], r.Results[2]) // fgd 2 + bestfit 1 -> 3 + 3 with bestfit x3
	r.Results = append(r.Results, r.Results[0])
	r.Summary[0].Runs, r.Summary[1].Runs = 3, 3
	ms := []string{"exclusive", "fractional", "mig", "timeslice:2"}
	r.Sharing = &engine.SharingReport{}
	for _, m := range ms {
		for _, p := range []string{"fgd", "bestfit"} {
			r.Sharing.Rows = append(r.Sharing.Rows, engine.SharingRow{Sharing: m, Policy: p, Runs: 3, GPUAllocationRatio: 0.9})
		}
	}
	h := string(HTML(r))
	for _, s := range []string{"; 24 runs in 4 sharing modes (exclusive, fractional, mig, timeslice:2)",
		"<h2>Sharing modes</h2><p>4 modes, 24 runs: exclusive, fractional, mig, timeslice:2.",
		"<td>exclusive</td><td>fgd</td>", "<td>fractional</td><td>bestfit</td>", "<td>mig</td><td>fgd</td>", "<td>timeslice:2</td><td>bestfit</td>",
		"<h2>Summary (sharing exclusive, the first of 4 modes; the Sharing modes table compares all)</h2>",
		"<h2>GPU allocation as demand arrives (sharing exclusive)</h2>"} {
		if !strings.Contains(h, s) {
			t.Errorf("HTML lacks %q", s)
		}
	}
	if strings.Contains(h, "; 6 runs") {
		t.Error("HTML counts the first mode's runs only")
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "sharing exclusive (the first of 4 modes in this table; all in the sharing table), 24 runs") {
		t.Errorf("table header: %s", strings.SplitN(b.String(), "\n", 2)[0])
	}
}

// TestSharingHTMLEveryMode: with every mode's runs (SharingReport.Modes)
// the page has a section per mode, each with its own summary and charts
// drawn from that mode's results, linked from the sharing table, and no
// id twice.
func TestSharingHTMLEveryMode(t *testing.T) {
	r := sample()
	ms := []string{"exclusive", "fractional", "timeslice:2"}
	r.Sharing = &engine.SharingReport{}
	for k, m := range ms {
		mode := engine.ModeRuns{Sharing: m, Summary: r.Summary}
		for _, x := range r.Results {
			x.GPUAllocationRatio = 0.5 + 0.1*float64(k) // 50.00, 60.00, 70.00 in the mode's summary
			mode.Results = append(mode.Results, x)
		}
		r.Sharing.Modes = append(r.Sharing.Modes, mode)
		for _, p := range []string{"fgd", "bestfit"} {
			r.Sharing.Rows = append(r.Sharing.Rows, engine.SharingRow{Sharing: m, Policy: p, Runs: 3, GPUAllocationRatio: 0.9})
		}
	}
	h := string(HTML(r))
	for k, m := range ms {
		a := modeAnchor(m)
		for _, s := range []string{fmt.Sprintf(`<section id="%s"><h2 class="mode">Sharing mode %s (%d of 3)</h2>`, a, m, k+1),
			fmt.Sprintf(`<a href="#%s">%s</a>`, a, m), "<h2>Summary (sharing " + m + ")</h2>", `<table id="summary-` + a + `">`,
			"<h2>GPU allocation as demand arrives (sharing " + m + ")</h2>", fmt.Sprintf("%.2f", 50+10*float64(k))} {
			if !strings.Contains(h, s) {
				t.Errorf("HTML lacks %q", s)
			}
		}
	}
	// No recommendation: the chart across modes is of the first policy,
	// one line per mode, before the first mode's section.
	chart := strings.Index(h, "<h2>GPU allocation by sharing mode (fgd)</h2>")
	if chart < 0 || chart > strings.Index(h, `<section id="mode-exclusive">`) {
		t.Error("no chart across modes before the modes' sections")
	} else if legend := h[chart:strings.Index(h, `<section id="mode-exclusive">`)]; strings.Count(legend, "<polyline") < 3 {
		t.Errorf("chart across modes: %d lines, want one per mode", strings.Count(legend, "<polyline"))
	}
	if !strings.Contains(h, "each mode's summary, charts and node pictures follow the sharing table") || strings.Contains(h, "the first of 3 modes") {
		t.Error("the page still says it shows the first mode only")
	}
	seen := map[string]bool{}
	for _, id := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(h, -1) {
		if seen[id[1]] {
			t.Errorf("id %q twice", id[1])
		}
		seen[id[1]] = true
	}
}

// TestFailedClassesHTML: the failed pods by class, per policy, only the
// classes some policy has.
func TestFailedClassesHTML(t *testing.T) {
	r := sample()
	r.Summary[0].FailedByClass = map[string]float64{engine.ClassCapacity: 2, engine.ClassSelector: 0.5}
	h := string(HTML(r))
	for _, s := range []string{`<table id="failed-classes"><tr><th>policy</th><th>capacity</th><th>selector</th></tr>`,
		"<tr><td>fgd</td><td>2.0</td><td>0.5</td></tr>", "<tr><td>bestfit</td><td>0.0</td><td>0.0</td></tr>", "Taint: a taint it does not tolerate"} {
		if !strings.Contains(h, s) {
			t.Errorf("HTML lacks %q", s)
		}
	}
}
