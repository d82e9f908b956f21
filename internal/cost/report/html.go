// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
	costalloc "github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/htmlkit"
)

// TopJobs is how many jobs the top-jobs table lists.
const TopJobs = 20

// maxTeams is how many teams the chart over time draws on their own; the
// rest are drawn together as "other teams".
const maxTeams = 7

// idleColor is the chart's colour of idle capacity.
const idleColor = "#d4d4d4"

// css is the cost report's style beyond htmlkit.CSS.
const css = `tr.total td{font-weight:600}.name{text-align:left;white-space:normal;overflow-wrap:anywhere}` +
	`#buckets{font-size:12px}#buckets td,#buckets th{padding:2px 4px}`

// HTML renders the report as one self-contained page: no scripts, no
// external resources, charts as inline SVG.
func HTML(r *Report) []byte {
	var b bytes.Buffer
	b.WriteString(htmlkit.Head("gpuplane cost", css))
	fmt.Fprintf(&b, "<h1>gpuplane cost: %s to %s UTC</h1>", html.EscapeString(stamp(r.From, 0)), html.EscapeString(stamp(r.To, 0)))
	b.WriteString(lead(r))
	b.WriteString(teamsTable(r))
	b.WriteString(overTime(r))
	b.WriteString(topJobs(r))
	b.WriteString(idleByModel(r))
	b.WriteString(histogram(r))
	b.WriteString(rightsizing(r))
	if len(r.Warnings) > 0 {
		b.WriteString(`<h2>Warnings</h2><ul id="warnings">`)
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(w))
		}
		b.WriteString("</ul>")
	}
	b.WriteString(`<p class="note">Rules and sources: docs/cost.md. Shares are priced as shares (a MIG instance by its compute slices, a time-sliced replica by 1/replicas, a fractional share by its milli-GPU); cents are rounded by the largest remainder method, so every table's cents add up to the GPUs' cost.</p>`)
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// Write writes index.html and, when js is not nil, report.json (the
// command's --format json output) into dir (created if needed), each all
// or nothing (internal/atomicfile), and returns the HTML file's path. The
// caller checks dir first with htmlkit.CheckDir, which refuses to
// overwrite a report without --force.
func Write(dir string, r *Report, js []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if js != nil {
		if err := atomicfile.Write(filepath.Join(dir, "report.json"), js, 0o644); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "index.html")
	return path, atomicfile.Write(path, HTML(r), 0o644)
}

// dollars formats US cents as dollars with thousands separators, e.g.
// "$1,234.56".
func dollars(c int64) string {
	neg := c < 0
	if neg {
		c = -c
	}
	s := fmt.Sprintf("%s.%02d", thousands(c/100), c%100)
	if neg {
		return "-$" + s
	}
	return "$" + s
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// hours formats GPU-hours with two decimals.
func hours(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// percent formats a ratio as a percentage with one decimal.
func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

// totals returns a report's allocated and idle cents and GPU-hours
// allocated and used.
func totals(r costalloc.Report) (alloc, idle int64, allocH, usedH float64) {
	for _, x := range r.Rows {
		alloc += x.CostCents
		allocH += x.GPUHoursAllocated
		usedH += x.GPUHoursUsed
	}
	for _, x := range r.Idle {
		idle += x.CostCents
	}
	return
}

func share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

func lead(r *Report) string {
	alloc, idle, allocH, usedH := totals(r.Teams)
	var b strings.Builder
	fmt.Fprintf(&b, `<p class="lead" id="lead">Over %s the GPUs cost <b>%s</b> (%s GPU-hours): %s held by pods (%s) and %s idle (%s).`,
		span(r.To-r.From), dollars(r.Teams.AssetCents), hours(r.Teams.GPUHours),
		dollars(alloc), percent(share(alloc, r.Teams.AssetCents)), dollars(idle), percent(share(idle, r.Teams.AssetCents)))
	if allocH > 0 {
		fmt.Fprintf(&b, ` The pods used %s of the %s GPU-hours they held: efficiency %s.`, hours(usedH), hours(allocH), percent(usedH/allocH))
	}
	b.WriteString("</p>")
	return b.String()
}

// span formats a window's length in milliseconds: whole days as days, else
// hours.
func span(ms int64) string {
	if ms%msPerDay == 0 {
		return count(ms/msPerDay, "day")
	}
	return strconv.FormatFloat(float64(ms)/msPerHour, 'f', -1, 64) + " hours"
}

func count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

// rowCells writes a row's GPU-hours, efficiency and cents.
func rowCells(b *strings.Builder, x costalloc.Row) {
	fmt.Fprintf(b, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", hours(x.GPUHoursAllocated), hours(x.GPUHoursUsed),
		percent(x.Efficiency), dollars(x.CostCents), dollars(x.UnusedCents))
}

const rowHeads = "<th>GPU-hours allocated</th><th>GPU-hours used</th><th>efficiency</th><th>cost</th><th>unused cost</th>"

func teamsTable(r *Report) string {
	var b strings.Builder
	b.WriteString(`<h2>Teams</h2><div class="wrap"><table id="teams"><tr><th>team</th>` + rowHeads + `</tr>`)
	for _, x := range byCost(r.Teams.Rows) {
		fmt.Fprintf(&b, `<tr><td class="name">%s</td>`, html.EscapeString(x.Key))
		rowCells(&b, x)
		b.WriteString("</tr>")
	}
	alloc, idle, _, _ := totals(r.Teams)
	fmt.Fprintf(&b, `<tr><td class="name">idle</td><td></td><td></td><td></td><td>%s</td><td></td></tr>`, dollars(idle))
	fmt.Fprintf(&b, `<tr class="total"><td class="name">all GPUs</td><td></td><td></td><td></td><td>%s</td><td></td></tr></table></div>`, dollars(alloc+idle))
	b.WriteString(`<p class="note">GPU-hours used are the GPU-hours allocated times the GPU's utilisation; efficiency is used over allocated; unused cost is the part of the cost not used.</p>`)
	return b.String()
}

// byCost returns rows sorted by cost, highest first, then by key.
func byCost(rows []costalloc.Row) []costalloc.Row {
	out := append([]costalloc.Row(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CostCents != out[j].CostCents {
			return out[i].CostCents > out[j].CostCents
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// layer is one band of the stacked chart: cents per bucket.
type layer struct {
	name, color string
	cents       []int64
}

// layers returns the chart's bands, bottom first: the teams of highest cost
// over the window, the other teams together, then idle.
func layers(r *Report) []layer {
	teams := byCost(r.Teams.Rows)
	index := map[string]int{}
	var out []layer
	for i, x := range teams {
		switch {
		case i < maxTeams || len(teams) == maxTeams+1:
			out = append(out, layer{name: x.Key})
		case i == maxTeams:
			out = append(out, layer{name: "other teams"})
		}
		index[x.Key] = len(out) - 1
	}
	out = append(out, layer{name: "idle", color: idleColor})
	for i := range out {
		out[i].cents = make([]int64, len(r.Buckets))
	}
	for k, bk := range r.Buckets {
		for _, x := range bk.Teams.Rows {
			i, ok := index[x.Key]
			if !ok { // a team with 0 GPU-hours over the window cannot hold in a bucket
				i = len(out) - 1
			}
			out[i].cents[k] += x.CostCents
		}
		for _, x := range bk.Teams.Idle {
			out[len(out)-1].cents[k] += x.CostCents
		}
	}
	return out
}

// overTime draws the cost rate by team over the window, stacked, one step
// per bucket, and lists the buckets' costs in a table.
func overTime(r *Report) string {
	if len(r.Buckets) == 0 {
		return ""
	}
	ls := layers(r)
	hoursOf := func(ms int64) float64 { return float64(ms-r.From) / msPerHour }
	lower := make([]float64, len(r.Buckets))
	var series []htmlkit.Series
	for _, l := range ls {
		s := htmlkit.Series{Name: l.name, Color: l.color, BandOpacity: 0.85}
		upper := make([]float64, len(r.Buckets))
		for k, bk := range r.Buckets {
			upper[k] = lower[k] + float64(l.cents[k])/100/(float64(bk.End-bk.Start)/msPerHour)
			s.X = append(s.X, hoursOf(bk.Start), hoursOf(bk.End))
			s.Y = append(s.Y, upper[k], upper[k])
		}
		s.BandX, s.BandY = append([]float64(nil), s.X...), append([]float64(nil), s.Y...)
		for k := len(r.Buckets) - 1; k >= 0; k-- {
			bk := r.Buckets[k]
			s.BandX = append(s.BandX, hoursOf(bk.End), hoursOf(bk.Start))
			s.BandY = append(s.BandY, lower[k], lower[k])
		}
		series = append(series, s)
		lower = upper
	}
	// Ticks on bucket boundaries, at most 6.
	var bounds []int64
	for _, bk := range r.Buckets {
		if bk.Start%r.BucketMs == 0 {
			bounds = append(bounds, bk.Start)
		}
	}
	if last := r.Buckets[len(r.Buckets)-1].End; last%r.BucketMs == 0 {
		bounds = append(bounds, last)
	}
	step := (len(bounds) + 5) / 6
	ticks := []htmlkit.Tick{}
	for i := 0; i < len(bounds); i += max(step, 1) {
		ticks = append(ticks, htmlkit.Tick{V: hoursOf(bounds[i]), Label: tickLabel(bounds[i], r.BucketMs)})
	}
	unit := "hour"
	if r.BucketMs == msPerDay {
		unit = "day"
	}
	var b strings.Builder
	b.WriteString(`<h2>Cost by team over time</h2>`)
	b.WriteString(htmlkit.Chart("GPU cost by team, USD per hour, per "+unit,
		htmlkit.Axis{Label: "UTC", Lo: 0, Hi: hoursOf(r.To), Ticks: ticks},
		htmlkit.Axis{Label: "USD per hour"}, series))
	fmt.Fprintf(&b, `<p class="note">Stacked: each band is one team's cost rate over the %s (its cost divided by the %s's hours), idle capacity on top; the top of the stack is the GPUs' cost rate. Each %s is accounted for on its own: its rows add up to its cost to the cent.</p>`, unit, unit, unit)
	b.WriteString(`<details><summary>Cost per ` + unit + `, USD</summary><div class="wrap"><table id="buckets"><tr><th>` + unit + ` from</th>`)
	for _, l := range ls {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(l.name))
	}
	b.WriteString("<th>total</th></tr>")
	for k, bk := range r.Buckets {
		fmt.Fprintf(&b, "<tr><td>%s</td>", html.EscapeString(stamp(bk.Start, r.BucketMs)))
		for _, l := range ls {
			fmt.Fprintf(&b, "<td>%s</td>", strings.TrimPrefix(dollars(l.cents[k]), "$"))
		}
		fmt.Fprintf(&b, "<td>%s</td></tr>", strings.TrimPrefix(dollars(bk.Teams.AssetCents), "$"))
	}
	b.WriteString("</table></div></details>")
	return b.String()
}

func tickLabel(ms, bucket int64) string {
	t := time.UnixMilli(ms).UTC()
	if bucket == msPerDay {
		return t.Format("Jan 2")
	}
	return t.Format("Jan 2 15:04")
}

func topJobs(r *Report) string {
	jobs := byCost(r.Jobs.Rows)
	var b strings.Builder
	fmt.Fprintf(&b, `<h2>Top jobs</h2><div class="wrap"><table id="jobs"><tr><th>job</th><th>GPU models</th>%s</tr>`, rowHeads)
	for i, x := range jobs {
		if i == TopJobs {
			break
		}
		fmt.Fprintf(&b, `<tr><td class="name">%s</td><td>%s</td>`, html.EscapeString(x.Key), html.EscapeString(strings.Join(x.Models, ", ")))
		rowCells(&b, x)
		b.WriteString("</tr>")
	}
	b.WriteString("</table></div>")
	n := len(jobs)
	fmt.Fprintf(&b, `<p class="note">%d of %d jobs, by cost. A job is namespace/job (its top owner), or namespace/pod for a pod without one.</p>`, min(n, TopJobs), n)
	return b.String()
}

// modelIdle is one GPU model's idle capacity over the window.
type modelIdle struct {
	model               string
	idleH, capH         float64
	idleCents, allCents int64
}

func idleByModel(r *Report) string {
	m := map[string]*modelIdle{}
	get := func(model string) *modelIdle {
		if m[model] == nil {
			m[model] = &modelIdle{model: model}
		}
		return m[model]
	}
	for _, x := range r.Models.Rows {
		a := get(x.Key)
		a.capH += x.GPUHoursAllocated
		a.allCents += x.CostCents
	}
	for _, x := range r.Models.Idle {
		a := get(x.Model)
		a.idleH += x.GPUHours
		a.capH += x.GPUHours
		a.idleCents += x.CostCents
		a.allCents += x.CostCents
	}
	rows := make([]*modelIdle, 0, len(m))
	for _, a := range m {
		rows = append(rows, a)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].idleCents != rows[j].idleCents {
			return rows[i].idleCents > rows[j].idleCents
		}
		return rows[i].model < rows[j].model
	})
	var b strings.Builder
	b.WriteString(`<h2>Idle cost by GPU model</h2><div class="wrap"><table id="idle"><tr><th>GPU model</th><th>GPU-hours</th><th>idle GPU-hours</th><th>idle</th><th>idle cost</th><th>cost</th></tr>`)
	var tot modelIdle
	for _, a := range rows {
		fmt.Fprintf(&b, `<tr><td class="name">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`, html.EscapeString(a.model),
			hours(a.capH), hours(a.idleH), percent(ratio(a.idleH, a.capH)), dollars(a.idleCents), dollars(a.allCents))
		tot.capH += a.capH
		tot.idleH += a.idleH
		tot.idleCents += a.idleCents
		tot.allCents += a.allCents
	}
	fmt.Fprintf(&b, `<tr class="total"><td class="name">all models</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr></table></div>`,
		hours(tot.capH), hours(tot.idleH), percent(ratio(tot.idleH, tot.capH)), dollars(tot.idleCents), dollars(tot.allCents))
	b.WriteString(`<p class="note">Idle: capacity no pod held, whole GPUs and the unheld remainder of shared ones.</p>`)
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Bins is the efficiency histogram's number of bins, each 10 points wide;
// the last includes 100%.
const Bins = 10

// histogramBins returns the GPU-hours allocated to jobs whose efficiency
// falls in each bin.
func histogramBins(jobs []costalloc.Row) []float64 {
	bins := make([]float64, Bins)
	for _, x := range jobs {
		e := x.Efficiency
		if math.IsNaN(e) {
			continue
		}
		i := min(max(int(math.Floor(e*Bins)), 0), Bins-1)
		bins[i] += x.GPUHoursAllocated
	}
	return bins
}

func histogram(r *Report) string {
	bins := histogramBins(r.Jobs.Rows)
	total := 0.0
	for _, v := range bins {
		total += v
	}
	var b strings.Builder
	b.WriteString(`<h2>Efficiency</h2>`)
	if total == 0 {
		b.WriteString(`<p class="note">No pod held a GPU in the window.</p>`)
		return b.String()
	}
	var series []htmlkit.Series
	var ticks []htmlkit.Tick
	for i, v := range bins {
		lo, hi := float64(100*i/Bins), float64(100*(i+1)/Bins)
		series = append(series, htmlkit.Series{Color: "#1f77b4", BandOpacity: 0.85,
			BandX: []float64{lo, hi, hi, lo}, BandY: []float64{0, 0, v, v}})
		ticks = append(ticks, htmlkit.Tick{V: lo, Label: strconv.Itoa(int(lo)) + "%"})
	}
	ticks = append(ticks, htmlkit.Tick{V: 100, Label: "100%"})
	b.WriteString(htmlkit.Chart("GPU-hours allocated by job efficiency",
		htmlkit.Axis{Label: "efficiency (GPU-hours used / allocated) of the job", Lo: 0, Hi: 100, Ticks: ticks},
		htmlkit.Axis{Label: "GPU-hours allocated"}, series))
	b.WriteString(`<div class="wrap"><table id="efficiency"><tr><th>efficiency</th><th>GPU-hours allocated</th><th>share</th></tr>`)
	for i, v := range bins {
		hi := "%)"
		if i == Bins-1 {
			hi = "%]"
		}
		fmt.Fprintf(&b, "<tr><td>[%d%%, %d%s</td><td>%s</td><td>%s</td></tr>", 100*i/Bins, 100*(i+1)/Bins, hi, hours(v), percent(v/total))
	}
	b.WriteString(`</table></div><p class="note">Each job counts with the GPU-hours it held: the bars show where the allocated GPU-hours went, by how well the job used them.</p>`)
	return b.String()
}

// rightsizing is the right-sizing table: the first TopJobs jobs by saving,
// each with the figures it was judged on and the recommendation or the
// reason for none.
func rightsizing(r *Report) string {
	if len(r.Rightsizing) == 0 {
		return ""
	}
	fig := func(v float64, prec int) string {
		if math.IsNaN(v) {
			return "–"
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	var b strings.Builder
	b.WriteString(`<h2>Right-sizing</h2><div class="wrap"><table id="rightsizing"><tr><th>job</th><th>GPU model</th><th>held</th><th>p95 utilisation</th><th>peak MiB</th><th>cost</th><th>recommended</th><th>saving</th><th>why</th></tr>`)
	for i, x := range r.Rightsizing {
		if i == TopJobs {
			break
		}
		rec := x.Recommended
		if rec == "" {
			rec = "–"
		}
		fmt.Fprintf(&b, `<tr><td class="name">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="name">%s</td></tr>`,
			html.EscapeString(x.Job), html.EscapeString(x.Model), html.EscapeString(x.Held), fig(x.UtilP95, 3), fig(x.PeakMiB, 0),
			dollars(x.CostCents), html.EscapeString(rec), dollars(x.SavingCents), html.EscapeString(x.Reason))
	}
	b.WriteString("</table></div>")
	fmt.Fprintf(&b, `<p class="note">%d of %d jobs, by saving (report.json has them all). The smallest MIG profile or milli-GPU share that held the job's p95 utilisation and peak memory (DCGM_FI_DEV_FB_USED), and what it would have saved over the same hours; no headroom.</p>`, min(len(r.Rightsizing), TopJobs), len(r.Rightsizing))
	return b.String()
}
