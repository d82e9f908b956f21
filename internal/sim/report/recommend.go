// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// candidate is one policy (and sharing mode) a recommendation ranks.
type candidate struct {
	policy, sharing string
	runs            int
	// alloc (0..1) and p95 (seconds) are means over the seeds, with their
	// population standard deviations.
	alloc, allocSD float64
	p95, p95SD     float64
	// served (0..1) is the GPU demand served over the arrived demand, with
	// its standard deviation; placed and arrived are pods; servedGPUs the
	// demand served in GPUs; usdServed the USD per hour of the GPUs holding
	// a pod per served GPU (--sharing rows; 0: not known); isolation what
	// the mode isolates.
	served, servedSD float64
	placed, arrived  float64
	servedGPUs       float64
	usdServed        float64
	isolation        string
	// idleGPUs, idleUSDh: what is left unallocated and its price per hour.
	idleGPUs, idleUSDh float64
}

// Verdicts of a recommendation (engine.Recommendation.Verdict).
const (
	VerdictRecommended = "recommended"
	VerdictTie         = "tie"
	VerdictInfeasible  = "infeasible"
)

// Recommend is the decision a simulation supports: of its policies (and,
// with --sharing, its sharing modes) the best for the experiment's goal at
// equal arrived demand, fill: the most GPU demand served (the milli-GPU
// the placed pods asked for, not what they hold), then the most pods
// placed, then the fewest USD per served GPU-hour; replay: the lowest p95
// wait (engine.P95Wait) first. A report without served figures (none
// recorded) ranks by GPU allocation instead. When every policy of the
// chosen mode places the same pods and serves the same demand the verdict
// is a tie (keep yours); when the choice places fewer than half the
// arrived pods the configuration is infeasible and nothing is
// recommended. The cluster is nodes, the one simulated, priced at price
// (USD per GPU-hour of a model). It returns nil for a report without
// results.
func Recommend(r *engine.Report, nodes []trace.NodeSpec, price func(model string) float64) *engine.Recommendation {
	cluster, n, gpus, usdh := clusterOf(nodes, price)
	cs := candidates(r, gpus, usdh)
	if len(cs) == 0 {
		return nil
	}
	replay := r.Mode == "replay"
	byServed := servedKnown(cs)
	rank(cs, replay, byServed)
	a := cs[0]
	rec := &engine.Recommendation{Verdict: VerdictRecommended, Policy: a.policy, Sharing: a.sharing, Isolation: a.isolation,
		Cluster: cluster, Nodes: n, GPUs: gpus, USDPerHour: usdh, USDPerMonth: usdh * engine.HoursPerMonth,
		IdleGPUs: a.idleGPUs, IdleUSDPerMonth: a.idleUSDh * engine.HoursPerMonth,
		PlacedPods: a.placed, ArrivedPods: a.arrived, ServedRatio: a.served}
	if a.servedGPUs > 0 && !replay { // replay's served demand sums starts, not GPU-hours
		rec.USDPerServedGPUHour = usdh / a.servedGPUs
	}
	name := func(c candidate) string {
		if r.Sharing == nil {
			return c.policy
		}
		return c.policy + " (" + c.sharing + ")"
	}
	byWait := replay && len(cs) > 1 && cs[0].p95 != cs[1].p95
	setGoal(rec, a, replay, byWait, byServed)
	if len(cs) == 1 {
		rec.Reason = fmt.Sprintf("%s is the only candidate: nothing to compare it with.", name(a))
	} else {
		compare(rec, a, cs[1], replay, byWait, byServed, name)
	}
	if a.arrived > 0 && a.placed < a.arrived/2 && (replay || a.alloc < 0.5) {
		infeasible(rec, a, replay, name)
	} else if tie := tied(cs, replay); len(tie) > 1 {
		modeWhy := ""
		for _, c := range cs {
			if c.sharing != a.sharing {
				compare(rec, a, c, replay, byWait, byServed, name)
				modeWhy = rec.Reason
				break
			}
		}
		sayTie(rec, tie, modeWhy)
	}
	return rec
}

// servedKnown reports whether the candidates carry served demand (runs of
// this version; a report built by hand may have none).
func servedKnown(cs []candidate) bool {
	for _, c := range cs {
		if c.served > 0 || c.placed > 0 {
			return true
		}
	}
	return false
}

// candidates are the policies (and, with --sharing, sharing modes) of r
// with what a recommendation ranks them by, on a cluster of gpus GPUs
// priced usdh USD per hour.
func candidates(r *engine.Report, gpus int, usdh float64) []candidate {
	var cs []candidate
	if r.Sharing != nil && len(r.Sharing.Rows) > 0 {
		for _, row := range r.Sharing.Rows {
			idle := (1 - row.GPUAllocationRatio) * float64(gpus)
			cs = append(cs, candidate{policy: row.Policy, sharing: row.Sharing, runs: row.Runs,
				alloc: row.GPUAllocationRatio, allocSD: row.GPUAllocationRatioStd,
				p95: row.QueueDelayP95Seconds, p95SD: row.QueueDelayP95StdSeconds,
				served: row.ServedRatio, servedSD: row.ServedRatioStd, placed: row.PlacedPods, arrived: row.ArrivedPods,
				servedGPUs: row.ServedGPUs, usdServed: row.USDPerServedGPUHour, isolation: row.Isolation,
				idleGPUs: idle, idleUSDh: (1 - row.GPUAllocationRatio) * usdh})
		}
		return cs
	}
	for _, s := range r.Summary {
		c := candidate{policy: s.Policy, sharing: "fractional", runs: s.Runs, isolation: engine.Isolation("fractional"),
			served: s.ServedRatioMean, servedSD: s.ServedRatioStd, placed: s.PlacedPodsMean, arrived: s.ArrivedPodsMean, servedGPUs: s.ServedGPUsMean}
		if r.Mode == "replay" {
			a := statOf(r, s.Policy, replayOf(func(x *engine.ReplayStats) float64 { return x.TimeWeightedAllocationRatio }))
			p := statOf(r, s.Policy, replayOf(func(x *engine.ReplayStats) float64 { return x.QueueDelayP95Seconds }))
			c.alloc, c.allocSD, c.p95, c.p95SD = a.Mean, a.Std, p.Mean, p.Std
			c.idleGPUs = (1 - a.Mean) * float64(gpus)
			c.idleUSDh = statOf(r, s.Policy, replayOf(func(x *engine.ReplayStats) float64 {
				if x.SpanSeconds <= 0 {
					return 0
				}
				return x.IdleCostUSD / (x.SpanSeconds / 3600)
			})).Mean
		} else {
			c.alloc, c.allocSD = s.GPUAllocationRatioMean, s.GPUAllocationRatioStd
			c.idleGPUs, c.idleUSDh = s.UnallocatedGPUsMean, s.IdleUSDPerHourMean
		}
		cs = append(cs, c)
	}
	return cs
}

// rank orders cs best first: replay by p95 wait first; then, byServed, by
// GPU demand served, pods placed and USD per served GPU-hour (lower
// first; 0, unknown, last); then by GPU allocation.
func rank(cs []candidate, replay, byServed bool) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if replay && a.p95 != b.p95 {
			return a.p95 < b.p95
		}
		if byServed {
			if !same(a.served, b.served) {
				return a.served > b.served
			}
			if !same(a.placed, b.placed) {
				return a.placed > b.placed
			}
			if a.usdServed != b.usdServed && (a.usdServed == 0) != (b.usdServed == 0) {
				return b.usdServed == 0
			}
			if a.usdServed != b.usdServed {
				return a.usdServed < b.usdServed
			}
		}
		return a.alloc > b.alloc
	})
}

// podCount writes a mean count of pods: whole, with thousands separators,
// else to one decimal.
func podCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e15 {
		return num1(v)
	}
	if v == math.Trunc(v) {
		return thousands(int(v))
	}
	return tenths(v)
}

// same reports whether two means are equal but for float noise.
func same(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// setGoal writes the goal the recommendation serves and a's value for it.
func setGoal(rec *engine.Recommendation, a candidate, replay, byWait, byServed bool) {
	const served = "most arrived GPU demand served, then most pods placed"
	switch {
	case !replay && byServed:
		rec.Goal, rec.Unit, rec.Value = served+", at the end of the fill", "points of arrived GPU demand served (%)", 100*a.served
	case !replay:
		rec.Goal, rec.Unit, rec.Value = "highest GPU allocation ratio at the end of the fill", "points of GPU allocation (%)", 100*a.alloc
	case byWait:
		rec.Goal, rec.Unit, rec.Value = "lowest p95 wait, then "+served, "seconds of p95 wait", a.p95
	case byServed:
		rec.Goal, rec.Unit, rec.Value = "lowest p95 wait, then "+served, "points of arrived GPU demand served (%)", 100*a.served
	default:
		rec.Goal, rec.Unit, rec.Value = "lowest p95 wait, then highest time-weighted GPU allocation", "points of time-weighted GPU allocation (%)", 100*a.alloc
	}
}

// compare writes how a, the choice, stands against b, the runner-up: the
// margin, its spread, whether it is significant, and the reason in words.
func compare(rec *engine.Recommendation, a, b candidate, replay, byWait, byServed bool, name func(candidate) string) {
	rec.RunnerUpPolicy, rec.RunnerUpSharing = b.policy, b.sharing
	switch {
	case byWait:
		rec.RunnerUpValue, rec.Margin, rec.Spread = b.p95, b.p95-a.p95, a.p95SD+b.p95SD
	case byServed:
		rec.RunnerUpValue, rec.Margin, rec.Spread = 100*b.served, 100*(a.served-b.served), 100*(a.servedSD+b.servedSD)
	default:
		rec.RunnerUpValue, rec.Margin, rec.Spread = 100*b.alloc, 100*(a.alloc-b.alloc), 100*(a.allocSD+b.allocSD)
	}
	runs := min(a.runs, b.runs)
	// 1e-9: float noise is no margin; nor is one below what the report
	// prints (0.01 points, 1 s of wait): nobody can act on it.
	least := 0.005
	if byWait {
		least = 0.5
	}
	rec.Significant = runs > 1 && rec.Margin > rec.Spread+1e-9 && rec.Margin >= least
	var why string
	switch {
	case byWait:
		why = fmt.Sprintf("%s keeps the p95 wait at %s, %s less than %s (%s)", name(a), duration(a.p95), duration(rec.Margin), name(b), duration(b.p95))
		if math.IsInf(b.p95, 1) {
			why = fmt.Sprintf("%s keeps the p95 wait at %s, while over 5%% of pods never start under %s (p95 unbounded)", name(a), duration(a.p95), name(b))
		}
	case replay && !byServed:
		why = fmt.Sprintf("%s and %s have the same p95 wait (%s); %s allocates %s%% over time, %s points more", name(a), name(b), duration(a.p95), name(a), pct(a.alloc), shown(a.alloc, b.alloc))
	case byServed:
		why = servedWhy(a, b, name)
		if replay {
			why = fmt.Sprintf("%s and %s have the same p95 wait (%s); ", name(a), name(b), duration(a.p95)) + why
		}
	default:
		why = fmt.Sprintf("%s allocates %s%% of GPU capacity, %s points more than %s (%s%%)", name(a), pct(a.alloc), shown(a.alloc, b.alloc), name(b), pct(b.alloc))
	}
	rec.Reason = why + "; " + significance(rec, runs, byWait)
	if replay && math.IsInf(a.p95, 1) {
		rec.Reason += " Over 5% of pods never start under every candidate: the cluster is too small for the trace (size it with --size 'p95wait<=10m')."
	}
}

// servedWhy says how a serves more than b: demand served, pods placed,
// then (when those tie) USD per served GPU-hour.
func servedWhy(a, b candidate, name func(candidate) string) string {
	why := fmt.Sprintf("%s serves %s%% of the arrived GPU demand and places %s of %s pods, against %s%% and %s for %s",
		name(a), pct(a.served), podCount(a.placed), podCount(a.arrived), pct(b.served), podCount(b.placed), name(b))
	if same(a.served, b.served) && same(a.placed, b.placed) && a.usdServed > 0 && b.usdServed > 0 && usd(a.usdServed) != usd(b.usdServed) {
		why += fmt.Sprintf("; it costs %s USD per served GPU-hour against %s", usd(a.usdServed), usd(b.usdServed))
	}
	return why
}

// tied returns the candidates of the best's sharing mode that place the
// same pods and serve the same demand as it (and, in replay, wait as
// long), the best first; one candidate when none ties with it.
func tied(cs []candidate, replay bool) []candidate {
	a := cs[0]
	var out []candidate
	for _, c := range cs {
		if c.sharing != a.sharing {
			continue
		}
		if math.Abs(c.served-a.served) > 1e-6 || math.Abs(c.placed-a.placed) > 1e-6 || (replay && c.p95 != a.p95) {
			return nil // a policy of the mode differs: no tie
		}
		out = append(out, c)
	}
	if !servedKnown(out) {
		return nil
	}
	return out
}

// sayTie makes rec say that no policy differs: keep yours, with the spread
// of the tied candidates; across modes the mode is still chosen, for
// modeWhy (the comparison with the best of another mode; "": one mode).
func sayTie(rec *engine.Recommendation, tie []candidate, modeWhy string) {
	lo, hi, sd := tie[0].alloc, tie[0].alloc, 0.0
	var names []string
	for _, c := range tie {
		lo, hi, sd = math.Min(lo, c.alloc), math.Max(hi, c.alloc), math.Max(sd, c.servedSD)
		names = append(names, c.policy)
	}
	rec.Verdict, rec.Policy = VerdictTie, ""
	if modeWhy == "" {
		rec.RunnerUpPolicy, rec.RunnerUpSharing, rec.RunnerUpValue, rec.Margin, rec.Significant = "", "", 0, 0, false
		rec.Spread = 100 * sd
	}
	why := fmt.Sprintf("no policy differs on this workload: keep yours. %s each place %s of %s pods and serve %s%% of the arrived GPU demand (spread over the policies: 0.00 points; GPU allocation %s%% to %s%%; seeds' spread %.2f points).",
		strings.Join(names, ", "), podCount(tie[0].placed), podCount(tie[0].arrived), pct(tie[0].served), pct(lo), pct(hi), 100*sd)
	if modeWhy != "" {
		why = "Sharing " + tie[0].sharing + " is the best mode: " + modeWhy + " Within it, " + why
	}
	rec.Reason = why
}

// infeasible makes rec say that the configuration leaves most pods
// unstarted: nothing is recommended. A replay's arrivals are the
// trace's, so a larger cluster may hold them; a fill's grow with the
// cluster (Config.Inflate times its capacity), so Recommend calls it
// infeasible only when it also allocates under half the GPUs, and more
// GPUs would not help.
func infeasible(rec *engine.Recommendation, a candidate, replay bool, name func(candidate) string) {
	rec.Verdict, rec.Policy, rec.Sharing = VerdictInfeasible, "", ""
	rec.Significant = false
	advice := "grow it (--size) or send less"
	if !replay {
		advice = fmt.Sprintf("it allocates %s%% of the GPUs: few of them serve these pods (their GPU models, CPU and memory)", pct(a.alloc))
	}
	rec.Reason = fmt.Sprintf("infeasible: even the best candidate, %s, places %s of %s arrived pods (%s%%), fewer than half; no policy or sharing mode simulated makes this cluster fit this workload: %s.",
		name(a), podCount(a.placed), podCount(a.arrived), pct(a.placed/a.arrived), advice)
}

// shown is the difference of two ratios as the reader computes it from the
// percentages printed (2 decimals each): 95.59 − 94.72 = 0.87, where the
// exact margin may round to 0.86.
func shown(a, b float64) string {
	x, _ := strconv.ParseFloat(pct(a), 64)
	y, _ := strconv.ParseFloat(pct(b), 64)
	return strconv.FormatFloat(x-y, 'f', 2, 64)
}

// significance says whether a margin stands out of the seeds' spread.
func significance(rec *engine.Recommendation, runs int, seconds bool) string {
	spread := fmt.Sprintf("%.2f points", rec.Spread)
	if seconds {
		spread = duration(rec.Spread)
	}
	switch {
	case runs < 2:
		return "one seed, so no spread was measured: not significant (run --seeds 3 or more)."
	case math.IsInf(rec.Margin, 1):
		return "significant."
	case rec.Significant:
		return "beyond the seeds' spread (" + spread + "): significant."
	case rec.Margin > rec.Spread+1e-9:
		return "a difference below what is printed: not significant."
	}
	return "within the seeds' spread (" + spread + "): the choice is not significant."
}

// RecommendSizing is the decision of a --size search, as
// cluster-autoscaler's price expander chooses a node group: of the answers
// (node type, policy, sharing mode) that reached the target, the one whose
// cluster costs the fewest USD per hour (then the fewest nodes added), its
// cluster (list with the answer's nodes added, sizing.Grow; types are the
// node types searched), every other answer, and the margin in USD per
// month to the next. The choice is not significant when the two cost the
// same, or when either answer's metric lies within its seeds' standard
// deviation of the target. nil when no answer reached the target.
func RecommendSizing(r *sizing.Report, list, types []trace.NodeSpec, price func(model string) float64) *engine.Recommendation {
	cs := slices.Clone(r.Results)
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Reached != cs[j].Reached {
			return cs[i].Reached
		}
		if cs[i].Answer.USDPerHour != cs[j].Answer.USDPerHour {
			return cs[i].Answer.USDPerHour < cs[j].Answer.USDPerHour
		}
		return cs[i].Answer.Added < cs[j].Answer.Added
	})
	if len(cs) == 0 || !cs[0].Reached {
		return nil
	}
	a := cs[0]
	var ty trace.NodeSpec
	for _, x := range types {
		if sizing.TypeName(x) == a.NodeType {
			ty = x
		}
	}
	cluster, n, gpus, usdh := clusterOf(sizing.Grow(list, ty, a.Answer.Added), price)
	alloc := a.Answer.GPUAllocationRatio
	rec := &engine.Recommendation{Goal: "fewest USD per hour added meeting " + r.Target, Verdict: VerdictRecommended, Policy: a.Policy, Sharing: sharingName(a),
		Cluster: cluster, Nodes: n, GPUs: gpus, USDPerHour: usdh, USDPerMonth: usdh * engine.HoursPerMonth,
		IdleGPUs: (1 - alloc) * float64(gpus), IdleUSDPerMonth: (1 - alloc) * usdh * engine.HoursPerMonth,
		Unit: "USD per month", Value: usdh * engine.HoursPerMonth}
	add := nodeAdd(a, price)
	rec.Add = &add
	for _, x := range cs[1:] {
		rec.Alternatives = append(rec.Alternatives, nodeAdd(x, price))
	}
	rec.Reason = addText(add) + sizingWhy(r, rec, cs)
	return rec
}

// nodeAdd is a --size answer as nodes to add, priced by their GPUs.
func nodeAdd(x sizing.Result, price func(string) float64) engine.NodeAdd {
	a := engine.NodeAdd{Nodes: x.Answer.Added, Type: x.NodeType, Model: x.Model, GPUs: x.GPUsPerNode, Policy: x.Policy, Sharing: sharingName(x), Reached: x.Reached}
	if x.Reached && price != nil {
		a.USDPerMonth = float64(a.Nodes*a.GPUs) * price(a.Model) * engine.HoursPerMonth
	}
	return a
}

// addText says an answer: "add 2 × A100-80GB x8 (…): +N USD per month".
func addText(a engine.NodeAdd) string {
	if !a.Reached {
		return a.Type + ": not reached"
	}
	if a.Nodes == 0 {
		return "add nothing: the cluster as given meets the target"
	}
	return fmt.Sprintf("add %s × %s: +%s USD per month", thousands(a.Nodes), a.Type, thousands(int(math.Round(a.USDPerMonth))))
}

// sizingWhy says, after the answer, with which policy, what the other
// answers are and whether the choice is significant.
func sizingWhy(r *sizing.Report, rec *engine.Recommendation, cs []sizing.Result) string {
	a := cs[0]
	name := func(x sizing.Result) string { return x.Policy + " (" + sharingName(x) + ")" }
	why := " with " + name(a)
	var others []string
	for _, x := range rec.Alternatives {
		others = append(others, addText(x)+" with "+x.Policy+" ("+x.Sharing+")")
	}
	if len(others) > 0 {
		why += "; the other answers: " + strings.Join(others, "; ")
	}
	if len(cs) == 1 || !cs[1].Reached {
		return why + "; it is the only answer that reached the target."
	}
	b := cs[1]
	rec.RunnerUpPolicy, rec.RunnerUpSharing = b.Policy, sharingName(b)
	rec.RunnerUpValue = b.Answer.USDPerHour * engine.HoursPerMonth
	rec.Margin = rec.RunnerUpValue - rec.Value
	t, _ := sizing.ParseTarget(r.Target)
	fragile := func(s sizing.Step) bool { return s.Value != nil && math.Abs(*s.Value-t.Value) <= s.Std }
	rec.Significant = r.Seeds > 1 && rec.Margin > 0 && !fragile(a.Answer) && !fragile(b.Answer)
	switch {
	case rec.Margin == 0:
		return why + "; the next answer costs the same: the choice is not significant."
	case r.Seeds < 2:
		return why + "; one seed, so no spread was measured: not significant (run --seeds 3 or more)."
	case !rec.Significant:
		return why + "; an answer's metric is within its seeds' spread of the target: the choice is not significant."
	}
	return why + "; both cheapest answers clear the target by more than their seeds' spread: significant."
}

// clusterOf groups nodes by type (model, GPUs, CPU, memory), in order of
// first appearance, and returns the types, the node and GPU counts and the
// GPUs' price per hour.
func clusterOf(nodes []trace.NodeSpec, price func(string) float64) ([]engine.NodeCount, int, int, float64) {
	var out []engine.NodeCount
	index := map[engine.NodeCount]int{}
	gpus, usdh := 0, 0.0
	for _, s := range nodes {
		k := engine.NodeCount{GPUs: s.GPUs, CPU: float64(s.CPUMilli) / 1000, MemoryGiB: float64(s.MemoryMiB) / 1024}
		if s.GPUs > 0 {
			k.Model = s.Model
			if price != nil {
				usdh += float64(s.GPUs) * price(s.Model)
			}
		}
		gpus += s.GPUs
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, k)
		}
		out[i].Nodes++
	}
	return out, len(nodes), gpus, usdh
}

// clusterText writes a cluster per GPU model, most GPUs first: "137 G2
// nodes (1,096 GPUs) + 101 T4 nodes (210 GPUs) + 2 CPU-only nodes"; the
// node types are in the JSON.
func clusterText(cs []engine.NodeCount) string {
	type sum struct {
		model       string
		nodes, gpus int
	}
	var ms []*sum
	index := map[string]*sum{}
	for _, c := range cs {
		m := c.Model
		if c.GPUs == 0 {
			m = "CPU-only"
		}
		s, ok := index[m]
		if !ok {
			s = &sum{model: m}
			index[m] = s
			ms = append(ms, s)
		}
		s.nodes += c.Nodes
		s.gpus += c.Nodes * c.GPUs
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].gpus > ms[j].gpus })
	var parts []string
	for _, s := range ms {
		p := count(s.nodes, s.model+" node")
		if s.gpus > 0 {
			p += " (" + count(s.gpus, "GPU") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " + ")
}

// money writes USD with thousands separators and cents.
func money(v float64) string {
	c := int64(math.Round(v * 100))
	return thousands(int(c/100)) + "." + fmt.Sprintf("%02d", abs64(c%100))
}

// tenths is a count of GPUs to one decimal with thousands separators:
// 5,806.0.
func tenths(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%.1f", v)
	}
	c := int64(math.Round(v * 10))
	return thousands(int(c/10)) + "." + fmt.Sprint(abs64(c%10))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// recommendationLines is the recommendation as the table and the HTML
// page say it.
func recommendationLines(rec *engine.Recommendation) []string {
	if rec == nil {
		return nil
	}
	out := []string{fmt.Sprintf("recommendation (%s): %s", rec.Goal, choiceText(rec))}
	out = append(out, wrap(fmt.Sprintf("  cluster: %s nodes, %s GPUs: %s", thousands(rec.Nodes), thousands(rec.GPUs), clusterText(rec.Cluster)), 100, "    "),
		fmt.Sprintf("  cost: %s USD per month (%s USD/h × %d h, every GPU, idle or not)", money(rec.USDPerMonth), money(rec.USDPerHour), engine.HoursPerMonth),
		fmt.Sprintf("  left on the table: %s GPUs unallocated, %s USD per month", tenths(rec.IdleGPUs), money(rec.IdleUSDPerMonth)))
	if rec.Add != nil {
		out = append(out, "  what to buy: "+addText(*rec.Add))
	}
	return append(append(out, servedLines(rec)...), "  why: "+rec.Reason)
}

// servedLines say what the choice isolates and serves.
func servedLines(rec *engine.Recommendation) []string {
	var out []string
	if rec.Isolation != "" && rec.Sharing != "" {
		out = append(out, "  isolation: "+rec.Isolation)
	}
	if rec.ArrivedPods > 0 {
		l := fmt.Sprintf("  served: %s of %s arrived pods placed, %s%% of the arrived GPU demand", podCount(rec.PlacedPods), podCount(rec.ArrivedPods), pct(rec.ServedRatio))
		if rec.USDPerServedGPUHour > 0 {
			l += fmt.Sprintf(", %s USD per served GPU-hour", money(rec.USDPerServedGPUHour))
		}
		out = append(out, l)
	}
	return out
}

// choiceText is the choice as the first line of a recommendation says it.
func choiceText(rec *engine.Recommendation) string {
	switch rec.Verdict {
	case VerdictInfeasible:
		return "none: the configuration is infeasible"
	case VerdictTie:
		return "no policy differs on this workload: keep yours, sharing " + rec.Sharing
	}
	return rec.Policy + ", sharing " + rec.Sharing
}

// wrap breaks s before a " + " so that no line passes width columns, the
// lines after the first led by indent.
func wrap(s string, width int, indent string) string {
	parts := strings.Split(s, " + ")
	var b strings.Builder
	line := parts[0]
	for _, p := range parts[1:] {
		if len([]rune(line))+3+len([]rune(p)) > width {
			b.WriteString(line + " +\n")
			line = indent + p
			continue
		}
		line += " + " + p
	}
	b.WriteString(line)
	return b.String()
}

// writeRecommendation writes the recommendation under a table.
func writeRecommendation(w io.Writer, rec *engine.Recommendation) {
	if rec == nil {
		return
	}
	fmt.Fprintln(w)
	for _, l := range recommendationLines(rec) {
		fmt.Fprintln(w, l)
	}
}

// recommendationHTML is the recommendation as a section of the page.
func recommendationHTML(rec *engine.Recommendation) string {
	if rec == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<div id="recommendation" class="lead"><h2>Recommendation</h2><ul>`)
	if rec.Verdict == VerdictRecommended || rec.Verdict == "" {
		fmt.Fprintf(&b, "<li>Goal: %s. Choice: <b>%s</b>, sharing <b>%s</b>.</li>", html.EscapeString(rec.Goal), html.EscapeString(rec.Policy), html.EscapeString(rec.Sharing))
	} else {
		fmt.Fprintf(&b, "<li>Goal: %s. Choice: <b>%s</b>.</li>", html.EscapeString(rec.Goal), html.EscapeString(choiceText(rec)))
	}
	if rec.Isolation != "" && rec.Sharing != "" {
		fmt.Fprintf(&b, "<li>Isolation: %s.</li>", html.EscapeString(rec.Isolation))
	}
	if rec.ArrivedPods > 0 {
		fmt.Fprintf(&b, "<li>Served: %s of %s arrived pods placed, %s%% of the arrived GPU demand", podCount(rec.PlacedPods), podCount(rec.ArrivedPods), pct(rec.ServedRatio))
		if rec.USDPerServedGPUHour > 0 {
			fmt.Fprintf(&b, ", %s USD per served GPU-hour", money(rec.USDPerServedGPUHour))
		}
		b.WriteString(".</li>")
	}
	if rec.Add != nil {
		fmt.Fprintf(&b, "<li>What to buy: <b>%s</b>.</li>", html.EscapeString(addText(*rec.Add)))
	}
	fmt.Fprintf(&b, "<li>Cluster: %s nodes, %s GPUs: %s.</li>", thousands(rec.Nodes), thousands(rec.GPUs), html.EscapeString(clusterText(rec.Cluster)))
	fmt.Fprintf(&b, "<li>Cost: <b>%s USD per month</b> (%s USD per hour × %d hours; every GPU, idle or not).</li>", money(rec.USDPerMonth), money(rec.USDPerHour), engine.HoursPerMonth)
	fmt.Fprintf(&b, "<li>Left on the table: %s GPUs unallocated, %s USD per month.</li>", tenths(rec.IdleGPUs), money(rec.IdleUSDPerMonth))
	fmt.Fprintf(&b, "<li>Why: %s</li></ul></div>", html.EscapeString(rec.Reason))
	return b.String()
}
