// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"html"
	"math"

	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

func replayCharts(b *bytes.Buffer, r *engine.Report, colors map[string]string) {
	var alloc, wait, cdf []htmlkit.Series
	seeds := 0
	anyWait := false
	for _, s := range r.Summary {
		var a, q []curve
		var qs [][]float64
		for _, x := range runsOf(r, s.Policy) {
			if x.Replay == nil || len(x.Replay.Timeline) == 0 {
				continue
			}
			var ac, qc curve
			for _, p := range x.Replay.Timeline {
				ac.x, ac.y = append(ac.x, p.Seconds/86400), append(ac.y, 100*p.AllocationRatio)
				qc.x, qc.y = append(qc.x, p.Seconds/86400), append(qc.y, float64(p.Waiting))
			}
			a, q = append(a, ac), append(q, qc)
			if len(x.Replay.DelayPercentiles) == 101 {
				qs = append(qs, x.Replay.DelayPercentiles)
			}
		}
		seeds = max(seeds, len(a))
		if len(a) == 0 {
			continue
		}
		c := colors[s.Policy]
		alloc = append(alloc, meanSeries(s.Policy, c, a, true, math.Inf(-1)))
		wait = append(wait, meanSeries(s.Policy, c, q, true, math.Inf(-1)))
		if cs, ok := cdfSeries(s.Policy, c, qs); ok {
			cdf = append(cdf, cs)
			anyWait = anyWait || len(cs.X) > 1
		}
	}
	if seeds == 0 {
		return
	}
	band := "one seed"
	if seeds > 1 {
		band = "mean over seeds, band: lowest to highest seed"
	}
	xa := htmlkit.Axis{Label: "trace time, days"}
	b.WriteString("<h2>GPU allocation over time" + html.EscapeString(modeLabel(r)) + "</h2>")
	b.WriteString(htmlkit.Chart("GPU allocation ratio ("+band+")", xa, htmlkit.Axis{Label: "GPU allocation ratio, %"}, alloc))
	b.WriteString("<h2>Pods waiting over time" + html.EscapeString(modeLabel(r)) + "</h2>")
	b.WriteString(htmlkit.Chart("Pods waiting for a node ("+band+")", xa, htmlkit.Axis{Label: "waiting pods"}, wait))
	b.WriteString("<h2>Waiting time" + html.EscapeString(modeLabel(r)) + "</h2>")
	if !anyWait {
		b.WriteString(`<p class="note">Every started pod waited at most 1 s.</p>`)
		return
	}
	b.WriteString(htmlkit.Chart("Share of started pods that waited at most t", htmlkit.Axis{Label: "waiting time t (log scale)", Log: true, Ticks: htmlkit.DurationTicks},
		htmlkit.Axis{Label: "started pods, %"}, cdf))
	b.WriteString(`<p class="note">Cumulative distribution of the wait from creation to placement, by percentile, mean over seeds (band: lowest to highest seed). Waits under 1 s are drawn at 1 s; the curve starts at the share of pods that waited at most 1 s. Pods that never started are not included (see the summary).</p>`)
}

// cdfSeries turns runs' delay percentiles (101 each, seconds) into a CDF
// on a log axis: x is the mean over runs of each percentile, at least 1 s,
// y the percentile; the band spans the runs' lowest and highest values. It
// starts at the last percentile of at most 1 s.
func cdfSeries(name, color string, qs [][]float64) (htmlkit.Series, bool) {
	if len(qs) == 0 {
		return htmlkit.Series{}, false
	}
	var mean, lo, hi, ys []float64
	for i := 0; i <= 100; i++ {
		m, l, h := 0.0, math.Inf(1), math.Inf(-1)
		for _, q := range qs {
			v := math.Max(1, q[i])
			m += v
			l, h = math.Min(l, v), math.Max(h, v)
		}
		mean, lo, hi, ys = append(mean, m/float64(len(qs))), append(lo, l), append(hi, h), append(ys, float64(i))
	}
	k := 0
	for k+1 <= 100 && lo[k+1] <= 1 && mean[k+1] <= 1 {
		k++
	}
	s := htmlkit.Series{Name: name, Color: color, X: mean[k:], Y: ys[k:]}
	if len(qs) > 1 {
		for i := k; i <= 100; i++ {
			s.BandX, s.BandY = append(s.BandX, lo[i]), append(s.BandY, ys[i])
		}
		for i := 100; i >= k; i-- {
			s.BandX, s.BandY = append(s.BandX, hi[i]), append(s.BandY, ys[i])
		}
	}
	return s, true
}
