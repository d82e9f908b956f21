// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// sharingNote defines the sharing table's columns, for the table and the
// HTML section.
const sharingNote = `Every mode sees the same pods arrive. Served: the GPU demand the placed pods asked for (milli-GPU as the trace gives them, not what they hold), % of the arrived demand and in GPUs; the recommendation ranks by it, then by pods placed. Padding (waste): what the placed pods hold beyond what they asked, a share padded to a whole GPU (exclusive), a MIG instance or a replica larger than the share. USD/served GPU-h: the GPUs holding a pod, per GPU of demand served. GPU alloc: allocated / total GPU capacity (fill: at the end; replay: time-weighted), where a whole GPU counts 1, a share its milli-GPU, a MIG instance its compute slices/7, a time-slicing replica 1/N. GPUs needed: GPUs holding at least one pod (fill: at the end; replay: the peak), priced in USD per hour. Shared pods ran on a GPU with another pod. Isolation: exclusive and MIG isolate in hardware; time-slicing isolates nothing; fractional shares are enforced by nothing on the GPU but the scheduler's accounting (DRA with an MPS configuration enforces compute and memory limits: on an H200 two 50% shares ran at 48% + 48% of one process alone, and a 24 GiB allocation under a 20 GiB limit was refused). Training pods: pods of whole GPUs (the traces have no job-type column); they take whole GPUs in every mode, so none shares a GPU.`

// writeSharing writes the sharing-mode table of a report with Sharing.
func writeSharing(w io.Writer, r *engine.Report) error {
	if r.Sharing == nil {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "sharing\tpolicy\truns\tplaced\tfailed\tserved %\tserved GPUs\tpadding GPUs\tGPU alloc %\tGPUs needed\tUSD/h\tUSD/served GPU-h\t"
	if r.Mode == "replay" {
		head += "wait mean h\twait p95 h\t"
	}
	fmt.Fprintln(tw, head+"shared pods\ttraining on shared GPU %\t")
	for _, row := range r.Sharing.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.2f\t%.1f\t%.1f\t%.2f\t%.1f\t%.2f\t%.2f\t", row.Sharing, row.Policy, row.Runs,
			row.PlacedPods, row.FailedPods, 100*row.ServedRatio, row.ServedGPUs, row.PaddingGPUs,
			100*row.GPUAllocationRatio, row.GPUsNeeded, row.USDPerHour, row.USDPerServedGPUHour)
		if r.Mode == "replay" {
			fmt.Fprintf(tw, "%s\t%s\t", hours(row.QueueDelayMeanSeconds), hours(row.QueueDelayP95Seconds))
		}
		fmt.Fprintf(tw, "%.1f\t%.2f\t\n", row.SharedPods, 100*ratio(row.TrainingOnSharedGPU, row.TrainingPods))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range migLayoutLines(r.Sharing.MIGLayouts) {
		fmt.Fprintln(w, l)
	}
	for _, l := range partitionLines(r.Sharing.Partitions) {
		fmt.Fprintln(w, l)
	}
	for _, l := range isolationLines(r) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, SharingLegend)
	return nil
}

// SharingLegend says what each column of the sharing table is, under the
// table and in gpuplane simulate --help.
const SharingLegend = `  placed, failed   pods placed (fill) or started (replay); pods failed or never started
  served %, GPUs   GPU demand the placed pods asked for (not what they hold): % of the
                   arrived demand (the same in every mode), and in GPUs; ranked on
  padding GPUs     waste: what placed pods hold beyond their ask (a share padded to a GPU)
  GPU alloc %      allocated / total GPU capacity (fill: at the end; replay: over time): a
                   share counts its milli-GPU, a MIG instance slices/7, a replica 1/N
  GPUs needed      GPUs holding a pod (fill: at the end; replay: the peak); USD/h: their price
  USD/served GPU-h USD/h of the GPUs needed per GPU of demand served
  wait mean, p95   replay: mean of the started pods; p95 of every pod (never started: no end)
  shared pods      pods on a GPU with another pod (MIG isolates; time-slicing does not)
  training on shared GPU %  pods of whole GPUs on a GPU with another pod: 0 by construction`

// modes lists the sharing modes of a report's sharing rows, in order.
func modes(r *engine.Report) []string {
	var out []string
	if r.Sharing == nil {
		return nil
	}
	for _, row := range r.Sharing.Rows {
		if len(out) == 0 || out[len(out)-1] != row.Sharing {
			out = append(out, row.Sharing)
		}
	}
	return out
}

// totalRuns is the number of runs a report holds: with --sharing, every
// mode's (Results hold the first mode's only).
func totalRuns(r *engine.Report) int {
	if r.Sharing == nil || len(r.Sharing.Rows) == 0 {
		return len(r.Results)
	}
	n := 0
	for _, row := range r.Sharing.Rows {
		n += row.Runs
	}
	return n
}

// firstMode labels the sections of a --sharing report that show the first
// mode only: " (sharing exclusive, the first of 3 modes; the sharing table
// compares all)"; "" without --sharing.
func firstMode(r *engine.Report) string {
	ms := modes(r)
	if len(ms) == 0 {
		return ""
	}
	if len(ms) == 1 {
		return " (sharing " + ms[0] + ")"
	}
	return fmt.Sprintf(" (sharing %s, the first of %d modes; the Sharing modes table compares all)", ms[0], len(ms))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// sharingTables writes the sharing rows as two tables that fit a narrow
// window: what each mode and policy serves (the ranking), then what it
// holds (allocation, GPUs, waits, shared pods).
func sharingTables(b *strings.Builder, r *engine.Report) {
	b.WriteString(`<div class="wrap"><table id="sharing"><tr><th>sharing</th><th>policy</th><th>runs</th><th>placed</th><th>failed</th><th>served %</th><th>served GPUs</th><th>padding GPUs (waste)</th><th>USD/served GPU-h</th></tr>`)
	for _, row := range r.Sharing.Rows {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			html.EscapeString(row.Sharing), html.EscapeString(row.Policy), row.Runs, num1(row.PlacedPods), num1(row.FailedPods),
			pct(row.ServedRatio), num1(row.ServedGPUs), num1(row.PaddingGPUs), usd(row.USDPerServedGPUHour))
	}
	b.WriteString(`</table></div><p>What each holds:</p><div class="wrap"><table id="sharing-held"><tr><th>sharing</th><th>policy</th><th>GPU alloc %</th><th>GPUs needed</th><th>USD/h</th>`)
	if r.Mode == "replay" {
		b.WriteString(`<th>mean wait</th><th>p95 wait</th>`)
	}
	b.WriteString(`<th>shared pods</th><th>training on shared GPU %</th></tr>`)
	for _, row := range r.Sharing.Rows {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", html.EscapeString(row.Sharing), html.EscapeString(row.Policy),
			pct(row.GPUAllocationRatio), num1(row.GPUsNeeded), usd(row.USDPerHour))
		if r.Mode == "replay" {
			fmt.Fprintf(b, "<td>%s</td><td>%s</td>", duration(row.QueueDelayMeanSeconds), duration(row.QueueDelayP95Seconds))
		}
		fmt.Fprintf(b, "<td>%s</td><td>%s</td></tr>", num1(row.SharedPods), pct(ratio(row.TrainingOnSharedGPU, row.TrainingPods)))
	}
	b.WriteString(`</table></div>`)
}

// isolationLines says what each mode of the report isolates, one line per
// mode (engine.Isolation).
func isolationLines(r *engine.Report) []string {
	var out []string
	for _, m := range modes(r) {
		if iso := engine.Isolation(m); iso != "" {
			out = append(out, fmt.Sprintf("isolation (%s): %s", m, iso))
		}
	}
	return out
}

// migLayoutLines describes the MIG layouts of the mig mode, one line per
// model and layout.
func migLayoutLines(ls []engine.MIGLayoutUse) []string {
	var out []string
	for _, l := range ls {
		nodes := fmt.Sprintf("%d nodes", l.Nodes)
		if l.Nodes == 1 {
			nodes = "1 node"
		}
		if l.GPULayouts == nil {
			out = append(out, fmt.Sprintf("MIG layout (%s): %s, %s: %d of %d GPUs each as %s", l.Source, l.Model, nodes,
				l.MIGGPUsPerNode, l.GPUsPerNode, engine.LayoutText(l.Layout)))
			continue
		}
		var says []string
		for _, g := range l.Groups() {
			if g.Layout != nil {
				says = append(says, engine.GPUList(g.GPUs)+" as "+engine.LayoutText(g.Layout))
			}
		}
		out = append(out, fmt.Sprintf("MIG layout (%s): %s, %s: %d of %d GPUs: %s", l.Source, l.Model, nodes,
			l.MIGGPUsPerNode, l.GPUsPerNode, strings.Join(says, "; ")))
	}
	return out
}

// partitionLines says, for each partition mode's run and AMD model, how
// its nodes were laid out and which pods cannot run there or see
// partitions for devices.
func partitionLines(ps []engine.PartitionUse) []string {
	var out []string
	for _, u := range ps {
		nodes := fmt.Sprintf("%d nodes", u.Nodes)
		if u.Nodes == 1 {
			nodes = "1 node"
		}
		if u.Partition == "" {
			out = append(out, fmt.Sprintf("%s: %s, %s: left as the node list gives them: %s", u.Sharing, u.Model, nodes, u.NoMode))
			continue
		}
		devices := fmt.Sprintf("%d devices", u.DevicesPerNode)
		if u.DevicesPerNode == 1 {
			devices = "1 device"
		}
		l := fmt.Sprintf("%s: %s, %s of %s: %d GPUs (partitions) a node, each of %s MiB at %s USD/h", u.Sharing, u.Model, nodes,
			devices, u.GPUsPerNode, thousands(int(u.GPUMemoryMiB)), strconv.FormatFloat(u.USDPerGPUHour, 'f', -1, 64))
		if u.SharesTooLarge > 0 {
			l += fmt.Sprintf("; %s of the workload's %s pods ask more than %d milli-GPU of one GPU, which no partition holds: they cannot run on these nodes", thousands(u.SharesTooLarge), thousands(u.Pods), u.MaxShareMilli)
		}
		if per := u.GPUsPerNode / max(1, u.DevicesPerNode); u.WholePods > 0 && per > 1 {
			l += fmt.Sprintf("; %s pods of whole GPUs take %d partitions per GPU asked here, each a GPU to them", thousands(u.WholePods), per)
		}
		out = append(out, l)
	}
	return out
}

// sharingSection is the HTML section of a report with Sharing.
func sharingSection(r *engine.Report) string {
	if r.Sharing == nil {
		return ""
	}
	var b strings.Builder
	ms := modes(r)
	fmt.Fprintf(&b, `<h2>Sharing modes</h2><p>%d modes, %d runs: %s. Every mode and policy, means over the seeds:</p>`, len(ms), totalRuns(r), html.EscapeString(strings.Join(ms, ", ")))
	sharingTables(&b, r)
	b.WriteString(`<p class="note">` + html.EscapeString(sharingNote) + `</p>`)
	for _, l := range isolationLines(r) {
		b.WriteString(`<p class="note">` + html.EscapeString(l) + `</p>`)
	}
	for _, l := range migLayoutLines(r.Sharing.MIGLayouts) {
		b.WriteString(`<p class="note">` + html.EscapeString(l) + `</p>`)
	}
	for _, l := range partitionLines(r.Sharing.Partitions) {
		b.WriteString(`<p class="note">` + html.EscapeString(l) + `</p>`)
	}
	if len(r.Sharing.Modes) > 1 {
		b.WriteString(`<p>Each mode's summary, charts, failed pods and nodes:`)
		for k, m := range r.Sharing.Modes {
			sep := ","
			if k == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, `%s <a href="#%s">%s</a>`, sep, modeAnchor(m.Sharing), html.EscapeString(m.Sharing))
		}
		b.WriteString(".</p>")
	}
	return b.String()
}

// modeLabel labels a section that shows the first --sharing mode only:
// " (sharing exclusive)"; "" without --sharing.
func modeLabel(r *engine.Report) string {
	if ms := modes(r); len(ms) > 0 {
		return " (sharing " + ms[0] + ")"
	}
	return ""
}

// modeViews returns, for a report with every --sharing mode's runs
// (SharingReport.Modes), one report per mode: the report with that mode's
// results, summary and sharing rows, and the snapshot's pods in the first
// only (they are the first mode's). Nil without them.
func modeViews(r *engine.Report) []*engine.Report {
	if r.Sharing == nil || len(r.Sharing.Modes) == 0 {
		return nil
	}
	var out []*engine.Report
	for k, m := range r.Sharing.Modes {
		v := *r
		v.Results, v.Summary = m.Results, m.Summary
		v.Sharing = &engine.SharingReport{}
		for _, row := range r.Sharing.Rows {
			if row.Sharing == m.Sharing {
				v.Sharing.Rows = append(v.Sharing.Rows, row)
			}
		}
		if len(v.Sharing.Rows) == 0 {
			v.Sharing.Rows = []engine.SharingRow{{Sharing: m.Sharing}}
		}
		if k > 0 {
			v.SnapshotPods = nil
		}
		out = append(out, &v)
	}
	return out
}

// modeAnchor is the id of a sharing mode's section: "mode-timeslice-2".
func modeAnchor(mode string) string {
	return "mode-" + strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			return c
		}
		return '-'
	}, strings.ToLower(mode))
}

// suffixIDs makes the element ids of one mode's sections unique on the
// page: id="summary" becomes id="summary-mode-mig".
func suffixIDs(s, anchor string) string {
	return idAttr.ReplaceAllString(s, `id="${1}-`+anchor+`"`)
}

var idAttr = regexp.MustCompile(`id="([^"]*)"`)

// modesChart draws, for one policy (the recommendation's, else the first),
// its GPU allocation in every --sharing mode on one chart: fill, against
// arrived demand; replay, over trace time; each mode's mean over its seeds
// with the band from its lowest to its highest seed. "" with fewer than
// two modes with curves.
func modesChart(r *engine.Report, views []*engine.Report) string {
	if len(views) < 2 || len(r.Summary) == 0 || (r.Mode == "fill" && r.Inflate == 0) {
		return ""
	}
	policy := r.Summary[0].Policy
	if rec := r.Recommendation; rec != nil && rec.Policy != "" {
		policy = rec.Policy
	}
	var series []htmlkit.Series
	for k, v := range views {
		var cs []curve
		for _, x := range runsOf(v, policy) {
			var c curve
			if r.Mode == "fill" {
				for _, pt := range x.Curve {
					c.x, c.y = append(c.x, 100*pt.ArrivedRatio), append(c.y, 100*pt.AllocationRatio)
				}
			} else if x.Replay != nil {
				for _, pt := range x.Replay.Timeline {
					c.x, c.y = append(c.x, pt.Seconds/86400), append(c.y, 100*pt.AllocationRatio)
				}
			}
			if len(c.x) > 0 {
				cs = append(cs, c)
			}
		}
		if len(cs) > 0 {
			series = append(series, meanSeries(modes(v)[0], htmlkit.Color(k), cs, r.Mode != "fill", math.Inf(-1)))
		}
	}
	if len(series) < 2 {
		return ""
	}
	xa := htmlkit.Axis{Label: "arrived GPU demand, % of GPU capacity"}
	if r.Mode != "fill" {
		xa = htmlkit.Axis{Label: "trace time, days"}
	}
	return "<h2>GPU allocation by sharing mode (" + html.EscapeString(policy) + ")</h2>" +
		htmlkit.Chart(policy+": GPU allocation ratio per mode (mean over seeds, band: seeds' range)", xa, htmlkit.Axis{Label: "GPU allocation ratio, %"}, series) +
		`<p class="note">One line per sharing mode, in the mode's colour; a share counts its milli-GPU, a MIG instance its compute slices/7, a replica 1/N. Each mode's own section below has every policy.</p>`
}
