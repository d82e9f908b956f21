// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"html"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// css is the simulator report's style beyond htmlkit.CSS.
const css = `.sd{color:#666;font-size:12px}.best{font-weight:bold;background:#eef6ee}` +
	`.nodes{display:flex;flex-wrap:wrap;gap:12px}.nodes figure{margin:0}figcaption{font-size:13px;font-weight:600}` +
	`#failed th:not(:first-child){font-weight:normal;font-size:12px}.params td{text-align:left;white-space:normal;overflow-wrap:anywhere}` +
	`h2.mode{font-size:20px;margin-top:48px;border-bottom:3px solid #1f77b4}`

// HTML renders the report as one self-contained page: no scripts, no
// external resources, charts as inline SVG.
func HTML(r *engine.Report) []byte {
	var b bytes.Buffer
	b.WriteString(htmlkit.Head("gpuplane simulate", css))
	fmt.Fprintf(&b, "<h1>gpuplane simulate: %s experiment</h1>", html.EscapeString(r.Mode))
	fmt.Fprintf(&b, "<p>%s: %s nodes, %s GPUs, %s trace pods; %d runs", html.EscapeString(r.Source), thousands(r.Nodes), thousands(r.GPUs), thousands(r.Pods), totalRuns(r))
	views := modeViews(r)
	if ms := modes(r); len(ms) > 0 && len(views) > 1 {
		fmt.Fprintf(&b, " in %d sharing modes (%s); each mode's summary, charts and node pictures follow the sharing table, mode by mode", len(ms), html.EscapeString(strings.Join(ms, ", ")))
	} else if len(ms) > 0 {
		fmt.Fprintf(&b, " in %d sharing modes (%s); the summary, charts and node pictures are of the first mode, %s", len(ms), html.EscapeString(strings.Join(ms, ", ")), html.EscapeString(ms[0]))
	}
	b.WriteString(".</p>")
	paper, hasPaper := paperFor(r)
	colors := map[string]string{}
	for i, s := range r.Summary {
		colors[s.Policy] = htmlkit.Color(i)
	}
	if len(views) > 1 {
		b.WriteString(recommendationHTML(r.Recommendation))
		b.WriteString(warningsHTML(r.Warnings))
		b.WriteString(sharingSection(r))
		b.WriteString(modesChart(r, views))
		for k, v := range views {
			ms := modes(v)
			fmt.Fprintf(&b, `<section id="%s"><h2 class="mode">Sharing mode %s (%d of %d)</h2>`, modeAnchor(ms[0]), html.EscapeString(ms[0]), k+1, len(views))
			b.WriteString(lead(v))
			var body bytes.Buffer
			// The published values are of the workload as given: fractional.
			sections(&body, v, colors, paper, hasPaper && ms[0] == "fractional")
			b.WriteString(suffixIDs(body.String(), modeAnchor(ms[0])))
			b.WriteString("</section>")
		}
	} else {
		b.WriteString(lead(r))
		b.WriteString(recommendationHTML(r.Recommendation))
		b.WriteString(warningsHTML(r.Warnings))
		b.WriteString(sharingSection(r))
		sections(&b, r, colors, paper, hasPaper)
	}
	b.WriteString(params(r, paper, hasPaper))
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// warningsHTML lists the warnings the run printed on stderr; "" when
// there were none.
func warningsHTML(ws []string) string {
	if len(ws) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<h2>Warnings</h2><p>The run printed %s on stderr:</p><ul id="warnings">`, count(len(ws), "warning"))
	for _, w := range ws {
		b.WriteString("<li>" + html.EscapeString(w) + "</li>")
	}
	b.WriteString("</ul>")
	return b.String()
}

// sections writes the report's sections from the summary to the node
// pictures: of the whole report, or of one --sharing mode (modeViews).
func sections(b *bytes.Buffer, r *engine.Report, colors map[string]string, paper trace.Published, hasPaper bool) {
	b.WriteString("<h2>Summary" + html.EscapeString(firstMode(r)) + "</h2>")
	b.WriteString(summaryTable(r, paper, hasPaper))
	b.WriteString(teamsTable(r, colors))
	b.WriteString(snapshotPodsTable(r))
	if r.Mode == "fill" {
		fillCharts(b, r, colors, paper, hasPaper)
	} else {
		replayCharts(b, r, colors)
	}
	b.WriteString(byModelTable(r))
	b.WriteString(failedTable(r))
	b.WriteString(failedClassesTable(r))
	b.WriteString(nodePictures(r))
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
	if err := atomicfile.Write(filepath.Join(dir, "report.json"), js.Bytes(), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	return path, atomicfile.Write(path, HTML(r), 0o644)
}
