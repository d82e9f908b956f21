// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// lead is one sentence for the reader in a hurry: which policy allocates
// the most GPUs and by how much.
func lead(r *engine.Report) string {
	if len(r.Summary) < 2 {
		return ""
	}
	alloc := func(x engine.Result) float64 { return x.GPUAllocationRatio }
	what := "GPU allocation at the end of the run"
	if r.Mode == "replay" {
		alloc = func(x engine.Result) float64 {
			if x.Replay == nil {
				return 0
			}
			return x.Replay.TimeWeightedAllocationRatio
		}
		what = "time-weighted GPU allocation"
	}
	best, worst := r.Summary[0].Policy, r.Summary[0].Policy
	bm, wm := statOf(r, best, alloc).Mean, statOf(r, worst, alloc).Mean
	for _, s := range r.Summary[1:] {
		m := statOf(r, s.Policy, alloc).Mean
		if m > bm {
			best, bm = s.Policy, m
		}
		if m < wm {
			worst, wm = s.Policy, m
		}
	}
	var b strings.Builder
	if pct(bm) == pct(wm) {
		fmt.Fprintf(&b, `<p class="lead">Every policy reaches %s%% %s.`, pct(bm), what)
	} else {
		fmt.Fprintf(&b, `<p class="lead">Highest %s: <b>%s</b>, %s%%; lowest: %s, %s%%. The difference is %.2f points, %s of the cluster's %s GPUs.`,
			what, html.EscapeString(best), pct(bm), html.EscapeString(worst), pct(wm), 100*(bm-wm), thousands(int(math.Round((bm-wm)*float64(r.GPUs)))), thousands(r.GPUs))
	}
	if r.Mode == "replay" {
		wait := replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayMeanSeconds })
		best, worst = r.Summary[0].Policy, r.Summary[0].Policy
		bm, wm = statOf(r, best, wait).Mean, statOf(r, worst, wait).Mean
		for _, s := range r.Summary[1:] {
			m := statOf(r, s.Policy, wait).Mean
			if m < bm {
				best, bm = s.Policy, m
			}
			if m > wm {
				worst, wm = s.Policy, m
			}
		}
		if duration(bm) != duration(wm) {
			fmt.Fprintf(&b, ` Shortest mean wait for a node: <b>%s</b>, %s; longest: %s, %s.`, html.EscapeString(best), duration(bm), html.EscapeString(worst), duration(wm))
		}
	}
	b.WriteString("</p>")
	return b.String()
}

// column is one metric of the summary table.
type column struct {
	head   string
	f      func(engine.Result) float64
	format func(float64) string
	// higher is better (else lower is).
	higher bool
	// sd shows ± the standard deviation.
	sd bool
	// noBest: no value is bold, as the docs say not to compare the column
	// (fragmentation is high at the end of a fill whatever the policy).
	noBest bool
}

func summaryTable(r *engine.Report, paper trace.Published, hasPaper bool) string {
	cols := summaryColumns(r.Mode)
	var b strings.Builder
	b.WriteString(`<div class="wrap"><table id="summary"><tr><th>policy</th><th>runs</th>`)
	for i, c := range cols {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c.head))
		if i == 0 && hasPaper {
			b.WriteString("<th>published, %</th>")
		}
	}
	b.WriteString("</tr>")
	stats := make([][]stat, len(r.Summary))
	for i, s := range r.Summary {
		for _, c := range cols {
			stats[i] = append(stats[i], statOf(r, s.Policy, c.f))
		}
	}
	for i, s := range r.Summary {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td>", html.EscapeString(s.Policy), s.Runs)
		for j, c := range cols {
			b.WriteString(summaryCell(c, stats, i, j))
			if j == 0 && hasPaper {
				if v, ok := paper.Alloc[s.Policy]; ok {
					fmt.Fprintf(&b, "<td>%.2f</td>", v)
				} else {
					b.WriteString("<td>–</td>")
				}
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table></div>")
	summaryNote(&b, r, paper, hasPaper)
	return b.String()
}

// summaryColumns are the summary table's columns for the experiment mode.
func summaryColumns(mode string) []column {
	if mode == "fill" {
		return []column{
			{"GPU allocation, %", func(x engine.Result) float64 { return x.GPUAllocationRatio }, pct, true, true, false},
			{"fragmentation, % of idle GPU", func(x engine.Result) float64 { return x.FragmentationRatio }, pct, false, true, true},
			{"failed pods", func(x engine.Result) float64 { return float64(x.FailedPods) }, num1, false, true, false},
			{"idle GPUs", func(x engine.Result) float64 { return x.UnallocatedGPUs }, num1, false, false, false},
			{"idle GPUs cost, USD per hour", func(x engine.Result) float64 { return x.IdleUSDPerHour }, usd, false, false, false},
		}
	}
	return []column{
		{"time-weighted GPU allocation, %", replayOf(func(s *engine.ReplayStats) float64 { return s.TimeWeightedAllocationRatio }), pct, true, true, false},
		{"mean wait", replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayMeanSeconds }), duration, false, true, false},
		{"p95 wait", replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayP95Seconds }), duration, false, true, false},
		{"longest wait", replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayMaxSeconds }), duration, false, false, false},
		{"never started", replayOf(func(s *engine.ReplayStats) float64 { return float64(s.NeverStarted) }), num1, false, false, false},
		{"idle GPU-hours", replayOf(func(s *engine.ReplayStats) float64 { return s.IdleGPUHours }), num0, false, false, false},
		{"idle GPUs cost, USD", replayOf(func(s *engine.ReplayStats) float64 { return s.IdleCostUSD }), num0, false, false, false},
	}
}

// summaryCell is the cell of column c for policy i (column j of stats, the
// policies' statistics by column): mean ± standard deviation, in bold
// where it is the best of a column whose values differ as printed.
func summaryCell(c column, stats [][]stat, i, j int) string {
	st := stats[i][j]
	best, differ := true, false
	for k := range stats {
		o := stats[k][j].Mean
		if c.format(o) != c.format(st.Mean) {
			differ = true
			if (o > st.Mean) == c.higher {
				best = false
			}
		}
	}
	best = best && differ && !c.noBest
	cell := html.EscapeString(c.format(st.Mean))
	if c.sd && st.N > 1 {
		cell += ` <span class="sd">± ` + html.EscapeString(c.format(st.Std)) + `</span>`
	}
	if best {
		return `<td class="best">` + cell + `</td>`
	}
	return `<td>` + cell + `</td>`
}

// summaryNote writes the note under the summary table: what its numbers
// are and, with hasPaper, where the published values come from.
func summaryNote(b *strings.Builder, r *engine.Report, paper trace.Published, hasPaper bool) {
	if r.Mode == "fill" {
		if r.Inflate > 0 {
			fmt.Fprintf(b, `<p class="note">Mean ± standard deviation over seeds, at the end of the run (the fill stops at arrived GPU demand %.0f%% of capacity). Best of each column in bold, except fragmentation, high at the end of a fill whatever the policy (compare the fragmentation curve below). GPU allocation is allocated capacity, not use. Idle cost: the GPUs left idle, priced per GPU model.`, 100*r.Inflate)
		} else {
			b.WriteString(`<p class="note">Mean ± standard deviation over seeds, at the end of the run (each pod submitted once). Best of each column in bold, except fragmentation (not comparable at the end of a run). GPU allocation is allocated capacity, not use. Idle cost: the GPUs left idle, priced per GPU model.`)
		}
		if l := fillFacts(r); l != "" {
			b.WriteString(" In this run: " + html.EscapeString(l) + ".")
		}
		if hasPaper {
			fmt.Fprintf(b, ` Published: Weng et al., “Beware of Fragmentation”, USENIX ATC 2023, Fig. 7/9, mean of 10 seeds on %s (recognised by SHA-256).`, html.EscapeString(paper.File))
		}
		b.WriteString("</p>")
	} else {
		b.WriteString(`<p class="note">Mean ± standard deviation over seeds. Mean and longest wait are of the pods that started (creation to placement); the p95 wait is of every pod, a pod never started counting as waiting without end (unbounded when over 5% never started, as --size p95wait counts it); never started: pods that never got a node. Best of each column in bold.</p>`)
	}
}
