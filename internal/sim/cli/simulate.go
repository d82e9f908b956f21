// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package cli is `gpuplane simulate`: it checks the options, reads the
// workload (openb CSV files, or the built-in scenario) and the prices, runs
// the simulator (internal/sim/engine) and writes the reports (internal/sim/report).
// cmd/gpuplane only binds its flags to Options.
package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/sim/report"
	"github.com/gpuplane/gpuplane/internal/trace"
	"github.com/gpuplane/gpuplane/internal/version"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Options are the settings of one simulation, one per flag of gpuplane
// simulate (named in errors).
type Options struct {
	// NodesFile is the node list (--nodes): an openb node CSV, a cluster
	// YAML file (.yaml, .yml) or a short node spec ("T4 x 200"). PodsFile
	// is the pod list (--pods): an openb pod CSV or the Alibaba 2025 trace,
	// told apart by the header. Both empty: the built-in scenario;
	// NodesFile alone: the built-in pods on those nodes.
	NodesFile, PodsFile string
	// Mode is the experiment, fill or replay (--mode).
	Mode string
	// Policies are comma-separated placement policies or "all"
	// (--policies).
	Policies string
	// Seeds is the number of runs per policy, 1..10000, with seeds Seed,
	// Seed+1, ... (--seeds, --seed).
	Seeds int
	Seed  uint64
	// Inflate is the fill experiment's stop: arrived GPU demand as a
	// multiple of GPU capacity, in (0, 100] (--inflate). InflateSet says
	// the user gave it: replay refuses it, as it runs the trace as it is.
	Inflate    float64
	InflateSet bool
	// Popularity is the share of pods whose shapes form the target
	// workload for FGD and fragmentation, in (0, 1] (--popularity).
	Popularity float64
	// Format is the output on stdout (--format, -o): table, json, or
	// values: the recommendation as values of the gpuplane chart
	// (writeValues).
	Format string
	// OutDir, when set, receives the HTML report (--out); a report there
	// is overwritten only with Force (--force).
	OutDir string
	Force  bool
	// PlacementsFile, when set, receives one row per policy, seed and pod
	// (--placements): CSV, or JSON lines if it ends in .jsonl or .ndjson.
	// An existing file is overwritten only with Force.
	PlacementsFile string
	// PricesFile overrides the default prices (--prices; see
	// cost.Prices.LoadPrices).
	PricesFile string
	// TieBreak is first or random (--tie-break).
	TieBreak string
	// GPUAPI is device-plugin or dra (--gpu-api): who chooses the GPUs
	// inside the chosen node (placement.GPUAPI).
	GPUAPI string
	// DRAMIGOrder is table, core or stale (--dra-mig-order): the order in which
	// the DRA driver publishes MIG placements (placement.DRAOrder); ""
	// is core under --gpu-api dra (draOrder).
	DRAMIGOrder string
	// Parallel is the number of runs at once, 0..4096; 0: one per CPU
	// (--parallel).
	Parallel int
	// TeamsFile, replay only, is a teams file (internal/quota): GPU pods
	// are admitted by their team's Kueue quota before placement (--teams).
	TeamsFile string
	// Gangs, replay only and without teams, starts the pods of a gang
	// (NAME#0, NAME#1, ... in the pod list) together (--gangs).
	Gangs bool
	// Sharing, when set, runs the workload under each of these sharing
	// modes and compares them (--sharing): a comma-separated list of
	// exclusive, fractional, mig, timeslice:N, partition:MODE
	// (engine.Sharing). Empty: the workload as given (fractional), without
	// the comparison.
	Sharing string
	// MIGConfig is an NVIDIA mig-parted config file giving the MIG layouts
	// of --sharing mig (--mig-config; trace.ReadMIGConfig), MIGConfigName
	// its configuration (--mig-config-name; default: its only one).
	// Without it, a cluster YAML's mig fields give the layouts, and
	// without those the simulator chooses them (engine.ChooseMIGLayouts).
	MIGConfig, MIGConfigName string
	// SnapshotFile, when set, is `kubectl get nodes,pods -A -o json`
	// (--snapshot; snapshot.Read), in place of NodesFile and PodsFile:
	// its pending pods are simulated on its nodes with its running pods in
	// place, or, with SnapshotEmpty (--snapshot-empty), all its pods that
	// have not ended on an empty copy of its nodes. Fill only, each pod
	// once.
	SnapshotFile  string
	SnapshotEmpty bool
	// PodVendors, when set, are the vendors whose GPUs the workload's GPU
	// pods accept where the pod list names none (--pod-vendors; no
	// vendors column value, no vendor's resource: a trace's pods):
	// "nvidia" for a workload built for CUDA, "nvidia|amd" (cluster.
	// ParseVendorSet; trace.WithVendors). Empty: any vendor.
	PodVendors string
	// Size, when set, is a sizing target (--size; see sizing.ParseTarget):
	// instead of one simulation, search the smallest scale of the node list
	// that meets it, per policy.
	Size string
}

// DefaultOptions returns the defaults of the flags: the fill experiment of
// Weng et al. (USENIX ATC 2023) with its inflation 1.3 and popularity 0.95,
// every policy, 3 seeds from 42, and the tie-break of the scheduler the
// chart deploys (placement.DefaultTieBreak, random as kube-scheduler's
// selectHost; the paper's simulator takes the first of equals:
// --tie-break first).
func DefaultOptions() Options {
	return Options{Mode: "fill", Policies: "all", Seeds: 3, Seed: 42, Inflate: 1.3, Popularity: placement.DefaultPopularity, Format: "table", TieBreak: placement.DefaultTieBreak, GPUAPI: "device-plugin"}
}

// normalized returns o with the words of its enumerated flags in lower case
// and trimmed, as --sharing and --policies take them: --format JSON,
// --mode Replay, --tie-break First, --policies ALL.
func (o Options) normalized() Options {
	for _, p := range []*string{&o.Mode, &o.Format, &o.TieBreak, &o.GPUAPI, &o.DRAMIGOrder} {
		*p = strings.ToLower(strings.TrimSpace(*p))
	}
	if strings.EqualFold(strings.TrimSpace(o.Policies), "all") {
		o.Policies = "all"
	}
	return o
}

// check checks the options that need no input file and returns the parsed
// policies and tie-break.
func (o Options) check() ([]string, placement.TieBreak, error) {
	if err := o.checkModes(); err != nil {
		return nil, 0, err
	}
	pols, err := placement.ParseNames(o.Policies)
	if err != nil {
		return nil, 0, err
	}
	tie, err := placement.ParseTieBreak(o.TieBreak)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range []func() error{o.checkRanges, o.checkOutputs, o.checkGPUAPI, o.checkSize, o.checkSnapshot, o.checkPodVendors} {
		if err := c(); err != nil {
			return nil, 0, err
		}
	}
	return pols, tie, nil
}

// checkModes checks --mode, --format and the options that apply to one
// mode or format only.
func (o Options) checkModes() error {
	if o.PodsFile != "" && o.NodesFile == "" && o.SnapshotFile == "" {
		return errors.New("--pods needs --nodes (--nodes alone runs the built-in pods on them)")
	}
	if o.Mode != "fill" && o.Mode != "replay" {
		return fmt.Errorf("unknown --mode %q (fill or replay)", o.Mode)
	}
	if o.Mode == "replay" && o.InflateSet {
		return errors.New("--inflate applies to --mode fill only: replay runs the trace's pods at their own times")
	}
	if o.Gangs && (o.Mode != "replay" || o.TeamsFile != "") {
		return errors.New("--gangs applies to --mode replay without --teams (teams admit a gang whole already)")
	}
	if o.TeamsFile != "" && o.Mode != "replay" {
		return errors.New("--teams applies to --mode replay only")
	}
	if o.Format != "table" && o.Format != "json" && o.Format != "values" {
		return fmt.Errorf("unknown --format %q (table, json or values)", o.Format)
	}
	if o.Format == "values" && o.Size != "" {
		return errors.New("-o values writes a simulation's recommendation as chart values; --size recommends a cluster, not a configuration")
	}
	return nil
}

// checkRanges checks the numeric options' ranges.
func (o Options) checkRanges() error {
	if o.Seeds < 1 || o.Seeds > 10000 {
		return fmt.Errorf("--seeds %d out of range 1..10000", o.Seeds)
	}
	if o.Seed > math.MaxUint64-uint64(o.Seeds-1) {
		return fmt.Errorf("--seed %d + --seeds %d overflows", o.Seed, o.Seeds)
	}
	if !(o.Inflate > 0 && o.Inflate <= 100) {
		return fmt.Errorf("--inflate %v out of range (0, 100]", o.Inflate)
	}
	if o.Parallel < 0 || o.Parallel > 4096 {
		return fmt.Errorf("--parallel %d out of range 0..4096", o.Parallel)
	}
	if !(o.Popularity > 0 && o.Popularity <= 1) {
		return fmt.Errorf("--popularity %v out of range (0, 1]", o.Popularity)
	}
	return nil
}

// checkOutputs checks that --out and --placements may be written.
func (o Options) checkOutputs() error {
	if o.OutDir != "" {
		if err := htmlkit.CheckDir(o.OutDir, o.Force); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if o.PlacementsFile != "" {
		if err := checkNewFile(o.PlacementsFile, o.Force); err != nil {
			return fmt.Errorf("--placements: %w", err)
		}
	}
	return nil
}

// checkGPUAPI checks --gpu-api, --dra-mig-order, --sharing and the MIG
// configuration options against each other.
func (o Options) checkGPUAPI() error {
	if _, err := placement.ParseGPUAPI(o.GPUAPI); err != nil {
		return fmt.Errorf("--gpu-api: %w", err)
	}
	if o.DRAMIGOrder != "" {
		if _, err := placement.ParseDRAOrder(o.DRAMIGOrder); err != nil {
			return fmt.Errorf("--dra-mig-order: %w", err)
		} else if o.GPUAPI != placement.DRA.String() {
			return errors.New("--dra-mig-order applies to --gpu-api dra")
		}
	}
	if o.Sharing != "" {
		if _, err := engine.ParseSharing(o.Sharing); err != nil {
			return fmt.Errorf("--sharing: %w", err)
		}
	}
	if (o.MIGConfig != "" || o.MIGConfigName != "") && !strings.Contains(strings.ToLower(o.Sharing), "mig") {
		return errors.New("--mig-config and --mig-config-name apply to --sharing with mig")
	}
	if (o.MIGConfig != "" || o.MIGConfigName != "") && o.GPUAPI == placement.DRA.String() {
		return errors.New("--mig-config and --mig-config-name apply to --gpu-api device-plugin: under dra MIG instances are made per claim (MIG on demand); leave them out")
	}
	if o.MIGConfigName != "" && o.MIGConfig == "" {
		return errors.New("--mig-config-name needs --mig-config")
	}
	return nil
}

// Run runs the simulation the options describe: the report goes to stdout
// (and OutDir), progress and warnings to stderr. It checks every option
// before it reads a file, and reads every input before it simulates; an
// error of an option or an input is marked BadInput (exit status 2). An
// interrupted run (ctx done) returns ctx's error and writes nothing; a
// failed run removes the --out directories it made (when still empty).
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (err error) {
	o = o.normalized()
	if o.OutDir != "" {
		made := htmlkit.MissingDirs(o.OutDir)
		defer func() {
			if err != nil {
				htmlkit.RemoveEmptyDirs(made)
			}
		}()
	}
	return run(ctx, o, stdout, stderr)
}

func run(ctx context.Context, o Options, stdout, errs io.Writer) error {
	stderr := &warnings{w: errs}
	in, err := readInputs(o, stderr)
	if err != nil {
		return BadInput(err)
	}
	if o.Size != "" {
		return runSize(ctx, o, in, stdout, stderr)
	}
	w, err := in.prepare(o, in.nodes)
	if err != nil {
		return BadInput(err)
	}
	bound, err := in.bind(o, w, stderr)
	if err != nil {
		return BadInput(err)
	}
	in.warn(o, w, stderr)
	rep, placed, err := in.simulate(ctx, o, w, bound, stderr)
	if err != nil {
		return err
	}
	in.describe(o, w, rep)
	rep.Recommendation = report.Recommend(rep, in.nodes, gpuPrice(in.nodes, in.prices))
	rep.Warnings = stderr.list()
	return writeReports(o, rep, placed, stdout, stderr)
}

// input is what simulate reads before it simulates, the same for one
// simulation and for a --size search: the policies and tie-break checked,
// the node and pod lists and the names they go by, the prices, the teams
// and the snapshot, and each file read as an input of the report.
type input struct {
	pols         []string
	tie          placement.TieBreak
	api          placement.GPUAPI
	order        placement.DRAOrder
	nodes        []trace.NodeSpec
	pods         []trace.PodSpec
	nName, pName string
	prices       *cost.Prices
	snap         *snapshotRun  // --snapshot, else nil
	teams        *engine.Teams // --teams, else nil
	vendors      *vendorCmp    // a --size search across vendors, else nil
	inputs       []engine.Input
}

// draOrder is --dra-mig-order (checked): by default, under --gpu-api dra,
// the core's order, which gpuplane's DRA driver publishes and the chart
// deploys (nodeAgent.dra); the table's without DRA, where it means
// nothing.
func (o Options) draOrder() placement.DRAOrder {
	if o.GPUAPI != placement.DRA.String() {
		return placement.TableOrder
	}
	if o.DRAMIGOrder == "" {
		return placement.CoreOrder
	}
	order, _ := placement.ParseDRAOrder(o.DRAMIGOrder)
	return order
}

// readInputs checks the options and reads every input they name.
func readInputs(o Options, stderr io.Writer) (*input, error) {
	pols, tie, err := o.check()
	if err != nil {
		return nil, err
	}
	api, _ := placement.ParseGPUAPI(o.GPUAPI) // checked
	order := o.draOrder()
	in := &input{pols: pols, tie: tie, api: api, order: order, prices: cost.Default(), nName: "built-in nodes", pName: "built-in pods"}
	if o.PricesFile != "" {
		read, err := readInput("prices", o.PricesFile, func(f *os.File) error { return in.prices.ReadPrices(o.PricesFile, f) })
		if err != nil {
			return nil, err
		}
		in.inputs = append(in.inputs, read)
	}
	if err := in.readWorkload(o, stderr); err != nil {
		return nil, err
	}
	in.podVendors(o, stderr)
	if o.TeamsFile != "" {
		if err := in.readTeams(o); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// readWorkload reads the node and pod lists: the snapshot's, the files',
// or the built-in scenario.
func (in *input) readWorkload(o Options, stderr io.Writer) error {
	switch {
	case o.SnapshotFile != "":
		snap, read, err := readSnapshot(o, stderr)
		if err != nil {
			return err
		}
		in.snap = snap
		in.inputs = append(in.inputs, read)
		in.nodes, in.pods, in.nName, in.pName = snap.nodes, snap.pods, o.SnapshotFile, o.SnapshotFile
	case o.NodesFile == "":
		in.nodes = trace.BuiltinNodes(4)
		in.inputs = append(in.inputs, engine.Input{Role: "nodes", Name: "built-in nodes: trace.BuiltinNodes(4), internal/trace/builtin.go"})
		in.builtinPods(o)
	default:
		in.nName = o.NodesFile
		read, err := readNodes(o.NodesFile, &in.nodes)
		if err != nil {
			return err
		}
		in.inputs = append(in.inputs, read)
		if o.PodsFile == "" {
			in.builtinPods(o)
			return nil
		}
		in.pName = o.PodsFile
		if read, err = readInput("pods", o.PodsFile, func(f *os.File) (err error) { in.pods, err = trace.ReadPodsAny(o.PodsFile, f); return err }); err != nil {
			return err
		}
		in.inputs = append(in.inputs, read)
	}
	return nil
}

// builtinPods takes the built-in scenario's pods: 2,400 drawn from the
// openb trace's pod shapes with --seed, on the built-in nodes or on
// --nodes given alone.
func (in *input) builtinPods(o Options) {
	in.pods = trace.BuiltinPods(2400, o.Seed, 10, 24*3600)
	in.inputs = append(in.inputs, engine.Input{Role: "pods", Name: fmt.Sprintf("built-in pods: trace.BuiltinPods(2400, seed %d), internal/trace/builtin.go", o.Seed)})
}

// readTeams reads --teams as gpuplane quota does, refusing nominal quotas
// over the node list's GPUs of a model (quota.LoadTeamsOn), and, with
// --pods, each pod's team.
func (in *input) readTeams(o Options) error {
	teams := &engine.Teams{}
	read, err := readInput("teams", o.TeamsFile, func(f *os.File) (err error) {
		teams.File, err = quota.LoadTeamsOn(o.TeamsFile, in.nodes)
		return err
	})
	if err != nil {
		return err
	}
	in.inputs = append(in.inputs, read)
	if o.PodsFile != "" {
		if teams.PodTeam, err = podTeams(o.PodsFile, o.TeamsFile, teams.File, in.pods); err != nil {
			return err
		}
	}
	in.teams = teams
	return nil
}

// prepare builds the workload of the pods on nodes: the node list, or a
// scale of it.
func (in *input) prepare(o Options, nodes []trace.NodeSpec) (*engine.Workload, error) {
	return engine.Prepare(in.nName, nodes, in.pName, in.pods, o.Popularity, in.prices)
}

// warn writes to stderr the warnings of the inputs and of w, the workload
// prepared on the node list.
func (in *input) warn(o Options, w *engine.Workload, stderr io.Writer) {
	models := make([]string, len(in.nodes))
	for i, n := range in.nodes {
		models[i] = n.Model
	}
	warnings := append(trace.Warnings(in.nName, in.nodes, in.pName, in.pods), w.Warnings()...)
	warnings = append(warnings, unitWarnings(in.nName, in.nodes, in.pName, in.pods)...)
	warnings = append(warnings, migUnused(o, in.nName, in.nodes)...)
	for _, msg := range append(warnings, in.prices.Warnings(models, o.PricesFile)...) {
		fmt.Fprintln(stderr, "simulate: warning:", msg)
	}
	if note := codeNote(models); note != "" && o.NodesFile != "" {
		fmt.Fprintf(stderr, "simulate: %s models: %s\n", in.nName, note)
	}
}

// migUnused warns, once per node group (its mig line), of the MIG layouts a
// cluster YAML gives that a run does not use: under --gpu-api dra MIG
// instances are made per claim, on the GPUs the simulator puts in MIG
// mode (--mig-config is refused there instead, Options.check); with
// --mig-config, its layouts rule.
func migUnused(o Options, file string, nodes []trace.NodeSpec) []string {
	why := ""
	switch {
	case o.GPUAPI == placement.DRA.String():
		why = "is not used under --gpu-api dra: MIG instances are made per claim (MIG on demand), on the GPUs the simulator puts in MIG mode"
	case o.MIGConfig != "":
		why = "is not used: --mig-config " + o.MIGConfig + " gives the layouts"
	default:
		return nil
	}
	var out []string
	seen := map[int]bool{}
	for _, n := range nodes {
		if n.MIG != nil && !seen[n.MIGLine] {
			seen[n.MIGLine] = true
			out = append(out, fmt.Sprintf("%s:%d: mig: [%s] %s", file, n.MIGLine, strings.Join(n.MIG, ", "), why))
		}
	}
	return out
}

// codeNote says what the openb model codes among models stand for
// (gpu.About): "G2 = undisclosed openb model, ...; V100M16 = NVIDIA V100
// 16 GB (openb code)", each code once in order of name; "" when there are
// none.
func codeNote(models []string) string {
	seen := map[string]bool{}
	var out []string
	for _, m := range models {
		name, a := gpu.Canonical(m), gpu.About(m)
		if seen[name] || !strings.Contains(a, "openb") {
			continue
		}
		seen[name] = true
		out = append(out, name+" = "+a)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// bind puts the snapshot's running pods in place on w; with --sharing it
// returns them instead, for runSharing to bind under each mode.
func (in *input) bind(o Options, w *engine.Workload, stderr io.Writer) ([]engine.Bound, error) {
	if in.snap == nil {
		return nil, nil
	}
	if o.Sharing != "" {
		return in.snap.bound, nil
	}
	msgs, err := w.Bind(o.SnapshotFile, in.snap.bound)
	if err != nil {
		return nil, err
	}
	for _, msg := range msgs {
		fmt.Fprintln(stderr, "simulate: warning:", msg)
	}
	return nil, nil
}

// simulate runs w, under each --sharing mode if any, and returns the
// report and, for --placements, the runs of every mode.
func (in *input) simulate(ctx context.Context, o Options, w *engine.Workload, bound []engine.Bound, stderr io.Writer) (*engine.Report, []engine.Result, error) {
	snap := in.snap != nil
	cfg := engine.Config{Mode: o.Mode, Policies: in.pols, Seeds: o.Seeds, Seed: o.Seed,
		Inflate: o.Inflate, Popularity: o.Popularity, TieBreak: in.tie, GPUAPI: in.api, DRAOrder: in.order, Parallel: o.Parallel,
		Placements: o.PlacementsFile != "" || snap, NodeDetail: o.OutDir != "", Teams: in.teams, Once: snap, Gangs: o.Gangs}
	if err := w.Check(cfg); err != nil {
		return nil, nil, BadInput(err) // the workload, as the options run it
	}
	if o.Sharing == "" {
		rep, err := runWithProgress(ctx, w, cfg, stderr)
		if err != nil {
			return nil, nil, err
		}
		return rep, rep.Results, nil
	}
	var rep *engine.Report
	var placed []engine.Result
	start := time.Now()
	read, err := runSharing(ctx, o, w, in.nodes, bound, cfg, stderr, &rep, &placed)
	if err != nil {
		return nil, nil, err
	}
	rep.WallTime = time.Since(start).Seconds() // every mode's runs, not the first's only
	if read != nil {
		in.inputs = append(in.inputs, *read)
	}
	return rep, placed, nil
}

// describe records in rep what ran: the source, version, inputs and
// parameters.
func (in *input) describe(o Options, w *engine.Workload, rep *engine.Report) {
	if in.snap != nil {
		rep.SnapshotPods = snapshotOutcomes(rep, in.pods)
		rep.Source = o.SnapshotFile
		if !o.SnapshotEmpty {
			pods := "pods"
			if len(in.snap.pods) == 1 {
				pods = "pod"
			}
			rep.Source += fmt.Sprintf(" (%d pending %s, %d running in place)", len(in.snap.pods), pods, len(in.snap.bound))
		}
	} else {
		rep.Source = report.Source(in.nName, in.pName)
	}
	rep.Version = version.Get().String("gpuplane")
	rep.Inputs = in.inputs
	rep.Params = &engine.Params{Policies: in.pols, Seeds: o.Seeds, FirstSeed: o.Seed, TieBreak: o.TieBreak, Popularity: o.Popularity, Gangs: o.Gangs, PricesUSDPerGPUHour: w.Prices()}
	if in.api != placement.DevicePlugin {
		rep.Params.GPUAPI = in.api.String()
	}
	if in.api == placement.DRA {
		rep.Params.DRAMIGOrder = in.order.String()
	}
	if o.Mode == "fill" && in.snap == nil {
		rep.Params.Inflate = o.Inflate
	}
}

// writeReports writes --placements, --out and the report on stdout.
func writeReports(o Options, rep *engine.Report, placed []engine.Result, stdout, stderr io.Writer) error {
	if o.PlacementsFile != "" {
		if err := savePlacements(o.PlacementsFile, placed); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "simulate: wrote %s\n", o.PlacementsFile)
	}
	if o.OutDir != "" {
		path, err := report.WriteHTML(o.OutDir, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "simulate: wrote %s\n", path)
	}
	switch o.Format {
	case "json":
		return report.WriteJSON(stdout, rep)
	case "values":
		return writeValues(stdout, rep)
	}
	return report.WriteTable(stdout, rep)
}

// readInput opens path, gives it to read, and returns its size and
// SHA-256 as an input of role.
// ReadNodes reads a --nodes argument as gpuplane simulate does: a short
// node spec, a cluster YAML file or an openb node CSV. gpuplane quota reads
// its --nodes with it too.
func ReadNodes(arg string) ([]trace.NodeSpec, error) {
	var nodes []trace.NodeSpec
	_, err := readNodes(arg, &nodes)
	return nodes, err
}

// readNodes reads --nodes: a short node spec ("T4 x 200"; see
// trace.ParseNodeSpec), a cluster YAML file (.yaml, .yml; see
// trace.ReadCluster) or an openb node CSV.
func readNodes(arg string, nodes *[]trace.NodeSpec) (engine.Input, error) {
	if trace.IsNodeSpec(arg) {
		groups, err := trace.ParseNodeSpec(arg)
		if err != nil {
			return engine.Input{}, fmt.Errorf("--nodes: %w", err)
		}
		*nodes = trace.Nodes(groups)
		return engine.Input{Role: "nodes", Name: "node spec: " + arg}, nil
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".yaml", ".yml":
		return readInput("nodes", arg, func(f *os.File) error {
			groups, err := trace.ReadCluster(arg, f)
			*nodes = trace.Nodes(groups)
			return err
		})
	}
	return readInput("nodes", arg, func(f *os.File) (err error) { *nodes, err = trace.ReadNodes(arg, f); return err })
}

func readInput(role, path string, read func(*os.File) error) (engine.Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return engine.Input{}, fmt.Errorf("--%s: %w", role, err) // role is the flag's name
	}
	defer f.Close()
	if err := read(f); err != nil {
		return engine.Input{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return engine.Input{}, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return engine.Input{}, fmt.Errorf("%s: %w", path, err)
	}
	return engine.Input{Role: role, Name: path, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// gpuPrice returns the price of one GPU of a model of nodes in USD per
// GPU-hour, as the engine prices it: the model's price over the GPUs its
// partition mode makes of a device (cost.Prices.PartitionUSDPerHour: an
// MI300X in CPX/NPS1 costs 1/8 of the device per GPU; the engine refuses
// two modes of one model).
func gpuPrice(nodes []trace.NodeSpec, p *cost.Prices) func(model string) float64 {
	mode := map[string]gpu.Partition{}
	for _, n := range nodes {
		if n.Partition != (gpu.Partition{}) {
			mode[strings.ToLower(n.Model)] = n.Partition
		}
	}
	return func(model string) float64 { return p.PartitionUSDPerHour(model, mode[strings.ToLower(model)]) }
}
