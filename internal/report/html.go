package report

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim"
)

// Series is one line of a chart.
type Series struct {
	Name string
	X, Y []float64
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// LineChart renders series as an inline SVG line chart with axes, ticks and
// a legend. Ranges cover all points; an empty chart has unit ranges.
func LineChart(title, xLabel, yLabel string, series []Series) string {
	const W, H, L, R, T, B = 720.0, 380.0, 64.0, 170.0, 36.0, 48.0
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for i := range s.X {
			x0, x1 = math.Min(x0, s.X[i]), math.Max(x1, s.X[i])
			y0, y1 = math.Min(y0, s.Y[i]), math.Max(y1, s.Y[i])
		}
	}
	if math.IsInf(x0, 0) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if x1 == x0 {
		x1 = x0 + 1
	}
	if y1 == y0 {
		y1 = y0 + 1
	}
	// Round the axes out to nice steps; a percentage that cannot pass 100
	// keeps its axis there.
	xs, ys := niceStep((x1-x0)/5), niceStep((y1-y0)/5)
	x0, x1 = math.Floor(x0/xs)*xs, math.Ceil(x1/xs)*xs
	top := y1
	y0, y1 = math.Floor(y0/ys)*ys, math.Ceil(y1/ys)*ys
	if top <= 100 && y1 > 100 {
		y1 = 100
	}
	px := func(x float64) float64 { return L + (x-x0)/(x1-x0)*(W-L-R) }
	py := func(y float64) float64 { return H - B - (y-y0)/(y1-y0)*(H-T-B) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`, W, H, W, H, html.EscapeString(title))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/><text x="%.0f" y="22" font-size="15" font-weight="bold">%s</text>`, L, html.EscapeString(title))
	for v := x0; v <= x1+xs/2; v += xs {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`, px(v), H-B+16, tick(v, xs))
	}
	for v := y0; v <= y1+ys/2; v += ys {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, L, py(v), W-R, py(v))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, L-6, py(v)+4, tick(v, ys))
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`, L, H-B, W-R, H-B, L, T, L, H-B)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12" text-anchor="middle">%s</text>`, L+(W-L-R)/2, H-10, html.EscapeString(xLabel))
	fmt.Fprintf(&b, `<text x="14" y="%.0f" font-size="12" text-anchor="middle" transform="rotate(-90 14 %.0f)">%s</text>`, T+(H-T-B)/2, T+(H-T-B)/2, html.EscapeString(yLabel))
	for si, s := range series {
		col := palette[si%len(palette)]
		var pts strings.Builder
		for i := range s.X {
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(s.X[i]), py(s.Y[i]))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="%s"/>`, col, strings.TrimSpace(pts.String()))
		ly := T + 8 + float64(si)*18
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/><text x="%.0f" y="%.0f" font-size="12">%s</text>`,
			W-R+12, ly, W-R+32, ly, col, W-R+38, ly+4, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// niceStep returns the smallest of 1, 2 or 5 × 10^k that is at least d.
func niceStep(d float64) float64 {
	if d <= 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

// tick formats an axis value with as many decimals as the step needs.
func tick(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step)))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// firstRun returns each policy's first-seed result, in summary order.
func firstRun(r *sim.Report) []sim.Result {
	var out []sim.Result
	for _, s := range r.Summary {
		for _, x := range r.Results {
			if x.Policy == s.Policy {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// HTML renders the report as a self-contained page.
func HTML(r *sim.Report) []byte {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>gpuplane simulate</title>` +
		`<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:12px 0}` +
		`td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}th{background:#f4f4f4}td:first-child{text-align:left}` +
		`pre{background:#f7f7f7;padding:10px;overflow-x:auto;font-size:12px}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>gpuplane simulate: %s</h1>", html.EscapeString(r.Mode))
	fmt.Fprintf(&b, "<p>%s: %d nodes, %d GPUs, %d trace pods; %d runs in %.2f s.</p>", html.EscapeString(r.Source), r.Nodes, r.GPUs, r.Pods, len(r.Results), r.WallTime)
	var table bytes.Buffer
	_ = WriteTable(&table, r)
	fmt.Fprintf(&b, "<h2>Summary</h2><pre id=\"summary\">%s</pre>", html.EscapeString(table.String()))
	first := firstRun(r)
	if r.Mode == "fill" {
		var alloc, frag []Series
		for _, x := range first {
			a, f := Series{Name: x.Policy}, Series{Name: x.Policy}
			for _, p := range x.Curve {
				a.X, a.Y = append(a.X, 100*p.ArrivedRatio), append(a.Y, 100*p.AllocationRatio)
				f.X, f.Y = append(f.X, 100*p.ArrivedRatio), append(f.Y, 100*p.FragmentationRatio)
			}
			alloc, frag = append(alloc, a), append(frag, f)
		}
		b.WriteString("<h2>GPU allocation ratio against arrived demand</h2>")
		b.WriteString(LineChart("GPU allocation (first seed of each policy)", "arrived GPU demand, % of capacity", "GPU allocation ratio, %", alloc))
		b.WriteString("<h2>Fragmentation ratio against arrived demand</h2>")
		b.WriteString(LineChart("Fragmented share of idle GPUs", "arrived GPU demand, % of capacity", "fragmentation ratio, %", frag))
	} else {
		var alloc, wait, delay []Series
		for _, x := range first {
			if x.Replay == nil {
				continue
			}
			a, q, d := Series{Name: x.Policy}, Series{Name: x.Policy}, Series{Name: x.Policy}
			for _, p := range x.Replay.Timeline {
				a.X, a.Y = append(a.X, p.Seconds/86400), append(a.Y, 100*p.AllocationRatio)
				q.X, q.Y = append(q.X, p.Seconds/86400), append(q.Y, float64(p.Waiting))
			}
			for i, v := range x.Replay.DelayPercentiles {
				d.X, d.Y = append(d.X, float64(i)), append(d.Y, v/3600)
			}
			alloc, wait, delay = append(alloc, a), append(wait, q), append(delay, d)
		}
		b.WriteString("<h2>GPU allocation over time</h2>")
		b.WriteString(LineChart("GPU allocation (first seed of each policy)", "trace time, days", "GPU allocation ratio, %", alloc))
		b.WriteString("<h2>Waiting pods over time</h2>")
		b.WriteString(LineChart("Pods waiting for GPUs", "trace time, days", "waiting pods", wait))
		b.WriteString("<h2>Queueing delay</h2>")
		b.WriteString(LineChart("Queueing delay by percentile", "percentile of started pods", "queueing delay, hours", delay))
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// CheckDir makes dir if needed and checks that files can be written in it,
// so that a run does not find out only at its end. Unless force, a dir that
// already holds a report (index.html or report.json) is an error.
func CheckDir(dir string, force bool) error {
	if !force {
		for _, name := range []string{"index.html", "report.json"} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return fmt.Errorf("%s already holds a report: %s", dir, name)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".gpuplane-check-")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteHTML writes index.html and report.json into dir (created if
// needed) and returns the HTML file's path. Files are written to a
// temporary name first and renamed, so an existing report is never left
// half-written.
func WriteHTML(dir string, r *sim.Report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		return "", err
	}
	if err := writeAtomic(filepath.Join(dir, "report.json"), js.Bytes()); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	return path, writeAtomic(path, HTML(r))
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
