// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// teamNames returns the teams of a replay with teams, in the order of the
// first run that has them (the teams file's order).
func teamNames(r *engine.Report) []string {
	for _, x := range r.Results {
		if len(x.Teams) > 0 {
			names := make([]string, len(x.Teams))
			for i, t := range x.Teams {
				names[i] = t.Team
			}
			return names
		}
	}
	return nil
}

// teamOf returns f of the named team's stats in a run, 0 when it has none.
func teamOf(name string, f func(engine.TeamStats) float64) func(engine.Result) float64 {
	return func(x engine.Result) float64 {
		for _, t := range x.Teams {
			if t.Team == name {
				return f(t)
			}
		}
		return 0
	}
}

// teamsTable shows a replay with teams per team and policy, means over
// seeds: GPU-hours, borrowed GPU-hours, waits, preemptions and pods never
// started (engine.TeamStats); then a bar chart of the GPU-hours.
func teamsTable(r *engine.Report, colors map[string]string) string {
	names := teamNames(r)
	if len(names) == 0 {
		return ""
	}
	cols := []struct {
		head   string
		f      func(engine.TeamStats) float64
		format func(float64) string
	}{
		{"GPU-hours", func(t engine.TeamStats) float64 { return t.GPUHours }, num1},
		{"borrowed GPU-hours", func(t engine.TeamStats) float64 { return t.BorrowedGPUHours }, num1},
		{"mean wait", func(t engine.TeamStats) float64 { return t.WaitMeanSeconds }, duration},
		{"p95 wait", func(t engine.TeamStats) float64 { return t.WaitP95Seconds }, duration},
		{"preemptions", func(t engine.TeamStats) float64 { return float64(t.Preemptions) }, num1},
		{"never started", func(t engine.TeamStats) float64 { return float64(t.NeverStarted) }, num1},
	}
	var b strings.Builder
	b.WriteString(`<h2>Teams</h2><div class="wrap"><table id="teams"><tr><th>team</th><th>policy</th><th>pods</th>`)
	for _, c := range cols {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c.head))
	}
	b.WriteString("</tr>")
	var bars []teamBar
	for _, name := range names {
		pods := 0
		for _, x := range r.Results {
			for _, t := range x.Teams {
				if t.Team == name {
					pods = t.Pods
				}
			}
		}
		for _, s := range r.Summary {
			if len(runsOf(r, s.Policy)) == 0 {
				continue
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td>", html.EscapeString(name), html.EscapeString(s.Policy), thousands(pods))
			for _, c := range cols {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(c.format(statOf(r, s.Policy, teamOf(name, c.f)).Mean)))
			}
			b.WriteString("</tr>")
			bars = append(bars, teamBar{name, s.Policy, colors[s.Policy],
				statOf(r, s.Policy, teamOf(name, cols[0].f)).Mean, statOf(r, s.Policy, teamOf(name, cols[1].f)).Mean})
		}
	}
	b.WriteString(`</table></div><p class="note">Per team and policy, mean over seeds. GPU-hours: GPU time the team's running pods held; borrowed GPU-hours: time integral of the team's admitted quota above its nominal quota, summed over GPU models (Kueue borrowing within the cohort). Waits are of the team's started pods, creation to first start (p95 nearest-rank); preemptions count workloads (a pod or a whole gang) preempted to give quota back; never started: the team's pods still waiting at the end.</p>`)
	b.WriteString(teamBars(bars))
	return b.String()
}

// teamBar is one team's mean GPU-hours under one policy.
type teamBar struct {
	team, policy, color string
	gpuHours, borrowed  float64
}

// teamBars draws one horizontal bar per team and policy: its GPU-hours,
// the borrowed part (at most the whole bar) lighter at the bar's end.
func teamBars(bars []teamBar) string {
	const W, L, R, row, T = 720.0, 170.0, 90.0, 18.0, 34.0
	top := 0.0
	for _, x := range bars {
		if !math.IsNaN(x.gpuHours) && !math.IsInf(x.gpuHours, 0) {
			top = math.Max(top, x.gpuHours)
		}
	}
	if top <= 0 {
		return ""
	}
	H := T + row*float64(len(bars)) + 30
	px := func(v float64) float64 {
		if !(v > 0) { // NaN too
			return 0
		}
		return (W - L - R) * htmlkit.Clamp01(v/top)
	}
	var b strings.Builder
	title := "GPU-hours per team: within nominal quota (solid) and borrowed (light)"
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s" font-family="sans-serif">`, W, H, W, H, html.EscapeString(title))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/><text x="0" y="20" font-size="15" font-weight="bold">%s</text>`, html.EscapeString(title))
	for i, x := range bars {
		y := T + row*float64(i)
		col := x.color
		if col == "" {
			col = htmlkit.Color(0)
		}
		all, bor := px(x.gpuHours), px(math.Min(math.Max(x.borrowed, 0), math.Max(x.gpuHours, 0)))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" font-size="12" text-anchor="end">%s · %s</text>`, L-6, y+12, html.EscapeString(clip(x.team, 14)), html.EscapeString(clip(x.policy, 14)))
		fmt.Fprintf(&b, `<rect class="nominal" x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`, L, y+2, all-bor, row-4, col)
		fmt.Fprintf(&b, `<rect class="borrowed" x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s" fill-opacity="0.35"/>`, L+all-bor, y+2, bor, row-4, col)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">%s</text>`, L+all+4, y+12, html.EscapeString(num1(x.gpuHours)))
	}
	fmt.Fprintf(&b, `<path d="M%.0f %.0fV%.0f" stroke="#333"/><text x="%.0f" y="%.0f" font-size="12" text-anchor="middle">GPU-hours, mean over seeds</text></svg>`, L, T, H-26, L+(W-L-R)/2, H-8)
	b.WriteString(`<p class="note">Each bar is one team under one policy; its light end is the borrowed GPU-hours, drawn at most as long as the bar (borrowed quota counts pods admitted but still waiting for a node).</p>`)
	return b.String()
}
