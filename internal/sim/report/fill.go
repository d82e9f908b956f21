// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"html"
	"math"

	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// fillCharts draws allocation and fragmentation as demand arrives; a run
// of each pod once (--snapshot: Inflate 0) has no arrival to draw, only
// the order the run sent its pods in, and gets a note instead.
func fillCharts(b *bytes.Buffer, r *engine.Report, colors map[string]string, paper trace.Published, hasPaper bool) {
	if r.Inflate == 0 {
		b.WriteString(`<p class="note">No arrival chart: the workload arrives once (a snapshot), its pods placed in turn, so there is no history of demand to draw; the summary above is its end state.</p>`)
		return
	}
	var alloc, zoom, frag []htmlkit.Series
	end, start := math.Inf(1), math.Inf(-1)
	type pair struct{ a, f []curve }
	curves := map[string]pair{}
	seeds := 0
	for _, s := range r.Summary {
		var p pair
		for _, x := range runsOf(r, s.Policy) {
			if len(x.Curve) == 0 {
				continue
			}
			var a, f curve
			for _, pt := range x.Curve {
				a.x, a.y = append(a.x, 100*pt.ArrivedRatio), append(a.y, 100*pt.AllocationRatio)
				f.x, f.y = append(f.x, 100*pt.ArrivedRatio), append(f.y, 100*pt.FragmentationRatio)
			}
			p.a, p.f = append(p.a, a), append(p.f, f)
			end, start = math.Min(end, a.x[len(a.x)-1]), math.Max(start, a.x[0])
		}
		seeds = max(seeds, len(p.a))
		curves[s.Policy] = p
	}
	if seeds == 0 {
		return
	}
	from := start + 0.75*(end-start)
	for _, s := range r.Summary {
		p := curves[s.Policy]
		if len(p.a) == 0 {
			continue
		}
		c := colors[s.Policy]
		alloc = append(alloc, meanSeries(s.Policy, c, p.a, false, math.Inf(-1)))
		zoom = append(zoom, meanSeries(s.Policy, c, p.a, false, from))
		frag = append(frag, meanSeries(s.Policy, c, p.f, false, math.Inf(-1)))
	}
	band := "one seed"
	if seeds > 1 {
		band = "mean over seeds, band: lowest to highest seed"
	}
	xa := htmlkit.Axis{Label: "arrived GPU demand, % of GPU capacity"}
	b.WriteString("<h2>GPU allocation as demand arrives" + html.EscapeString(modeLabel(r)) + "</h2>")
	b.WriteString(htmlkit.Chart("GPU allocation ratio ("+band+")", xa, htmlkit.Axis{Label: "GPU allocation ratio, %"}, alloc))
	if hasPaper {
		// A legend entry without points, then a diamond per policy.
		zoom = append(zoom, htmlkit.Series{Name: "published", Color: "#444", Marks: true})
		for _, s := range r.Summary {
			if v, ok := paper.Alloc[s.Policy]; ok {
				zoom = append(zoom, htmlkit.Series{Color: colors[s.Policy], X: []float64{130}, Y: []float64{v}, Marks: true})
			}
		}
	}
	b.WriteString(htmlkit.Chart("The end of the run, enlarged", xa, htmlkit.Axis{Label: "GPU allocation ratio, %"}, zoom))
	if hasPaper {
		fmt.Fprintf(b, `<p class="note">Diamonds: the GPU allocation Weng et al. published for %s at 130%% arrived demand (USENIX ATC 2023, Fig. 7/9; mean of 10 seeds), in each policy's colour.</p>`, html.EscapeString(paper.File))
	}
	b.WriteString("<h2>Fragmentation as demand arrives" + html.EscapeString(modeLabel(r)) + "</h2>")
	b.WriteString(htmlkit.Chart("Fragmented share of idle GPU capacity", xa, htmlkit.Axis{Label: "fragmentation ratio, %"}, frag))
	b.WriteString(`<p class="note">Fragmentation against the target workload (Weng et al., 2023, §3.2); near the end almost all idle capacity is fragmented for every policy, so compare how fast it grows.</p>`)
}
