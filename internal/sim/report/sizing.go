// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
)

// WriteSizingJSON writes a sizing report as one indented JSON object.
func WriteSizingJSON(w io.Writer, r *sizing.Report) error {
	return writeRounded(w, r)
}

// metricHeader names a sizing report's metric column.
func metricHeader(r *sizing.Report) string {
	if r.Mode == "fill" {
		return "placed %"
	}
	return "p95 wait min"
}

// metricCell writes a step's metric: placed in percent, or the p95 wait
// in minutes ("inf" when more than 5% of pods never started).
func metricCell(r *sizing.Report, s sizing.Step) string {
	switch {
	case s.Value == nil:
		return "inf"
	case r.Mode == "fill":
		return strconv.FormatFloat(100**s.Value, 'f', 2, 64)
	}
	return strconv.FormatFloat(*s.Value/60, 'f', 1, 64)
}

// sharingName is a result's sharing mode; "" (no --sharing) is the
// workload as given, fractional.
func sharingName(x sizing.Result) string {
	if x.Sharing == "" {
		return "fractional"
	}
	return x.Sharing
}

// SizingLegend says what each column of the --size table is, under the
// table and in gpuplane simulate --help.
const SizingLegend = `  add           the fewest nodes of the node type to add to the cluster as given that
                meet the target (each GPU node type tried alone, as cluster-autoscaler
                grows one node group); nodes: the cluster's nodes then
  GPUs, USD/h   its GPUs and their price per hour, every GPU, idle or not
  placed %      fill: pods placed, each submitted once; p95 wait min: replay, of every pod,
                a pod never started counting as waiting without end ("inf")
  steps         simulations the search ran; "curve searched" lists them`

// seedsText is "1 seed" or "3 seeds".
func seedsText(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// WriteSizingTable writes the answer per policy, then the curve searched.
func WriteSizingTable(w io.Writer, r *sizing.Report) error {
	fmt.Fprintf(w, "gpuplane simulate --size %s: %s, node list of %d nodes, %d trace pods, mode %s, %s, %s\n\n",
		r.Target, r.Source, r.ListNodes, r.Pods, r.Mode, seedsText(r.Seeds), time.Duration(r.WallTime*float64(time.Second)).Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\tsharing\tnode type\tadd\tnodes\tGPUs\tUSD/h\t%s\tsteps\t\n", metricHeader(r))
	for _, x := range r.Results {
		sh := sharingName(x)
		if !x.Reached {
			fmt.Fprintf(tw, "%s\t%s\t%s\tnot reached\t\t\t\t\t%d\t\n", x.Policy, sh, x.NodeType, len(x.Curve))
			continue
		}
		a := x.Answer
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%.2f\t%s\t%d\t\n", x.Policy, sh, x.NodeType, a.Added, a.Nodes, a.GPUs, a.USDPerHour, metricCell(r, a), len(x.Curve))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, SizingLegend)
	for _, l := range notGrownLines(r) {
		fmt.Fprintln(w, l)
	}
	writeRecommendation(w, r.Recommendation)
	if err := writeVendors(w, r.Vendors); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ncurve searched:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\tsharing\tnode type\tadd\tnodes\tGPUs\tUSD/h\t%s\tholds\t\n", metricHeader(r))
	for _, x := range r.Results {
		for _, s := range x.Curve {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%.2f\t%s\t%v\t\n", x.Policy, sharingName(x), x.NodeType, s.Added, s.Nodes, s.GPUs, s.USDPerHour, metricCell(r, s), s.Holds)
		}
	}
	return tw.Flush()
}

// notGrownLines say which node types --size did not grow and which pods
// no node type fits, and why.
func notGrownLines(r *sizing.Report) []string {
	var out []string
	for _, s := range r.Skipped {
		out = append(out, fmt.Sprintf("not grown: %s (%s): %s", s.Type, count(s.Nodes, "node"), s.Why))
	}
	if r.UnfitPods > 0 {
		out = append(out, fmt.Sprintf("%s fit no node type, whatever is added:", count(r.UnfitPods, "pod")))
		for _, u := range r.Unfit {
			out = append(out, "  "+u.Pod+" "+u.Why)
		}
		if r.UnfitPods > len(r.Unfit) {
			out = append(out, fmt.Sprintf("  and %s more", count(r.UnfitPods-len(r.Unfit), "pod")))
		}
	}
	return out
}

// SizingHTML renders a sizing report as one self-contained page: the
// answer per policy, the curve searched as a chart and a table, and the
// parameters.
func SizingHTML(r *sizing.Report) []byte {
	var b bytes.Buffer
	b.WriteString(htmlkit.Head("gpuplane simulate --size", css))
	fmt.Fprintf(&b, "<h1>gpuplane simulate: sizing for %s</h1>", html.EscapeString(r.Target))
	fmt.Fprintf(&b, "<p>%s: the cluster as given (%s nodes), %s trace pods, %s experiment, %s per step.</p>",
		html.EscapeString(r.Source), thousands(r.ListNodes), thousands(r.Pods), html.EscapeString(r.Mode), seedsText(r.Seeds))
	b.WriteString(`<h2>Nodes to add, per node type and policy</h2><div class="wrap"><table id="sizing"><tr><th>policy</th><th>sharing</th><th>node type</th><th>add</th><th>nodes</th><th>GPUs</th><th>USD per hour</th><th>` +
		html.EscapeString(metricHeader(r)) + `</th><th>steps</th></tr>`)
	best := math.Inf(1)
	for _, x := range r.Results {
		if x.Reached {
			best = math.Min(best, x.Answer.USDPerHour)
		}
	}
	for _, x := range r.Results {
		sh := sharingName(x)
		if !x.Reached {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>not reached</td><td></td><td></td><td></td><td></td><td>%d</td></tr>", html.EscapeString(x.Policy), html.EscapeString(sh), html.EscapeString(x.NodeType), len(x.Curve))
			continue
		}
		a := x.Answer
		cls := ""
		if a.USDPerHour == best {
			cls = ` class="best"`
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td%s>%s</td><td>%s</td><td>%s</td><td%s>%s</td><td>%s</td><td>%d</td></tr>", html.EscapeString(x.Policy), html.EscapeString(sh),
			html.EscapeString(x.NodeType), cls, thousands(a.Added), thousands(a.Nodes), thousands(a.GPUs), cls, usd(a.USDPerHour), metricCell(r, a), len(x.Curve))
	}
	b.WriteString("</table></div>")
	b.WriteString(`<p class="note">Each GPU node type of the cluster is grown alone, as cluster-autoscaler grows one node group: nodes of the type are added to the cluster as given (never CPU-only or cordoned nodes, nor a type no pod fits). The search tries adding none, then 1, 2, 4, ... nodes until the target holds, then bisects; it assumes that more nodes never hurt, which placement heuristics do not guarantee, so the whole curve is shown. USD per hour: every GPU of the cluster, idle or not.</p>`)
	if l := notGrownLines(r); len(l) > 0 {
		b.WriteString(`<pre id="not-grown">` + html.EscapeString(strings.Join(l, "\n")) + "</pre>")
	}
	b.WriteString(recommendationHTML(r.Recommendation))
	b.WriteString(vendorsHTML(r.Vendors))
	b.WriteString(warningsHTML(r.Warnings))
	b.WriteString(sizingChart(r))
	b.WriteString(`<h2>Curve searched</h2><div class="wrap"><table id="curve"><tr><th>policy</th><th>sharing</th><th>node type</th><th>add</th><th>nodes</th><th>GPUs</th><th>USD per hour</th><th>` + html.EscapeString(metricHeader(r)) + `</th><th>holds</th></tr>`)
	for _, x := range r.Results {
		for _, s := range x.Curve {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%v</td></tr>", html.EscapeString(x.Policy), html.EscapeString(sharingName(x)), html.EscapeString(x.NodeType), thousands(s.Added), thousands(s.Nodes), thousands(s.GPUs), usd(s.USDPerHour), metricCell(r, s), s.Holds)
		}
	}
	b.WriteString("</table></div>")
	var pb strings.Builder
	row := func(k, v string) {
		fmt.Fprintf(&pb, "<tr><th>%s</th><td>%s</td></tr>", html.EscapeString(k), html.EscapeString(v))
	}
	row("target", r.Target)
	row("experiment", r.Mode)
	for _, in := range r.Inputs {
		v := in.Name
		if in.SHA256 != "" {
			v += " (SHA-256 " + in.SHA256 + ")"
		}
		row(in.Role, v)
	}
	if p := r.Params; p != nil {
		row("seeds", fmt.Sprintf("%d from %d", p.Seeds, p.FirstSeed))
		row("tie-break", p.TieBreak)
		row("popularity", strconv.FormatFloat(p.Popularity, 'g', -1, 64))
	}
	if r.Version != "" {
		row("version", r.Version)
	}
	row("wall time", fmt.Sprintf("%.2f s", r.WallTime))
	b.WriteString(`<h2>Run parameters</h2><div class="wrap"><table class="params" id="params">` + pb.String() + "</table></div>")
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// sizingChart draws each policy's metric against the node count, its
// answer as a diamond and the target as a grey line. Steps with an
// infinite wait are left out of the lines.
func sizingChart(r *sizing.Report) string {
	var series, marks []htmlkit.Series
	lo, hi := math.Inf(1), math.Inf(-1)
	val := func(v float64) float64 {
		if r.Mode == "fill" {
			return 100 * v
		}
		return v / 60
	}
	for i, x := range r.Results {
		c := htmlkit.Color(i)
		name := x.Policy
		if x.Sharing != "" {
			name += " (" + x.Sharing + ")"
		}
		if x.NodeType != "" {
			name += " + " + x.NodeType
		}
		s := htmlkit.Series{Name: name, Color: c}
		for _, st := range x.Curve {
			lo, hi = math.Min(lo, float64(st.Nodes)), math.Max(hi, float64(st.Nodes))
			if st.Value != nil {
				s.X, s.Y = append(s.X, float64(st.Nodes)), append(s.Y, val(*st.Value))
			}
		}
		if len(s.X) == 0 {
			continue
		}
		series = append(series, s)
		if x.Reached && x.Answer.Value != nil {
			marks = append(marks, htmlkit.Series{Color: c, X: []float64{float64(x.Answer.Nodes)}, Y: []float64{val(*x.Answer.Value)}, Marks: true})
		}
	}
	if len(series) == 0 {
		return ""
	}
	t, err := sizing.ParseTarget(r.Target)
	if err == nil {
		series = append(series, htmlkit.Series{Name: "target", Color: "#000", X: []float64{lo, hi}, Y: []float64{val(t.Value), val(t.Value)}})
	}
	xa := htmlkit.Axis{Label: "nodes", Log: hi >= 8*lo}
	ya := htmlkit.Axis{Label: "pods placed, %"}
	title := "Pods placed against cluster size"
	if r.Mode != "fill" {
		ya.Label, title = "p95 waiting time, min", "p95 waiting time against cluster size"
	}
	return "<h2>The curve</h2>" + htmlkit.Chart(title+" (diamond: the answer)", xa, ya, append(series, marks...)) +
		`<p class="note">Each point is one step of the search: a full simulation, mean over seeds. A step where more than 5% of pods never started has an infinite p95 wait and no point.</p>`
}

// WriteSizingHTML writes index.html and report.json of a sizing report
// into dir (created if needed), each all or nothing, and returns the HTML
// file's path.
func WriteSizingHTML(dir string, r *sizing.Report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var js bytes.Buffer
	if err := WriteSizingJSON(&js, r); err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(dir, "report.json"), js.Bytes(), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	return path, atomicfile.Write(path, SizingHTML(r), 0o644)
}
