package report

import (
	"bytes"
	"fmt"
	"html"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

const css = `body{font-family:system-ui,sans-serif;margin:24px auto;max-width:960px;padding:0 16px;color:#222;line-height:1.4}` +
	`h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}` +
	`.wrap{overflow-x:auto}table{border-collapse:collapse;margin:8px 0;font-size:13px}` +
	`td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td{white-space:nowrap}th{background:#f4f4f4;font-weight:600}` +
	`td:first-child,th:first-child{text-align:left}.sd{color:#666;font-size:12px}.best{font-weight:bold;background:#eef6ee}` +
	`svg{max-width:100%;height:auto;display:block}.note{color:#555;font-size:13px}` +
	`.nodes{display:flex;flex-wrap:wrap;gap:12px}.nodes figure{margin:0}figcaption{font-size:13px;font-weight:600}` +
	`#failed th:not(:first-child){font-weight:normal;font-size:12px}.params td{text-align:left;white-space:normal;overflow-wrap:anywhere}.lead{font-size:15px}`

// HTML renders the report as one self-contained page: no scripts, no
// external resources, charts as inline SVG.
func HTML(r *engine.Report) []byte {
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
		`<title>gpuplane simulate</title><style>` + css + `</style></head><body>`)
	fmt.Fprintf(&b, "<h1>gpuplane simulate: %s experiment</h1>", html.EscapeString(r.Mode))
	fmt.Fprintf(&b, "<p>%s: %s nodes, %s GPUs, %s trace pods; %d runs.</p>", html.EscapeString(r.Source), thousands(r.Nodes), thousands(r.GPUs), thousands(r.Pods), len(r.Results))
	paper, hasPaper := paperFor(r)
	colors := map[string]string{}
	for i, s := range r.Summary {
		colors[s.Policy] = htmlkit.Color(i)
	}
	b.WriteString(lead(r))
	b.WriteString("<h2>Summary</h2>")
	b.WriteString(summaryTable(r, paper, hasPaper))
	b.WriteString(teamsTable(r, colors))
	b.WriteString(sharingSection(r))
	b.WriteString(snapshotPodsTable(r))
	if r.Mode == "fill" {
		fillCharts(&b, r, colors, paper, hasPaper)
	} else {
		replayCharts(&b, r, colors)
	}
	b.WriteString(byModelTable(r))
	b.WriteString(failedTable(r))
	b.WriteString(nodePictures(r))
	b.WriteString(params(r, paper, hasPaper))
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// stat is the mean and population standard deviation of one metric over
// a policy's N runs.
type stat struct {
	Mean, Std float64
	N         int
}

func statOf(r *engine.Report, policy string, f func(engine.Result) float64) stat {
	var xs []float64
	for _, x := range r.Results {
		if x.Policy == policy {
			xs = append(xs, f(x))
		}
	}
	if len(xs) == 0 {
		return stat{}
	}
	s := stat{N: len(xs)}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	for _, x := range xs {
		s.Std += (x - s.Mean) * (x - s.Mean)
	}
	s.Std = math.Sqrt(s.Std / float64(len(xs)))
	return s
}

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
}

func pct(v float64) string  { return strconv.FormatFloat(100*v, 'f', 2, 64) }
func num1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func num0(v float64) string { return thousands(int(math.Round(v))) }
func usd(v float64) string  { return strconv.FormatFloat(v, 'f', 2, 64) }

func replayOf(f func(*engine.ReplayStats) float64) func(engine.Result) float64 {
	return func(x engine.Result) float64 {
		if x.Replay == nil {
			return 0
		}
		return f(x.Replay)
	}
}

func summaryTable(r *engine.Report, paper trace.Published, hasPaper bool) string {
	var cols []column
	if r.Mode == "fill" {
		cols = []column{
			{"GPU allocation, %", func(x engine.Result) float64 { return x.GPUAllocationRatio }, pct, true, true},
			{"fragmentation, % of idle GPU", func(x engine.Result) float64 { return x.FragmentationRatio }, pct, false, true},
			{"failed pods", func(x engine.Result) float64 { return float64(x.FailedPods) }, num1, false, true},
			{"idle GPUs", func(x engine.Result) float64 { return x.UnallocatedGPUs }, num1, false, false},
			{"idle GPUs cost, USD per hour", func(x engine.Result) float64 { return x.IdleUSDPerHour }, usd, false, false},
		}
	} else {
		cols = []column{
			{"time-weighted GPU allocation, %", replayOf(func(s *engine.ReplayStats) float64 { return s.TimeWeightedAllocationRatio }), pct, true, true},
			{"mean wait", replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayMeanSeconds }), duration, false, true},
			{"p95 wait", replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayP95Seconds }), duration, false, true},
			{"longest wait", replayOf(func(s *engine.ReplayStats) float64 { return s.QueueDelayMaxSeconds }), duration, false, false},
			{"never started", replayOf(func(s *engine.ReplayStats) float64 { return float64(s.NeverStarted) }), num1, false, false},
			{"idle GPU-hours", replayOf(func(s *engine.ReplayStats) float64 { return s.IdleGPUHours }), num0, false, false},
			{"idle GPUs cost, USD", replayOf(func(s *engine.ReplayStats) float64 { return s.IdleCostUSD }), num0, false, false},
		}
	}
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
			st := stats[i][j]
			best, differ := true, false
			for k := range r.Summary {
				o := stats[k][j].Mean
				if c.format(o) != c.format(st.Mean) {
					differ = true
					if (o > st.Mean) == c.higher {
						best = false
					}
				}
			}
			best = best && differ
			cell := html.EscapeString(c.format(st.Mean))
			if c.sd && st.N > 1 {
				cell += ` <span class="sd">± ` + html.EscapeString(c.format(st.Std)) + `</span>`
			}
			if best {
				fmt.Fprintf(&b, `<td class="best">%s</td>`, cell)
			} else {
				fmt.Fprintf(&b, `<td>%s</td>`, cell)
			}
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
	if r.Mode == "fill" {
		if r.Inflate > 0 {
			fmt.Fprintf(&b, `<p class="note">Mean ± standard deviation over seeds, at the end of the run (arrived GPU demand %.0f%% of capacity). Best of each column in bold. Idle cost: the GPUs left idle, priced per GPU model.`, 100*r.Inflate)
		} else {
			b.WriteString(`<p class="note">Mean ± standard deviation over seeds, at the end of the run (each pod submitted once). Best of each column in bold. Idle cost: the GPUs left idle, priced per GPU model.`)
		}
		if hasPaper {
			fmt.Fprintf(&b, ` Published: Weng et al., “Beware of Fragmentation”, USENIX ATC 2023, Fig. 7/9, mean of 10 seeds on %s (recognised by SHA-256).`, html.EscapeString(paper.File))
		}
		b.WriteString("</p>")
	} else {
		b.WriteString(`<p class="note">Mean ± standard deviation over seeds. Waits are of the pods that started (creation to placement); never started: pods still waiting at the end. Best of each column in bold.</p>`)
	}
	return b.String()
}

// curve is one run's samples.
type curve struct{ x, y []float64 }

// at returns c at x: linear between samples, or the last sample at or
// before x when hold is set; the end values beyond the ends.
func (c curve) at(x float64, hold bool) float64 {
	n := len(c.x)
	k := sort.SearchFloat64s(c.x, x) // first sample ≥ x
	switch {
	case k < n && c.x[k] == x:
		return c.y[k]
	case k == 0:
		return c.y[0]
	case k == n:
		return c.y[n-1]
	case hold:
		return c.y[k-1]
	}
	f := (x - c.x[k-1]) / (c.x[k] - c.x[k-1])
	return c.y[k-1] + f*(c.y[k]-c.y[k-1])
}

// envelope samples the runs' curves at n points over the span they all
// cover and returns the grid with the mean, minimum and maximum there.
func envelope(cs []curve, n int, hold bool) (grid, mean, lo, hi []float64) {
	a, z := math.Inf(-1), math.Inf(1)
	for _, c := range cs {
		if len(c.x) == 0 {
			continue
		}
		a, z = math.Max(a, c.x[0]), math.Min(z, c.x[len(c.x)-1])
	}
	if math.IsInf(a, 0) || z < a {
		return nil, nil, nil, nil
	}
	for i := 0; i < n; i++ {
		x := a + (z-a)*float64(i)/float64(n-1)
		if n == 1 {
			x = z
		}
		m, l, h, k := 0.0, math.Inf(1), math.Inf(-1), 0
		for _, c := range cs {
			if len(c.x) == 0 {
				continue
			}
			v := c.at(x, hold)
			m += v
			l, h = math.Min(l, v), math.Max(h, v)
			k++
		}
		grid, mean, lo, hi = append(grid, x), append(mean, m/float64(k)), append(lo, l), append(hi, h)
	}
	return grid, mean, lo, hi
}

// runsOf returns the results of one policy.
func runsOf(r *engine.Report, policy string) []engine.Result {
	var out []engine.Result
	for _, x := range r.Results {
		if x.Policy == policy {
			out = append(out, x)
		}
	}
	return out
}

// meanSeries is a policy's mean line with its min–max band when there
// are several runs; from drops the grid points before it.
func meanSeries(name, color string, cs []curve, hold bool, from float64) htmlkit.Series {
	grid, mean, lo, hi := envelope(cs, 160, hold)
	k := sort.SearchFloat64s(grid, from)
	grid, mean, lo, hi = grid[k:], mean[k:], lo[k:], hi[k:]
	s := htmlkit.Series{Name: name, Color: color, X: grid, Y: mean}
	if len(cs) > 1 {
		s.BandX, s.BandY = htmlkit.Band(grid, lo, hi)
	}
	return s
}

func fillCharts(b *bytes.Buffer, r *engine.Report, colors map[string]string, paper trace.Published, hasPaper bool) {
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
	b.WriteString("<h2>GPU allocation as demand arrives</h2>")
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
	b.WriteString("<h2>Fragmentation as demand arrives</h2>")
	b.WriteString(htmlkit.Chart("Fragmented share of idle GPU capacity", xa, htmlkit.Axis{Label: "fragmentation ratio, %"}, frag))
	b.WriteString(`<p class="note">Fragmentation against the target workload (Weng et al., 2023, §3.2); near the end almost all idle capacity is fragmented for every policy, so compare how fast it grows.</p>`)
}

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
	b.WriteString("<h2>GPU allocation over time</h2>")
	b.WriteString(htmlkit.Chart("GPU allocation ratio ("+band+")", xa, htmlkit.Axis{Label: "GPU allocation ratio, %"}, alloc))
	b.WriteString("<h2>Pods waiting over time</h2>")
	b.WriteString(htmlkit.Chart("Pods waiting for a node ("+band+")", xa, htmlkit.Axis{Label: "waiting pods"}, wait))
	b.WriteString("<h2>Waiting time</h2>")
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

// byModelTable shows each policy's mean GPU allocation per GPU model.
func byModelTable(r *engine.Report) string {
	type model struct {
		name        string
		nodes, gpus int
	}
	var models []model
	seen := map[string]bool{}
	for _, x := range r.Results {
		for _, m := range x.ByModel {
			if !seen[m.Model] {
				seen[m.Model] = true
				models = append(models, model{m.Model, m.Nodes, m.GPUs})
			}
		}
	}
	if len(models) == 0 || !allocatedAtEnd(r) {
		return ""
	}
	sort.Slice(models, func(a, b int) bool { return models[a].name < models[b].name })
	ratio := func(name string) func(engine.Result) float64 {
		return func(x engine.Result) float64 {
			for _, m := range x.ByModel {
				if m.Model == name {
					return m.AllocationRatio
				}
			}
			return 0
		}
	}
	var b strings.Builder
	b.WriteString(`<h2>GPU allocation by GPU model</h2><div class="wrap"><table id="bymodel"><tr><th>policy</th>`)
	for _, m := range models {
		fmt.Fprintf(&b, "<th>%s<br><span class=\"sd\">%s, %s</span></th>", html.EscapeString(m.name), count(m.nodes, "node"), count(m.gpus, "GPU"))
	}
	b.WriteString("</tr>")
	means := make([][]float64, len(r.Summary))
	for i, s := range r.Summary {
		for _, m := range models {
			means[i] = append(means[i], statOf(r, s.Policy, ratio(m.name)).Mean)
		}
	}
	for i, s := range r.Summary {
		fmt.Fprintf(&b, "<tr><td>%s</td>", html.EscapeString(s.Policy))
		for j := range models {
			best, differ := true, false
			for k := range r.Summary {
				if pct(means[k][j]) != pct(means[i][j]) {
					differ = true
					if means[k][j] > means[i][j] {
						best = false
					}
				}
			}
			best = best && differ
			class := ""
			if best {
				class = ` class="best"`
			}
			fmt.Fprintf(&b, "<td%s>%s</td>", class, pct(means[i][j]))
		}
		b.WriteString("</tr>")
	}
	end := "at the end of the run"
	if r.Mode == "replay" {
		end = "at the end of the replay"
	}
	fmt.Fprintf(&b, `</table></div><p class="note">Allocated share of each model's GPUs %s, %%, mean over seeds; highest of each model in bold.</p>`, end)
	return b.String()
}

// allocatedAtEnd tells whether any run ends with GPUs allocated; a replay
// usually ends with an empty cluster, and pictures of it say nothing.
func allocatedAtEnd(r *engine.Report) bool {
	for _, x := range r.Results {
		if x.AllocatedGPUMilli > 0 {
			return true
		}
	}
	return false
}

// reasons explain sim's failure reasons.
var reasons = map[string]string{
	engine.ReasonNoRoom:     "no room",
	engine.ReasonTooLarge:   "larger than every node",
	engine.ReasonNoModel:    "no node of its GPU models",
	engine.ReasonNoGPUNodes: "no node has GPUs",
	engine.ReasonDeleted:    "deleted while waiting",
}

// shape describes a failed pod group's requests as HTML: GPUs, then the
// allowed models (breakable after each |), then CPU cores and memory.
func shape(g engine.FailedGroup) string {
	gpu := "no GPU"
	if g.NumGPU > 0 {
		gpu = fmt.Sprintf("%d × %s GPU", g.NumGPU, strconv.FormatFloat(float64(g.GPUMilli)/1000, 'f', -1, 64))
		if g.GPUSpec != "" {
			gpu += " (" + strings.ReplaceAll(html.EscapeString(clip(g.GPUSpec, 40)), "|", "|<wbr>") + ")"
		}
	}
	return fmt.Sprintf("%s,<br>%s CPU, %s GiB", gpu, strconv.FormatFloat(float64(g.CPUMilli)/1000, 'f', -1, 64), strconv.FormatFloat(math.Round(float64(g.MemoryMiB)/1024*10)/10, 'f', -1, 64))
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// failedShapes is how many pod shapes the failed-pods table shows.
const failedShapes = 5

// failedTable shows, per policy, the failed pods per run: all of them and
// the most frequent shapes and reasons.
func failedTable(r *engine.Report) string {
	anyFailed := false
	for _, x := range r.Results {
		anyFailed = anyFailed || x.FailedPods > 0 || len(x.Failed) > 0
	}
	if !anyFailed {
		return ""
	}
	type key struct {
		reason string
		g      engine.FailedGroup
	}
	total := map[key]int{}
	for _, x := range r.Results {
		for _, g := range x.Failed {
			k := g
			k.Pods = 0
			total[key{g.Reason, k}] += g.Pods
		}
	}
	keys := make([]key, 0, len(total))
	for k := range total {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if total[keys[a]] != total[keys[b]] {
			return total[keys[a]] > total[keys[b]]
		}
		return shape(keys[a].g)+keys[a].reason < shape(keys[b].g)+keys[b].reason
	})
	other := len(keys) > failedShapes
	if other {
		keys = keys[:failedShapes]
	}
	var b strings.Builder
	what := "failed pods"
	if r.Mode == "replay" {
		what = "never started"
	}
	fmt.Fprintf(&b, `<h2>Failed pods</h2><div class="wrap"><table id="failed"><tr><th>policy</th><th>%s, all</th>`, what)
	for _, k := range keys {
		why := reasons[k.reason]
		if why == "" {
			why = k.reason
		}
		fmt.Fprintf(&b, `<th>%s<br><span class="sd">%s</span></th>`, shape(k.g), html.EscapeString(why))
	}
	if other {
		b.WriteString("<th>other shapes</th>")
	}
	b.WriteString("</tr>")
	for _, s := range r.Summary {
		runs := runsOf(r, s.Policy)
		if len(runs) == 0 {
			continue
		}
		n := float64(len(runs))
		all := statOf(r, s.Policy, func(x engine.Result) float64 { return float64(x.FailedPods) }).Mean
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td>", html.EscapeString(s.Policy), num1(all))
		shown := 0.0
		for _, k := range keys {
			c := 0
			for _, x := range runs {
				for _, g := range x.Failed {
					if g.Reason == k.reason && g.CPUMilli == k.g.CPUMilli && g.MemoryMiB == k.g.MemoryMiB && g.NumGPU == k.g.NumGPU && g.GPUMilli == k.g.GPUMilli && g.GPUSpec == k.g.GPUSpec {
						c += g.Pods
					}
				}
			}
			shown += float64(c) / n
			fmt.Fprintf(&b, "<td>%s</td>", num1(float64(c)/n))
		}
		if other {
			rest := 0
			for _, x := range runs {
				for _, g := range x.Failed {
					rest += g.Pods
				}
			}
			fmt.Fprintf(&b, "<td>%s</td>", num1(float64(rest)/n-shown))
		}
		b.WriteString("</tr>")
	}
	b.WriteString(`</table></div><p class="note">Pods per run, mean over seeds, by shape (GPUs × share of each, CPU cores, memory) and reason.`)
	if len(total) == 0 {
		b.WriteString(" This run recorded no breakdown by shape.")
	}
	b.WriteString("</p>")
	return b.String()
}

// heat bins a node's allocated share (per mille) into a colour: grey idle,
// blue full, and shades of orange for the partly allocated nodes, where
// fragmentation lives.
var heat = []struct {
	upTo  int
	color string
	label string
}{{0, "#e4e4e4", "idle"}, {250, "#fdd0a2", "≤ 25%"}, {500, "#fdae6b", "≤ 50%"}, {750, "#f16913", "≤ 75%"}, {999, "#a63603", "< 100%"}, {1000, "#08306b", "full"}}

func heatColor(permille int) string {
	for _, h := range heat {
		if permille <= h.upTo {
			return h.color
		}
	}
	return heat[len(heat)-1].color
}

// nodePictures draws, for each policy's first seed, every GPU node as a
// cell coloured by its allocated share, grouped by GPU model.
func nodePictures(r *engine.Report) string {
	var figs []string
	for _, s := range r.Summary {
		var first *engine.Result
		for i := range r.Results {
			x := &r.Results[i]
			if x.Policy == s.Policy && len(x.ByModel) > 0 && x.ByModel[0].NodeAllocation != nil {
				first = x
				break
			}
		}
		if first == nil {
			continue
		}
		figs = append(figs, fmt.Sprintf(`<figure><figcaption>%s, seed %d</figcaption>%s</figure>`, html.EscapeString(s.Policy), first.Seed, nodeGrid(first.ByModel)))
	}
	if len(figs) == 0 || !allocatedAtEnd(r) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Nodes at the end of the run</h2><p class="note">Each cell is one GPU node, coloured by the share of its GPUs allocated: `)
	for _, h := range heat {
		fmt.Fprintf(&b, `<svg width="12" height="12" style="display:inline;vertical-align:middle"><rect width="12" height="12" fill="%s"/></svg> %s &nbsp;`, h.color, html.EscapeString(h.label))
	}
	b.WriteString(`Nodes grouped by GPU model, most allocated first. First seed of each policy.</p><div class="nodes">`)
	b.WriteString(strings.Join(figs, ""))
	b.WriteString("</div>")
	return b.String()
}

// nodeGrid is one policy's picture: a label per model, then its nodes.
func nodeGrid(models []engine.ModelUse) string {
	const W, cell, pitch, label = 360, 5, 6, 16
	cols := W / pitch
	y := 0
	var body strings.Builder
	for _, m := range models {
		fmt.Fprintf(&body, `<text x="0" y="%d" font-size="11">%s: %s, %s%% of GPUs allocated</text>`, y+11, html.EscapeString(clip(m.Model, 24)), count(m.Nodes, "node"), pct(m.AllocationRatio))
		y += label
		// Nodes are sorted, so a colour is a run of cells: one dashed line
		// per run and grid row draws them.
		for i := 0; i < len(m.NodeAllocation); {
			c := heatColor(m.NodeAllocation[i])
			j := i + 1
			for j < len(m.NodeAllocation) && j%cols != 0 && heatColor(m.NodeAllocation[j]) == c {
				j++
			}
			cy := y + (i/cols)*pitch + cell/2
			fmt.Fprintf(&body, `<line class="nodes" data-nodes="%d" x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%d" stroke-dasharray="%d %d"/>`,
				j-i, (i%cols)*pitch, cy, (i%cols)*pitch+(j-i)*pitch-(pitch-cell), cy, c, cell, cell, pitch-cell)
			i = j
		}
		y += (len(m.NodeAllocation)+cols-1)/cols*pitch + 6
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="sans-serif">%s</svg>`, W, y, W, y, body.String())
}

// params lists how the run was made.
func params(r *engine.Report, paper trace.Published, hasPaper bool) string {
	var b strings.Builder
	row := func(k, v string) {
		fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>", html.EscapeString(k), html.EscapeString(v))
	}
	b.WriteString(`<h2>Run parameters</h2><div class="wrap"><table class="params" id="params">`)
	row("experiment", r.Mode)
	row("inputs", r.Source)
	if sum := r.PodsSHA256(); sum != "" {
		row("pod list SHA-256", sum)
	}
	if hasPaper {
		row("recognised as", paper.File+" (public openb trace) on the openb GPU node list")
	}
	row("cluster", fmt.Sprintf("%s nodes, %s GPUs", thousands(r.Nodes), thousands(r.GPUs)))
	row("trace pods", thousands(r.Pods))
	var pols []string
	for _, s := range r.Summary {
		pols = append(pols, s.Policy)
	}
	row("policies", strings.Join(pols, ", "))
	if p := r.Params; p != nil {
		row("tie-break", p.TieBreak)
		row("popularity", strconv.FormatFloat(p.Popularity, 'g', -1, 64))
		var prices []string
		for _, m := range slices.Sorted(maps.Keys(p.PricesUSDPerGPUHour)) {
			prices = append(prices, fmt.Sprintf("%s %.2f", m, p.PricesUSDPerGPUHour[m]))
		}
		if len(prices) > 0 {
			row("prices (USD per GPU-hour)", strings.Join(prices, ", "))
		}
	}
	if len(r.Results) > 0 {
		lo, hi := r.Results[0].Seed, r.Results[0].Seed
		set := map[uint64]bool{}
		for _, x := range r.Results {
			lo, hi = min(lo, x.Seed), max(hi, x.Seed)
			set[x.Seed] = true
		}
		if lo == hi {
			row("seeds", fmt.Sprintf("1 (%d)", lo))
		} else {
			row("seeds", fmt.Sprintf("%d (%d to %d)", len(set), lo, hi))
		}
	}
	if r.Mode == "fill" && r.Inflate > 0 {
		row("inflate", fmt.Sprintf("%g: the run stops when the arrived GPU demand reaches %g%% of capacity", r.Inflate, 100*r.Inflate))
	}
	row("wall time", fmt.Sprintf("%.2f s", r.WallTime))
	b.WriteString("</table></div>")
	return b.String()
}

// duration formats seconds for a reader: s, min, h or d.
func duration(s float64) string {
	switch {
	case s < 60:
		return strconv.FormatFloat(s, 'f', 0, 64) + " s"
	case s < 3600:
		return strconv.FormatFloat(s/60, 'f', 1, 64) + " min"
	case s < 2*86400:
		return strconv.FormatFloat(s/3600, 'f', 2, 64) + " h"
	}
	return strconv.FormatFloat(s/86400, 'f', 2, 64) + " d"
}

// count writes n things: "1 node", "1,213 nodes".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return thousands(n) + " " + thing + "s"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// WriteHTML writes index.html and report.json into dir (created if
// needed) and returns the HTML file's path. Files are written to a
// temporary name first and renamed, so an existing report is never left
// half-written.
func WriteHTML(dir string, r *engine.Report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		return "", err
	}
	if err := htmlkit.WriteBytes(filepath.Join(dir, "report.json"), js.Bytes()); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	return path, htmlkit.WriteBytes(path, HTML(r))
}

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

// snapshotPodsTable shows, for simulate --snapshot, where each pod went
// under each policy (Report.SnapshotPods).
func snapshotPodsTable(r *engine.Report) string {
	if len(r.SnapshotPods) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Pods of the snapshot</h2><p class="note">Where each pod went: the first seed's node and GPUs, or why it failed; in how many runs it placed.</p><div class="wrap"><table id="snapshot-pods"><tr><th>pod</th><th>policy</th><th>node</th><th>GPUs</th><th>placed</th></tr>`)
	const maxRows = 300
	for i, p := range r.SnapshotPods {
		if i == maxRows {
			fmt.Fprintf(&b, `<tr><td colspan="5">… %s more rows in report.json (snapshot_pods)</td></tr>`, thousands(len(r.SnapshotPods)-maxRows))
			break
		}
		where := p.Node
		if where == "" {
			where = "– (" + p.Reason + ")"
		}
		gpus := make([]string, len(p.GPUs))
		for i, g := range p.GPUs {
			gpus[i] = strconv.Itoa(g)
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d/%d</td></tr>", html.EscapeString(p.Pod), html.EscapeString(p.Policy), html.EscapeString(where), strings.Join(gpus, ","), p.Placed, p.Runs)
	}
	b.WriteString("</table></div>")
	return b.String()
}
