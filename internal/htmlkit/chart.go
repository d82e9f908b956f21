// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package htmlkit is what the two HTML reports, the simulator's
// (internal/sim/report) and the cost report's (internal/cost/report),
// share: inline SVG charts (Chart) and the checks of a report directory
// before a run (CheckDir, MissingDirs); the files themselves are written
// with internal/atomicfile. It imports only the standard library.
package htmlkit

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Series is one line of a chart, with an optional band around it.
type Series struct {
	// Name is the legend's label; a series without one has no legend entry.
	Name string
	// Color is a CSS colour; "" takes the palette's colour of the series'
	// position.
	Color string
	// X and Y are the points, in data coordinates; a NaN, or a value at
	// or below 0 on a log axis, is left out.
	X, Y []float64
	// BandX, BandY are a closed polygon in data coordinates, drawn
	// translucent under the line (e.g. the range over seeds).
	BandX, BandY []float64
	// Marks draws each point as a diamond, without a line.
	Marks bool
	// BandOpacity is the band's fill opacity (0..1); 0 means 0.16. A
	// stacked area or a histogram bar is a band of opacity about 0.85.
	BandOpacity float64
}

// Axis describes one axis of a chart.
type Axis struct {
	// Label is written along the axis.
	Label string
	// Log makes the axis logarithmic; values at or below 0 are left out.
	Log bool
	// Lo and Hi fix the range when Lo < Hi; otherwise it is fitted to the
	// data.
	Lo, Hi float64
	// Ticks replace the computed ticks when set.
	Ticks []Tick
}

// Tick is an axis tick at V labelled Label.
type Tick struct {
	V     float64
	Label string
}

// DurationTicks label a log axis of seconds, from 1 s to 1 year.
var DurationTicks = []Tick{{1, "1 s"}, {10, "10 s"}, {60, "1 min"}, {600, "10 min"}, {3600, "1 h"}, {6 * 3600, "6 h"},
	{86400, "1 d"}, {7 * 86400, "7 d"}, {30 * 86400, "30 d"}, {365 * 86400, "1 y"}}

// palette is the colours of series without one, by position.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// Chart renders series as an inline SVG chart, 720 × 360 user units, with
// axes, ticks and a legend on the right. An axis without a fixed range
// ends where the data end (the y axis gets 4% of room above and below,
// never below 0 for data that are not negative, never above 100 for a
// percentage that does not pass 100).
func Chart(title string, xa, ya Axis, series []Series) string {
	const W, H, L, R, T, B = 720.0, 360.0, 64.0, 160.0, 34.0, 46.0
	x0, x1, y0, y1 := chartRange(xa, ya, series)
	fx, fy := scale(x0, x1, xa.Log), scale(y0, y1, ya.Log)
	px := func(x float64) float64 { return L + Clamp01(fx(x))*(W-L-R) }
	py := func(y float64) float64 { return H - B - Clamp01(fy(y))*(H-T-B) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s" font-family="sans-serif">`, W, H, W, H, html.EscapeString(title))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/><text x="%.0f" y="20" font-size="15" font-weight="bold">%s</text>`, L, html.EscapeString(title))
	for _, t := range ticks(xa, x0, x1) {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#eee"/>`, px(t.V), T, px(t.V), H-B)
		fmt.Fprintf(&b, `<text class="xtick" x="%.1f" y="%.0f" font-size="11" text-anchor="middle">%s</text>`, px(t.V), H-B+15, html.EscapeString(t.Label))
	}
	for _, t := range ticks(ya, y0, y1) {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/>`, L, py(t.V), W-R, py(t.V))
		fmt.Fprintf(&b, `<text class="ytick" x="%.0f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, L-6, py(t.V)+4, html.EscapeString(t.Label))
	}
	fmt.Fprintf(&b, `<path d="M%.0f %.0fV%.0fH%.0f" fill="none" stroke="#333"/>`, L, T, H-B, W-R)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12" text-anchor="middle">%s</text>`, L+(W-L-R)/2, H-10, html.EscapeString(xa.Label))
	fmt.Fprintf(&b, `<text x="14" y="%.0f" font-size="12" text-anchor="middle" transform="rotate(-90 14 %.0f)">%s</text>`, T+(H-T-B)/2, T+(H-T-B)/2, html.EscapeString(ya.Label))
	ok := func(x, y float64) bool {
		return !math.IsNaN(x) && !math.IsNaN(y) && !(xa.Log && x <= 0) && !(ya.Log && y <= 0)
	}
	legend := 0
	for si, s := range series {
		col := s.Color
		if col == "" {
			col = Color(si)
		}
		drawSeries(&b, s, col, px, py, ok)
		if s.Name == "" {
			continue
		}
		ly := T + 8 + float64(legend)*18
		legend++
		if s.Marks {
			fmt.Fprintf(&b, `<path d="%s" fill="%s"/>`, diamond(W-R+22, ly), col)
		} else {
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`, W-R+12, ly, W-R+32, ly, col)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12">%s</text>`, W-R+38, ly+4, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// chartRange returns the axes' ranges: each axis's own (Lo, Hi) if it has
// one, else the data's, snapped to round ticks on a linear x axis, and
// padded by 4% on a linear y axis without crossing 0 or 100 that the data
// does not.
func chartRange(xa, ya Axis, series []Series) (x0, x1, y0, y1 float64) {
	x0, x1 = dataRange(series, true, xa.Log)
	y0, y1 = dataRange(series, false, ya.Log)
	if xa.Lo < xa.Hi {
		x0, x1 = xa.Lo, xa.Hi
	} else if !xa.Log {
		x0, x1 = snap(x0, x1)
	}
	if ya.Lo < ya.Hi {
		y0, y1 = ya.Lo, ya.Hi
	} else if !ya.Log {
		pad := 0.04 * (y1 - y0)
		lo, hi := y0-pad, y1+pad
		if y0 >= 0 && lo < 0 {
			lo = 0
		}
		if y1 <= 100 && hi > 100 {
			hi = 100
		}
		y0, y1 = lo, hi
	}
	return x0, x1, y0, y1
}

// drawSeries draws series s in colour col: its band, then its marks or its
// line, each point that ok keeps, placed by px and py.
func drawSeries(b *strings.Builder, s Series, col string, px, py func(float64) float64, ok func(x, y float64) bool) {
	if len(s.BandX) > 0 {
		var pts strings.Builder
		for i := range s.BandX {
			if ok(s.BandX[i], s.BandY[i]) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", px(s.BandX[i]), py(s.BandY[i]))
			}
		}
		op := s.BandOpacity
		if op <= 0 || op > 1 {
			op = 0.16
		}
		fmt.Fprintf(b, `<polygon class="band" fill="%s" fill-opacity="%.2f" stroke="none" points="%s"/>`, col, op, strings.TrimSpace(pts.String()))
	}
	if s.Marks {
		for i := range s.X {
			if ok(s.X[i], s.Y[i]) {
				fmt.Fprintf(b, `<path class="mark" d="%s" fill="%s" stroke="#fff"/>`, diamond(px(s.X[i]), py(s.Y[i])), col)
			}
		}
	} else if len(s.X) > 0 {
		var pts strings.Builder
		for i := range s.X {
			if ok(s.X[i], s.Y[i]) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", px(s.X[i]), py(s.Y[i]))
			}
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="%s"/>`, col, strings.TrimSpace(pts.String()))
	}
}

// Color returns the palette's colour of the series at position i, the
// colour Chart gives a series without one.
func Color(i int) string { return palette[i%len(palette)] }

func diamond(x, y float64) string {
	return fmt.Sprintf("M%.1f %.1fl5 5-5 5-5-5z", x, y-5)
}

// Clamp01 returns v limited to [0, 1].
func Clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// scale maps [lo, hi] to [0, 1], linearly or by log10.
func scale(lo, hi float64, log bool) func(float64) float64 {
	if log {
		a, b := math.Log10(lo), math.Log10(hi)
		return func(v float64) float64 { return (math.Log10(v) - a) / (b - a) }
	}
	return func(v float64) float64 { return (v - lo) / (hi - lo) }
}

// dataRange returns the range of the series' x (or y) values and bands,
// only positive values on a log axis; a degenerate range is widened.
func dataRange(series []Series, x, log bool) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	add := func(vs []float64) {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, s := range series {
		if x {
			add(s.X)
			add(s.BandX)
		} else {
			add(s.Y)
			add(s.BandY)
		}
	}
	switch {
	case math.IsInf(lo, 0) && log:
		return 1, 10
	case math.IsInf(lo, 0):
		return 0, 1
	case hi == lo && log:
		return lo / 10, hi * 10
	case hi == lo && lo >= 0:
		return math.Max(0, lo-1), hi + 1 // data that are not negative: no axis below 0
	case hi == lo:
		return lo - 1, hi + 1
	}
	return lo, hi
}

// snap moves each end of [lo, hi] out to the nearest tick when that is
// within 2% of the range, so that an axis of data ending at 129.99 ends at
// the tick 130.
func snap(lo, hi float64) (float64, float64) {
	step := niceStep((hi - lo) / 7)
	if t := math.Floor(lo/step) * step; lo-t < 0.02*(hi-lo) {
		lo = t
	}
	if t := math.Ceil(hi/step) * step; t-hi < 0.02*(hi-lo) {
		hi = t
	}
	return lo, hi
}

// ticks returns the axis' ticks within [lo, hi]: the given ones, powers
// of 10 on a log axis, else multiples of a 1-2-5 step giving 3 to 8 ticks.
func ticks(a Axis, lo, hi float64) []Tick {
	var out []Tick
	if a.Ticks != nil {
		for _, t := range a.Ticks {
			if t.V >= lo-1e-9*math.Abs(lo) && t.V <= hi+1e-9*math.Abs(hi) {
				out = append(out, t)
			}
		}
		return out
	}
	if a.Log {
		for e := math.Ceil(math.Log10(lo) - 1e-9); e <= math.Log10(hi)+1e-9; e++ {
			v := math.Pow(10, e)
			out = append(out, Tick{v, strconv.FormatFloat(v, 'g', -1, 64)})
		}
		return out
	}
	step := niceStep((hi - lo) / 7)
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		out = append(out, Tick{v, tick(v, step)})
	}
	return out
}

// niceStep returns the smallest of 1, 2 or 5 × 10^k that is at least d.
func niceStep(d float64) float64 {
	if d <= 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// tick formats an axis value with as many decimals as the step needs.
func tick(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if math.Abs(v) < step*1e-9 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// Band returns the polygon between lo and hi over x, as a Series' BandX
// and BandY: along hi, then back along lo.
func Band(x, lo, hi []float64) ([]float64, []float64) {
	bx := make([]float64, 0, 2*len(x))
	by := make([]float64, 0, 2*len(x))
	for i := range x {
		bx, by = append(bx, x[i]), append(by, hi[i])
	}
	for i := len(x) - 1; i >= 0; i-- {
		bx, by = append(bx, x[i]), append(by, lo[i])
	}
	return bx, by
}
