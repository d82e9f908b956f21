// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/sim/report"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
	"github.com/gpuplane/gpuplane/internal/trace"
	"github.com/gpuplane/gpuplane/internal/version"
	"io"
	"math"
	"time"
)

// checkSize checks --size and the flags it cannot go with.
func (o Options) checkSize() error {
	if o.Size == "" {
		return nil
	}
	t, err := sizing.ParseTarget(o.Size)
	if err != nil {
		return err
	}
	switch {
	case t.Mode() != o.Mode:
		return fmt.Errorf("--size %q is measured in %s: add --mode %s", o.Size, t.Mode(), t.Mode())
	case o.InflateSet:
		return errors.New("--size submits each trace pod once and takes no --inflate")
	case o.PlacementsFile != "":
		return errors.New("--size runs many simulations and writes no --placements")
	case o.TeamsFile != "":
		return errors.New("--size does not take --teams")
	}
	return nil
}

// runSize searches, per policy and per GPU node type of the cluster as
// given, the fewest nodes of the type to add that meet the --size target
// (sizing.SearchAdd), each step a full simulation of --seeds runs: fill
// submits each trace pod once (engine.Config.Once), replay runs the trace
// as it is.
func runSize(ctx context.Context, o Options, in *input, stdout, stderr io.Writer) error {
	t, err := sizing.ParseTarget(o.Size)
	if err != nil {
		return BadInput(err)
	}
	start := time.Now()
	w, err := in.prepare(o, in.nodes)
	if err != nil {
		return BadInput(err)
	}
	in.warn(o, w, stderr)
	if in.snap != nil { // the warnings of putting its running pods in place
		msgs, err := w.Bind(o.SnapshotFile, in.snap.bound)
		if err != nil {
			return err
		}
		for _, msg := range msgs {
			fmt.Fprintln(stderr, "simulate: warning:", msg)
		}
	}
	if unfit := w.UnfitPods(); !t.Reachable(len(in.pods), unfit) {
		return BadInput(fmt.Errorf("--size %q cannot hold on any number of nodes of %s: %d of %d pods fit no node type even when empty (see the warnings)", o.Size, in.nName, unfit, len(in.pods)))
	}
	rep := in.sizingReport(o, t, w)
	grow, err := in.growable(o, rep)
	if err != nil {
		return err
	}
	// --sharing: one search per mode and policy; without it, the workload
	// as given (fractional).
	modes := []engine.Sharing{{}}
	if o.Sharing != "" {
		if modes, err = engine.ParseSharing(o.Sharing); err != nil {
			return fmt.Errorf("--sharing: %w", err)
		}
	}
	if err := in.checkMIGReachable(o, t, modes, stderr); err != nil {
		return err
	}
	types := sizing.Types(in.nodes)
	if vc := in.vendorGroups(); sizing.AcrossVendors(types, vc.groups) {
		in.vendors = vc
	}
	for _, mode := range modes {
		for _, pol := range in.pols {
			for _, ty := range grow {
				res, err := in.search(ctx, o, t, mode, pol, ty, stderr)
				if err != nil {
					return err
				}
				rep.Results = append(rep.Results, res)
			}
		}
	}
	rep.WallTime = time.Since(start).Seconds()
	rep.Recommendation = report.RecommendSizing(rep, in.nodes, grow, gpuPrice(in.nodes, in.prices))
	if in.vendors != nil {
		rep.Vendors = sizing.CompareVendors(rep, types, in.vendors.groups)
	}
	return in.writeSize(o, rep, stdout, stderr)
}

// growable returns the node types --size adds nodes of (sizing.Growable:
// GPU types, not cordoned) that some pod of the workload fits when empty,
// and records the others in rep.Skipped.
func (in *input) growable(o Options, rep *sizing.Report) ([]trace.NodeSpec, error) {
	var cordoned func(trace.NodeSpec) bool
	if in.snap != nil {
		cordoned = func(s trace.NodeSpec) bool { return in.snap.cordoned[s.Name] }
	}
	types, skipped := sizing.Growable(in.nodes, cordoned)
	rep.Skipped = skipped
	var grow []trace.NodeSpec
	for _, ty := range types {
		w, err := in.prepare(o, []trace.NodeSpec{ty})
		if err != nil {
			return nil, err
		}
		if w.UnfitPods() == len(in.pods) {
			rep.Skipped = append(rep.Skipped, sizing.SkippedType{Type: sizing.TypeName(ty), Nodes: typeCount(in.nodes, ty), Why: "no pod of the workload fits one"})
			continue
		}
		grow = append(grow, ty)
	}
	if len(grow) == 0 {
		return nil, BadInput(fmt.Errorf("--size %q: %s has no node type to add nodes of (a GPU node type, not cordoned, that some pod fits)", o.Size, in.nName))
	}
	return grow, nil
}

// typeCount counts the nodes of list of ty's type.
func typeCount(list []trace.NodeSpec, ty trace.NodeSpec) int {
	n, name := 0, sizing.TypeName(ty)
	for _, s := range list {
		if sizing.TypeName(s) == name {
			n++
		}
	}
	return n
}

// writeSize writes the report of a --size search: the HTML report
// (--out), then JSON or the table on stdout.
func (in *input) writeSize(o Options, rep *sizing.Report, stdout, stderr io.Writer) error {
	if c, ok := stderr.(*warnings); ok {
		rep.Warnings = c.list()
	}
	if o.OutDir != "" {
		path, err := report.WriteSizingHTML(o.OutDir, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "simulate: wrote %s\n", path)
	}
	if o.Format == "json" {
		return report.WriteSizingJSON(stdout, rep)
	}
	return report.WriteSizingTable(stdout, rep)
}

// sizingReport is the report of a --size search, before its results.
func (in *input) sizingReport(o Options, t sizing.Target, w *engine.Workload) *sizing.Report {
	src := report.Source(in.nName, in.pName)
	if in.nName == in.pName {
		src = in.nName // a snapshot gives both
	}
	return &sizing.Report{Source: src, Target: o.Size, Mode: t.Mode(), ListNodes: len(in.nodes), Pods: len(in.pods),
		UnfitPods: w.UnfitPods(), Unfit: w.Unfit(maxUnfitReported),
		Seeds: o.Seeds, Version: version.Get().String("gpuplane"), Inputs: in.inputs,
		Params: &engine.Params{Policies: in.pols, Seeds: o.Seeds, FirstSeed: o.Seed, TieBreak: o.TieBreak, Popularity: o.Popularity, PricesUSDPerGPUHour: w.Prices()}}
}

// maxUnfitReported bounds the unfit pods a --size report names.
const maxUnfitReported = 20

// checkMIGReachable checks that the target can hold under --sharing mig
// with given layouts. MIG layouts change what fits: a MIG-enabled GPU
// serves only MIG pods, so a pod of 8 whole GPUs fits no node that keeps
// fewer whole. Given layouts (--mig-config, the cluster YAML) go with the
// node types, which every scale of the list has, so a pod that fits no type
// now never fits. (Chosen layouts leave more nodes whole as the cluster
// grows; the other modes only round shares up.)
func (in *input) checkMIGReachable(o Options, t sizing.Target, modes []engine.Sharing, stderr io.Writer) error {
	for _, mode := range modes {
		if mode.Mode != "mig" {
			continue
		}
		given, _, err := givenMIG(o, in.nodes, nil, stderr)
		if err != nil {
			return err
		}
		if given == nil {
			continue
		}
		w, err := in.prepare(o, in.nodes)
		if err != nil {
			return err
		}
		if w, _, err = w.WithSharing(mode, given, o.Popularity); err != nil {
			return fmt.Errorf("--sharing %s: %w", mode, err)
		}
		if unfit, first := w.FitsNoNode(); !t.Reachable(len(in.pods), unfit) {
			return fmt.Errorf("--size %q cannot hold on any number of nodes of %s with --sharing %s: %d of %d pods fit no node type even when empty (first %s)", o.Size, in.nName, mode, unfit, len(in.pods), first)
		}
	}
	return nil
}

// search searches the fewest nodes of type ty to add to the cluster as
// given that meet t under sharing mode and policy pol.
func (in *input) search(ctx context.Context, o Options, t sizing.Target, mode engine.Sharing, pol string, ty trace.NodeSpec, stderr io.Writer) (sizing.Result, error) {
	label := pol
	if mode.Mode != "" {
		label = mode.String() + " " + pol
	}
	label += ", adding " + sizing.TypeName(ty)
	// The metric's spread over the seeds and the mean allocation, by node
	// count, for the steps of the result.
	std, alloc, served := map[int]float64{}, map[int]float64{}, map[int]sizing.Served{}
	eval := func(ctx context.Context, nodes []trace.NodeSpec) (float64, error) {
		w, err := in.prepareSharing(o, mode, nodes)
		if err != nil {
			return 0, err
		}
		r, err := engine.Run(ctx, w, engine.Config{Mode: t.Mode(), Policies: []string{pol}, Seeds: o.Seeds, Seed: o.Seed, Once: true,
			Popularity: o.Popularity, TieBreak: in.tie, GPUAPI: in.api, DRAOrder: in.order, Parallel: o.Parallel, Placements: t.Mode() == "replay" || in.vendors != nil})
		if err != nil {
			return 0, err
		}
		v, err := t.Measure(r.Results)
		if err != nil {
			return 0, err
		}
		std[len(nodes)] = seedStd(t, r.Results)
		alloc[len(nodes)] = meanAlloc(r.Results)
		if in.vendors != nil {
			served[len(nodes)] = in.vendors.served(r.Results)
		}
		fmt.Fprintf(stderr, "simulate: --size %s: +%d nodes (%d in all): %s\n", label, len(nodes)-len(in.nodes), len(nodes), metricText(t, v))
		return v, nil
	}
	res, err := sizing.SearchAdd(ctx, in.nodes, ty, t, in.prices, eval)
	if err != nil {
		return res, err
	}
	res.Policy = pol
	res.Sharing = mode.String()
	for i := range res.Curve {
		res.Curve[i].Std, res.Curve[i].GPUAllocationRatio = std[res.Curve[i].Nodes], alloc[res.Curve[i].Nodes]
	}
	res.Answer.Std, res.Answer.GPUAllocationRatio = std[res.Answer.Nodes], alloc[res.Answer.Nodes]
	if in.vendors != nil {
		res.Served = in.vendors.answerServed(res, t, ty.Vendor, served)
	}
	return res, nil
}

// meanAlloc is the mean GPU allocation ratio of the runs: fill, at the end;
// replay, time-weighted.
func meanAlloc(runs []engine.Result) float64 {
	s := 0.0
	for _, r := range runs {
		if r.Replay != nil {
			s += r.Replay.TimeWeightedAllocationRatio
		} else {
			s += r.GPUAllocationRatio
		}
	}
	return s / float64(max(1, len(runs)))
}

// seedStd is the population standard deviation of t's metric over the
// runs, one value per seed; 0 when a seed's wait is unbounded.
func seedStd(t sizing.Target, runs []engine.Result) float64 {
	var xs []float64
	for _, r := range runs {
		v, err := t.Measure([]engine.Result{r})
		if err != nil || math.IsInf(v, 0) {
			return 0
		}
		xs = append(xs, v)
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	sd := 0.0
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return math.Sqrt(sd / float64(len(xs)))
}

// prepareSharing returns the workload on nodes under mode.
func (in *input) prepareSharing(o Options, mode engine.Sharing, nodes []trace.NodeSpec) (*engine.Workload, error) {
	w, err := in.prepare(o, nodes)
	if err != nil {
		return nil, err
	}
	var bound []engine.Bound
	if in.snap != nil {
		bound = in.snap.bound
	}
	if mode.Mode != "" {
		// The layouts given (--mig-config, the cluster YAML) by model and
		// GPU index, else chosen for this cluster.
		var given engine.GivenMIG
		mode.OnDemand = mode.Mode == "mig" && in.api == placement.DRA
		if mode.Mode == "mig" && !mode.OnDemand {
			if given, _, err = givenMIG(o, nodes, bound, nil); err != nil {
				return nil, err
			}
		}
		if w, _, err = w.WithSharing(mode, given, o.Popularity); err != nil {
			return nil, fmt.Errorf("--sharing %s: %w", mode, err)
		}
	}
	// A snapshot's running pods stay where they run in every step (the
	// same warnings as the first step's, which runSize printed).
	if len(bound) > 0 {
		if _, err := w.Bind(o.SnapshotFile, bound); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// metricText writes a value of t's metric for the progress lines.
func metricText(t sizing.Target, v float64) string {
	if t.Metric == "placed" {
		return fmt.Sprintf("placed %.2f%%", 100*v)
	}
	if math.IsInf(v, 1) {
		return "p95 wait infinite (over 5% of pods never started)"
	}
	return "p95 wait " + time.Duration(v*float64(time.Second)).Round(time.Second).String()
}
