// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package sizing answers "what do I add, and how many?" for `gpuplane
// simulate --size`: per node type of the cluster as given (Growable), the
// fewest nodes of it to add (Grow) on which a workload meets a target (a
// share of pods placed in fill, or a p95 waiting time in replay). It
// parses the target (ParseTarget) and searches the count (SearchAdd); each
// step of the search is a full simulation that the caller supplies.
package sizing

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuplane/gpuplane/internal/cluster"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MaxNodes bounds the search: a cluster never grows past it (the cluster
// YAML reader's bound).
const MaxNodes = 1_000_000

// Target is a sizing goal.
type Target struct {
	// Metric is "placed" (fill: the share of the trace's pods placed,
	// each submitted once) or "p95wait" (replay: the 95th percentile,
	// nearest rank, of the waiting time of all pods, a pod never started
	// counting as waiting forever).
	Metric string
	// Value is the bound: a share in (0, 1] for placed (at least), seconds
	// for p95wait (at most).
	Value float64
	// Text is the target as the user wrote it.
	Text string
}

// ParseTarget reads a --size target: "placed>=P%" (P in (0, 100]) or
// "p95wait<=D" with D a Go duration such as 10m, 90s or 2h (at least 0).
func ParseTarget(s string) (Target, error) {
	t := Target{Text: s}
	c := strings.ReplaceAll(s, " ", "")
	switch {
	case strings.HasPrefix(c, "placed>="):
		v := strings.TrimPrefix(c, "placed>=")
		if !strings.HasSuffix(v, "%") {
			return t, fmt.Errorf("--size %q: give the share in percent, e.g. placed>=99%%", s)
		}
		p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || !(p > 0 && p <= 100) {
			return t, fmt.Errorf("--size %q: the share must be a number in (0, 100]%%", s)
		}
		t.Metric, t.Value = "placed", p/100
	case strings.HasPrefix(c, "p95wait<="):
		d, err := time.ParseDuration(strings.TrimPrefix(c, "p95wait<="))
		if err != nil || d < 0 {
			return t, fmt.Errorf("--size %q: the wait must be a duration of at least 0 such as 10m, 90s or 2h", s)
		}
		t.Metric, t.Value = "p95wait", d.Seconds()
	default:
		return t, fmt.Errorf("--size %q: unknown target (placed>=99%% in fill, p95wait<=10m in replay)", s)
	}
	return t, nil
}

// Mode returns the experiment the target is measured in: fill or replay.
func (t Target) Mode() string {
	if t.Metric == "placed" {
		return "fill"
	}
	return "replay"
}

// Holds reports whether metric value v meets the target.
func (t Target) Holds(v float64) bool {
	if t.Metric == "placed" {
		return v >= t.Value-1e-12
	}
	return v <= t.Value
}

// Reachable reports whether the target can hold at all when unfit of the
// trace's pods fit no node of any type: those never place, whatever the
// cluster's size.
func (t Target) Reachable(pods, unfit int) bool {
	if t.Metric == "placed" {
		return t.Holds(float64(pods-unfit) / float64(pods))
	}
	return unfit <= pods-int(math.Ceil(0.95*float64(pods)))
}

// Types returns one node of each type of list (nodes of equal CPU, memory,
// GPU count and model), in order of first appearance.
func Types(list []trace.NodeSpec) []trace.NodeSpec {
	var out []trace.NodeSpec
	for _, ty := range types(list) {
		out = append(out, ty[0])
	}
	return out
}

// Measure returns the target's metric for a policy's runs, the mean over
// its seeds: the share of arrived pods placed (fill), or the p95 waiting
// time in seconds (replay; +Inf when more than 5% of pods never started,
// in any seed). Replay runs must hold their Placements.
func (t Target) Measure(runs []engine.Result) (float64, error) {
	if len(runs) == 0 {
		return 0, errors.New("no runs")
	}
	sum := 0.0
	for _, r := range runs {
		if r.Pods == 0 {
			return 0, errors.New("a run without pods")
		}
		if t.Metric == "placed" {
			sum += float64(r.Pods-r.FailedPods) / float64(r.Pods)
			continue
		}
		if len(r.Placements) != r.Pods {
			return 0, fmt.Errorf("%s seed %d: %d placements for %d pods", r.Policy, r.Seed, len(r.Placements), r.Pods)
		}
		waits, never := make([]float64, 0, len(r.Placements)), 0
		for _, p := range r.Placements {
			if p.Reason != "" {
				never++
				continue
			}
			waits = append(waits, p.WaitSeconds)
		}
		sort.Float64s(waits)
		sum += engine.P95Wait(waits, never) // the replay table's p95 wait
	}
	return sum / float64(len(runs)), nil
}

// P95 returns the 95th percentile of xs by the nearest-rank method (the
// ⌈0.95·n⌉-th smallest value), as sim's replay statistics use; 0 for none.
// It sorts xs.
func P95(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	k := int(math.Ceil(0.95*float64(len(xs)))) - 1
	return xs[max(0, min(k, len(xs)-1))]
}

// types groups list's nodes by type, in order of first appearance.
func types(list []trace.NodeSpec) [][]trace.NodeSpec {
	type key struct {
		cpu, mem int64
		gpus     int
		model    string
		mig      string             // the MIG layout of each GPU and how many GPUs have it (NodeSpec.MIG, MIGGPUs)
		serving  cluster.GPUServing // a DRA node is a type of its own (NodeSpec.Serving)
		vendor   gpu.Vendor         // an uncatalogued model's maker, a partition mode (NodeSpec)
		part     gpu.Partition
	}
	var types [][]trace.NodeSpec
	index := map[key]int{}
	for _, s := range list {
		k := key{s.CPUMilli, s.MemoryMiB, s.GPUs, strings.ToLower(s.Model), strings.Join(s.MIG, ";") + "/" + strconv.Itoa(s.MIGGPUs), s.Serving, s.Vendor, s.Partition}
		if s.GPUs == 0 {
			k.model = ""
		}
		i, ok := index[k]
		if !ok {
			i = len(types)
			index[k] = i
			types = append(types, nil)
		}
		types[i] = append(types[i], s)
	}
	return types
}

// Step is one cluster size the search simulated.
type Step struct {
	// Scale is Nodes / the node list's node count.
	Scale float64 `json:"scale"`
	Nodes int     `json:"nodes"`
	// Added is how many nodes of the result's NodeType the step adds to
	// the cluster as given (SearchAdd).
	Added int `json:"added"`
	GPUs  int `json:"gpus"`
	// USDPerHour is what the cluster's GPUs cost per hour (internal/cost/prices
	// prices), idle or not.
	USDPerHour float64 `json:"usd_per_hour" round:"cent"`
	// Value is the target's metric (Target.Measure): a share 0..1 of pods
	// placed, or the p95 wait in seconds; null when infinite (more than 5%
	// of pods never started).
	Value *float64 `json:"value"`
	// Std is the population standard deviation of the metric over the
	// seeds (0 with one seed, or when a seed's wait is unbounded), filled
	// in by the caller that knows the runs.
	Std float64 `json:"std,omitempty"`
	// GPUAllocationRatio is the mean over the seeds of the allocated share
	// of GPU capacity (fill: at the end; replay: time-weighted), filled in
	// by the caller: what the cluster leaves idle is 1 − it.
	GPUAllocationRatio float64 `json:"gpu_allocation_ratio"`
	Holds              bool    `json:"holds"`
}

// Result is the answer for one policy (and sharing mode).
type Result struct {
	Policy string `json:"policy"`
	// Sharing is the GPU sharing mode the runs used; "" is today's
	// fractional sharing (the seam for simulate --sharing).
	Sharing string `json:"sharing,omitempty"`
	// NodeType is the node type the search adds nodes of (SearchAdd,
	// TypeName), of GPU model Model with GPUsPerNode GPUs.
	NodeType    string `json:"node_type,omitempty"`
	Model       string `json:"model,omitempty"`
	GPUsPerNode int    `json:"gpus_per_node,omitempty"`
	// Reached says a cluster of at most MaxNodes nodes met the target;
	// Answer is the smallest such cluster found (the zero Step if not).
	Reached bool `json:"reached"`
	Answer  Step `json:"answer"`
	// Curve is every size simulated, by node count.
	Curve []Step `json:"curve"`
	// Served is what the answer (not reached: the most nodes tried)
	// served, for the comparison across vendors (CompareVendors); nil
	// when the search compares none (AcrossVendors).
	Served *Served `json:"served,omitempty"`
}

// Report is a sizing run's output.
type Report struct {
	Source string `json:"source"`
	// Target is the target as written; Mode the experiment (fill, replay).
	Target string `json:"target"`
	Mode   string `json:"mode"`
	// ListNodes is the node list's node count (scale 1); Pods the trace's.
	ListNodes int      `json:"list_nodes"`
	Pods      int      `json:"trace_pods"`
	Seeds     int      `json:"seeds"`
	Results   []Result `json:"results"`
	// Skipped are the node types of the cluster that the search does not
	// add nodes of, and why (CPU-only, cordoned, no pod fits one).
	Skipped []SkippedType `json:"skipped_types"`
	// UnfitPods counts the pods that fit no node type even when empty:
	// no number of added nodes places them; Unfit names the first of
	// them and why.
	UnfitPods int               `json:"unfit_pods"`
	Unfit     []engine.UnfitPod `json:"unfit"`
	WallTime  float64           `json:"wall_seconds" round:"ms"`
	Version   string            `json:"version,omitempty"`
	Params    *engine.Params    `json:"params,omitempty"`
	Inputs    []engine.Input    `json:"inputs,omitempty"`
	// Recommendation is the cheapest answer and its margin to the next
	// (report.RecommendSizing); nil when no policy reached the target.
	Recommendation *engine.Recommendation `json:"recommendation,omitempty"`
	// Vendors compares the answers across vendors (CompareVendors); nil
	// when the search compares none (AcrossVendors).
	Vendors *VendorComparison `json:"vendors,omitempty"`
	// Warnings are the warnings the search printed on stderr
	// (engine.Report.Warnings).
	Warnings []string `json:"warnings"`
}

// SkippedType is a node type --size does not grow, and why.
type SkippedType struct {
	Type  string `json:"type"`
	Nodes int    `json:"nodes"`
	Why   string `json:"why"`
}

// Eval simulates the cluster of the given nodes and returns the target's
// metric (Target.Measure).
type Eval func(ctx context.Context, nodes []trace.NodeSpec) (float64, error)

// search is one SearchAdd: its inputs, the steps so far (r.Curve) and
// whether the target held at each count tried (memo).
type search struct {
	ctx    context.Context
	list   []trace.NodeSpec
	t      Target
	prices *cost.Prices
	eval   Eval
	r      Result
	memo   map[int]bool
	// nodes is the cluster of step n; added is how many nodes step n
	// adds to the list (0 by default).
	nodes func(n int) []trace.NodeSpec
	added func(n int) int
}

// try evaluates n nodes once (memo), records the step, and says whether
// the target holds.
func (s *search) try(n int) (bool, error) {
	if h, ok := s.memo[n]; ok {
		return h, nil
	}
	nodes := s.nodes(n)
	v, err := s.eval(s.ctx, nodes)
	if err != nil {
		return false, err
	}
	st := Step{Scale: float64(len(nodes)) / float64(len(s.list)), Nodes: len(nodes), Holds: s.t.Holds(v)}
	if s.added != nil {
		st.Added = s.added(n)
	}
	if !math.IsInf(v, 0) && !math.IsNaN(v) {
		st.Value = &v
	}
	for _, x := range nodes {
		st.GPUs += x.GPUs
		if x.GPUs > 0 {
			st.USDPerHour += float64(x.GPUs) * s.prices.PartitionUSDPerHour(x.Model, x.Partition)
		}
	}
	s.r.Curve = append(s.r.Curve, st)
	s.memo[n] = st.Holds
	return st.Holds, nil
}

// bisect narrows lo (failing) and hi (holding) to adjacent counts and
// returns hi, the smallest count found holding.
func (s *search) bisect(lo, hi int) (int, error) {
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		h, err := s.try(m)
		if err != nil {
			return hi, err
		}
		if h {
			hi = m
		} else {
			lo = m
		}
	}
	return hi, nil
}
