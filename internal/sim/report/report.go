// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package report renders simulation results: a table for the terminal, one
// JSON object, and a self-contained HTML page with SVG charts (no scripts,
// no network).
package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// Source describes the workload's inputs for a report header.
func Source(nodes, pods string) string { return nodes + " + " + pods }

// WriteJSON writes the report as one indented JSON object, its numbers
// rounded to what was measured, as each field's round tag says
// (writeRounded).
func WriteJSON(w io.Writer, r *engine.Report) error {
	return writeRounded(w, r)
}

// plural writes n things without thousands separators: "1 node",
// "1213 nodes".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// WriteTable writes a per-policy summary table.
func WriteTable(w io.Writer, r *engine.Report) error {
	fmt.Fprintf(w, "gpuplane simulate: %s, %s, %s, %s, mode %s", r.Source, plural(r.Nodes, "node"), plural(r.GPUs, "GPU"), plural(r.Pods, "trace pod"), r.Mode)
	if r.Mode == "fill" && r.Inflate > 0 {
		fmt.Fprintf(w, ", inflate %.2f", r.Inflate)
	} else if r.Mode == "fill" {
		fmt.Fprint(w, ", each pod once")
	}
	if ms := modes(r); len(ms) == 1 {
		fmt.Fprintf(w, ", sharing %s", ms[0])
	} else if len(ms) > 1 {
		fmt.Fprintf(w, ", sharing %s (the first of %d modes in this table; all in the sharing table)", ms[0], len(ms))
	}
	fmt.Fprintf(w, ", %s in %s\n\n", plural(totalRuns(r), "run"), time.Duration(r.WallTime*float64(time.Second)).Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if r.Mode == "fill" {
		fmt.Fprintln(tw, "policy\truns\tGPU alloc %\t± std\tfrag %\tfailed pods\tidle GPUs\tidle USD/h\t")
		for _, s := range r.Summary {
			idle, usd := meanOf(r, s.Policy, func(x engine.Result) float64 { return x.UnallocatedGPUs }), meanOf(r, s.Policy, func(x engine.Result) float64 { return x.IdleUSDPerHour })
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t\n", s.Policy, s.Runs,
				100*s.GPUAllocationRatioMean, 100*s.GPUAllocationRatioStd, 100*s.FragmentationRatioMean, s.FailedPodsMean, idle, usd)
		}
	} else {
		fmt.Fprintln(tw, "policy\truns\ttime-weighted alloc %\tdelay mean h\tdelay p95 h\tdelay max h\tnever started\tidle GPU-h\tidle USD\t")
		for _, s := range r.Summary {
			get := func(f func(*engine.ReplayStats) float64) float64 {
				return meanOf(r, s.Policy, func(x engine.Result) float64 { return f(x.Replay) })
			}
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%s\t%.2f\t%.1f\t%.1f\t%.2f\t\n", s.Policy, s.Runs,
				100*s.TimeWeightedAllocMean, s.QueueDelayMeanSeconds/3600, hours(s.QueueDelayP95Seconds),
				get(func(x *engine.ReplayStats) float64 { return x.QueueDelayMaxSeconds })/3600,
				get(func(x *engine.ReplayStats) float64 { return float64(x.NeverStarted) }),
				get(func(x *engine.ReplayStats) float64 { return x.IdleGPUHours }),
				get(func(x *engine.ReplayStats) float64 { return x.IdleCostUSD }))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeLegend(w, r)
	if err := writeSnapshotPods(w, r); err != nil {
		return err
	}
	if err := writeTeams(w, r); err != nil {
		return err
	}
	if err := writeSharing(w, r); err != nil {
		return err
	}
	writeRecommendation(w, r.Recommendation)
	return nil
}

// writeSnapshotPods writes, for simulate --snapshot, where each pod went
// under each policy: the first seed's node, or its reason to fail, and in
// how many runs it placed.
func writeSnapshotPods(w io.Writer, r *engine.Report) error {
	if len(r.SnapshotPods) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\npods (first seed's node, or why it failed; placed in how many runs):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pod\tpolicy\tnode\tGPUs\tplaced\t")
	for _, p := range r.SnapshotPods {
		where := p.Node
		if where == "" {
			where = "- (" + p.Reason + ")"
		}
		gpus := ""
		for i, g := range p.GPUs {
			if i > 0 {
				gpus += ","
			}
			gpus += fmt.Sprint(g)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t\n", p.Pod, p.Policy, where, gpus, p.Placed, p.Runs)
	}
	return tw.Flush()
}

// writeTeams writes the per-team table of a replay with teams: means over
// each policy's seeds.
func writeTeams(w io.Writer, r *engine.Report) error {
	if len(r.Results) == 0 || len(r.Results[0].Teams) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy	team	pods	GPU-h	borrowed GPU-h	wait mean h	wait p95 h	preemptions	never started	")
	for _, s := range r.Summary {
		for k, team := range r.Results[0].Teams {
			get := func(f func(engine.TeamStats) float64) float64 {
				return meanOf(r, s.Policy, func(x engine.Result) float64 { return f(x.Teams[k]) })
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.2f\t%s\t%.1f\t%.1f\t\n", s.Policy, team.Team, team.Pods,
				get(func(x engine.TeamStats) float64 { return x.GPUHours }), get(func(x engine.TeamStats) float64 { return x.BorrowedGPUHours }),
				get(func(x engine.TeamStats) float64 { return x.WaitMeanSeconds })/3600, hours(get(func(x engine.TeamStats) float64 { return x.WaitP95Seconds })),
				get(func(x engine.TeamStats) float64 { return float64(x.Preemptions) }), get(func(x engine.TeamStats) float64 { return float64(x.NeverStarted) }))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, TeamsLegend)
	for _, team := range r.Results[0].Teams {
		if team.AdmittedUnplaceable > 0 {
			fmt.Fprintf(w, "team %s: %d admissions of pods that fit no node: Kueue admits by quota alone, so each held %s's quota while it waited for a node (docs/simulate.md)\n",
				team.Team, team.AdmittedUnplaceable, team.Team)
		}
	}
	return nil
}

func meanOf(r *engine.Report, policy string, f func(engine.Result) float64) float64 {
	s, n := 0.0, 0
	for _, x := range r.Results {
		if x.Policy == policy {
			s += f(x)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// TeamsLegend says what each column of the per-team table is.
const TeamsLegend = `  GPU-h: GPU-hours its pods ran; borrowed GPU-h: its quota above nominal over time
  wait mean h: of its started pods; wait p95 h: of all its pods, one never started
  waiting without end; preemptions: its workloads preempted; never started: its pods
  that never got quota and a node; means over the seeds`

// fillFacts says, from a fill's results, what its legend cannot: the
// range of fragmentation at the end over the policies, the failed pods
// against the arrived ones, and the arrived GPU demand against the
// capacity (above it, some pods must fail; at or below it, a failure is
// the policy's or the shapes'). "" without results.
func fillFacts(r *engine.Report) string {
	if len(r.Results) == 0 {
		return ""
	}
	fLo, fHi := math.Inf(1), math.Inf(-1)
	failLo, failHi, arrived, demand := math.Inf(1), math.Inf(-1), 0.0, 0.0
	for _, x := range r.Results {
		fLo, fHi = math.Min(fLo, x.FragmentationRatio), math.Max(fHi, x.FragmentationRatio)
		failLo, failHi = math.Min(failLo, float64(x.FailedPods)), math.Max(failHi, float64(x.FailedPods))
		arrived += float64(x.Pods)
		if x.TotalGPUMilli > 0 {
			demand += float64(x.ArrivedGPUMilli) / float64(x.TotalGPUMilli)
		}
	}
	n := float64(len(r.Results))
	arrived, demand = arrived/n, demand/n
	s := fmt.Sprintf("frag %s%% to %s%% at the end; failed %s to %s pods of %s arrived per run; arrived GPU demand %.0f%% of GPU capacity",
		pct(fLo), pct(fHi), podCount(failLo), podCount(failHi), podCount(arrived), 100*demand)
	if demand > 1 {
		return s + fmt.Sprintf(", so at least %.0f%% of it cannot fit", 100*(1-1/demand))
	}
	if failHi > 0 {
		return s + ": the cluster could hold it all, so each failure is the placement's or the pod's shape"
	}
	return s
}

// FillLegend and ReplayLegend say what each column of the summary table
// is, under the table; gpuplane simulate --help prints them too.
const (
	FillLegend = `  GPU alloc %   GPU capacity allocated at the end (allocated, not used); ± std: over the seeds
  frag %        fragmented share of the idle GPU capacity at the end (Weng et al. 2023): high
                at the end of a fill, whatever the policy; compare GPU alloc % or the HTML
                report's curve, not this ("in this run", below, gives the run's range)
  failed pods   pods that fit nowhere on arrival ("in this run", below: how many of the
                arrived pods, and whether the cluster could hold the arrived demand)
  idle GPUs     GPU capacity unallocated at the end; idle USD/h: its price per hour`
	ReplayLegend = `  time-weighted alloc %  GPU capacity allocated over time (allocated, not used)
  delay mean h, max h    queueing delay (creation to start) of the pods that started
  delay p95 h            of every pod, a pod never started counting as waiting without end:
                         "unbounded" when over 5% never started (as --size p95wait counts it)
  never started          pods that never got a node: fit none, deleted while waiting, or
                         still waiting at the end
  idle GPU-h, idle USD   GPU-hours left unallocated over the span, and their cost`
)

// writeLegend writes the summary table's legend and, in replay, a note on
// the pods that never started.
func writeLegend(w io.Writer, r *engine.Report) {
	fmt.Fprintln(w)
	if r.Mode == "fill" {
		fmt.Fprintln(w, FillLegend)
		if l := fillFacts(r); l != "" {
			fmt.Fprintln(w, "  in this run:  "+strings.ReplaceAll(l, "; ", ";\n                "))
		}
		return
	}
	fmt.Fprintln(w, ReplayLegend)
	for _, s := range r.Summary {
		never := meanOf(r, s.Policy, func(x engine.Result) float64 {
			if x.Replay == nil {
				return 0
			}
			return float64(x.Replay.NeverStarted)
		})
		if never > 0 {
			fmt.Fprintf(w, "note: %s: %.1f of %d pods (%.1f%%) never started", s.Policy, never, r.Pods, 100*never/float64(max(1, r.Pods)))
			if math.IsInf(s.QueueDelayP95Seconds, 1) {
				fmt.Fprint(w, ": its p95 wait is unbounded, whatever the started pods waited")
			}
			fmt.Fprintln(w)
		}
	}
}
