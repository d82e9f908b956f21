// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package cli runs gpuplane cost (cmd/gpuplane-cost): it reads the node
// agent's series (internal/cost/source), attributes the holdings to jobs and
// teams, keeps the books (internal/cost/alloc) and prints the report as a
// table, CSV or JSON. docs/cost.md describes the command.
package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/owners"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/cost/report"
	"github.com/gpuplane/gpuplane/internal/cost/rightsize"
	"github.com/gpuplane/gpuplane/internal/cost/source"
	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"github.com/gpuplane/gpuplane/internal/quota"
)

// Options are the command's flags.
type Options struct {
	// Prometheus is the Prometheus server's URL; OpenMetrics an OpenMetrics
	// file. Exactly one is given.
	Prometheus, OpenMetrics string
	// From and To bound the window: RFC 3339 or Unix seconds. With
	// OpenMetrics, empty means the file's span (source.File.DefaultWindow);
	// with Prometheus, an empty To is now rounded down to the step, an
	// empty From DefaultWindow before To. OpenMetrics "-" is standard
	// input.
	From, To string
	// Step is the time between evaluations; 0 means 30 s from Prometheus
	// and the file's sample interval from OpenMetrics.
	Step time.Duration
	// PricesFile overrides the default prices (internal/cost/prices); TeamsFile
	// maps namespaces to teams (the quota teams file).
	PricesFile, TeamsFile string
	// By is pod, job, namespace, team, node or model; Format table, csv or
	// json.
	By, Format string
	// Kubeconfig, when set, turns on owner lookup (internal/cost/owners): each
	// pod's job is its top owner, and TeamLabel names the namespace label
	// that gives the team (the teams file wins where both give one).
	Kubeconfig, TeamLabel string
	// Out, when set, is a directory for the HTML report (index.html) and
	// report.json (the --format json output); Force overwrites a report
	// there.
	Out   string
	Force bool
	// Serve, when set, is the address (host:port; port 0 picks one) on
	// which to serve cost rates over the trailing ServeWindow, refreshed
	// every ServeRefresh, for Prometheus (internal/cost/export) until ctx
	// ends; it needs Prometheus. ServeWindow and ServeRefresh are for
	// Serve only; 0 means 1 h and 1 min.
	Serve                     string
	ServeWindow, ServeRefresh time.Duration
	// now is the clock of --serve's windows and of --prometheus's
	// default window; nil is time.Now (tests set it to reach the bundled
	// day).
	now func() time.Time
	// RightsizeThreshold: a job is a right-sizing candidate when its p95
	// utilisation is below this fraction of the share it held, in (0, 1];
	// 0 means rightsize.DefaultThreshold (0.5). cmd/gpuplane-cost passes
	// the flag's 0.5 default, so a 0 given there is refused.
	RightsizeThreshold float64
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{By: string(alloc.ByNamespace), Format: "table", RightsizeThreshold: rightsize.DefaultThreshold}
}

// Report is what the command prints, as JSON with --format json.
type Report struct {
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	StepSeconds float64   `json:"step_seconds"`
	By          string    `json:"by"`
	GPUs        int       `json:"gpus"`
	Rows        []Row     `json:"rows"`
	Idle        []IdleRow `json:"idle"`
	// AssetUSD is the GPUs' cost over the window: the sum of every row's
	// and idle row's cost.
	AssetUSD string  `json:"asset_usd"`
	GPUHours float64 `json:"gpu_hours"`
	// UnattributedSeries counts share series without pod labels, priced
	// as "(unattributed)".
	UnattributedSeries int      `json:"unattributed_series"`
	Warnings           []string `json:"warnings"`
	// Rightsizing has one entry per job (internal/cost/rightsize), largest
	// saving first.
	Rightsizing []Rightsizing `json:"rightsizing"`
}

// Row is one group's cost; money in USD with two decimals.
type Row struct {
	Key               string   `json:"key"`
	GPUHoursAllocated float64  `json:"gpu_hours_allocated"`
	GPUHoursUsed      float64  `json:"gpu_hours_used"`
	Efficiency        float64  `json:"efficiency"`
	CostUSD           string   `json:"cost_usd"`
	UnusedUSD         string   `json:"unused_usd"`
	Models            []string `json:"models"`
}

// IdleRow is one node and model's capacity no pod held.
type IdleRow struct {
	Node     string  `json:"node"`
	Model    string  `json:"model"`
	GPUHours float64 `json:"gpu_hours"`
	CostUSD  string  `json:"cost_usd"`
}

// Attribute fills each holding's job and team. Team: the teams file's
// team of the pod's namespace (teams: namespace to team), else the team
// label of the namespace from owner lookup, else none. Job: the top owner
// of a pod owner lookup found; else the job the series' pod labels gave
// (cost/source, owners.JobFromLabels), else the pod. infos is owner lookup's
// answer by namespace and pod; nil without --kubeconfig.
func Attribute(holdings []alloc.Holding, teams map[string]string, infos map[[2]string]owners.Info) {
	for i := range holdings {
		h := &holdings[i]
		info, ok := infos[[2]string{h.Namespace, h.Pod}]
		if ok && info.Found {
			h.Job = info.Job
		}
		h.Team = teams[h.Namespace]
		if h.Team == "" && ok {
			h.Team = info.Team
		}
	}
}

// lookupOwners looks up the distinct pods of the holdings (not the
// unattributed ones) with owner lookup, by namespace and pod.
func lookupOwners(ctx context.Context, kubeconfig, teamLabel string, holdings []alloc.Holding) (map[[2]string]owners.Info, error) {
	r, err := owners.New(kubeconfig, teamLabel)
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	var pods []owners.Pod
	for _, h := range holdings {
		k := [2]string{h.Namespace, h.Pod}
		if h.Pod == "" || seen[k] {
			continue
		}
		seen[k] = true
		pods = append(pods, owners.Pod{Namespace: h.Namespace, Name: h.Pod})
	}
	infos, err := r.Lookup(ctx, pods)
	if err != nil {
		return nil, fmt.Errorf("owner lookup (--kubeconfig %s): %w", kubeconfig, err)
	}
	out := make(map[[2]string]owners.Info, len(infos))
	for _, x := range infos {
		out[[2]string{x.Namespace, x.Pod}] = x
	}
	return out, nil
}

// Run runs the command and prints the report to stdout, warnings to
// stderr. On error it prints nothing to stdout. After the option checks
// it runs one step after another: read the window's series, attribute the
// holdings to jobs and teams, account for the cost, emit the report. A
// failed run leaves no --out directory it created behind.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (err error) {
	by, err := o.check()
	if err != nil {
		return err
	}
	if o.Out != "" {
		made := htmlkit.MissingDirs(o.Out)
		if err := htmlkit.CheckDir(o.Out, o.Force); err != nil {
			htmlkit.RemoveEmptyDirs(made)
			return err
		}
		// A failed run leaves no directory it created behind.
		defer func() {
			if err != nil {
				htmlkit.RemoveEmptyDirs(made)
			}
		}()
	}
	c := &command{o: o, by: by, stdout: stdout, stderr: stderr}
	if err := c.load(); err != nil {
		return err
	}
	if o.Serve != "" {
		return serve(ctx, o, c.attribute, stderr)
	}
	w, res, err := c.read(ctx)
	if err != nil {
		return err
	}
	if err := c.attribute(ctx, res); err != nil {
		return err
	}
	rep, recs, err := c.account(w, res)
	if err != nil {
		return err
	}
	return c.emit(res, rep, recs)
}

// check checks the options, sets --serve's default window and refresh,
// and returns the grouping of --by.
func (o *Options) check() (alloc.By, error) {
	by, err := alloc.ParseBy(o.By)
	if err != nil {
		return "", err
	}
	if o.Format != "table" && o.Format != "csv" && o.Format != "json" {
		return "", fmt.Errorf("format %q: want table, csv or json", o.Format)
	}
	if (o.Prometheus == "") == (o.OpenMetrics == "") {
		return "", fmt.Errorf("give one of --prometheus URL and --openmetrics FILE")
	}
	if o.TeamLabel != "" && o.Kubeconfig == "" {
		return "", fmt.Errorf("--team-label needs --kubeconfig")
	}
	if by == alloc.ByTeam && o.TeamsFile == "" && o.TeamLabel == "" {
		return "", fmt.Errorf("--by team needs --teams FILE or --kubeconfig with --team-label: without them every namespace's team is (none)")
	}
	if o.Step < 0 || o.Step%time.Millisecond != 0 {
		return "", fmt.Errorf("step %v: want a positive whole number of milliseconds", o.Step)
	}
	if o.RightsizeThreshold < 0 || o.RightsizeThreshold > 1 {
		return "", fmt.Errorf("--rightsize-threshold %v: want a fraction in (0, 1]", o.RightsizeThreshold)
	}
	if o.Force && o.Out == "" {
		return "", fmt.Errorf("--force overwrites a report in --out: give --out")
	}
	return by, o.checkServe()
}

// checkServe checks the --serve options and sets the default window and
// refresh.
func (o *Options) checkServe() error {
	if o.Serve == "" && (o.ServeWindow != 0 || o.ServeRefresh != 0) {
		return fmt.Errorf("--serve-window and --serve-refresh go with --serve")
	}
	if o.Serve == "" {
		return nil
	}
	if o.ServeWindow == 0 {
		o.ServeWindow = time.Hour
	}
	if o.ServeRefresh == 0 {
		o.ServeRefresh = time.Minute
	}
	switch {
	case o.Prometheus == "":
		return fmt.Errorf("--serve needs --prometheus")
	case o.From != "" || o.To != "":
		return fmt.Errorf("--serve reads a trailing window (--serve-window), not --from and --to")
	case o.Out != "":
		return fmt.Errorf("--serve writes no report: no --out")
	case o.Format != "table":
		return fmt.Errorf("--serve serves /metrics in Prometheus's format: no --format")
	case o.ServeWindow <= 0 || o.ServeRefresh <= 0:
		return fmt.Errorf("--serve-window %v, --serve-refresh %v: want positive durations", o.ServeWindow, o.ServeRefresh)
	}
	return nil
}

// command is one run of gpuplane cost with checked options: the prices
// and teams it loaded, and where it prints.
type command struct {
	o              Options
	by             alloc.By
	prices         *cost.Prices
	teams          map[string]string
	stdout, stderr io.Writer
}

// load reads the prices (the defaults, or --prices) and the teams file.
func (c *command) load() error {
	c.prices = cost.Default()
	if c.o.PricesFile != "" {
		if err := c.prices.LoadPrices(c.o.PricesFile); err != nil {
			return err
		}
	}
	c.teams = map[string]string{}
	if c.o.TeamsFile != "" {
		var err error
		if c.teams, err = quota.LoadNamespaces(c.o.TeamsFile); err != nil {
			return err
		}
	}
	return nil
}

// read reads the window's series from the OpenMetrics file or from
// Prometheus, and returns the window read.
func (c *command) read(ctx context.Context) (source.Window, *source.Result, error) {
	w := source.Window{Step: c.o.Step.Milliseconds()}
	if c.o.OpenMetrics != "" {
		return readOpenMetrics(c.o, w)
	}
	return readPrometheus(ctx, c.o, w)
}

// readOpenMetrics reads --openmetrics over w: the step defaults to the
// file's sample interval, and a missing --from or --to to the file's span.
func readOpenMetrics(o Options, w source.Window) (source.Window, *source.Result, error) {
	f, err := source.LoadOpenMetrics(o.OpenMetrics)
	if err != nil {
		return w, nil, err
	}
	if w.Step == 0 {
		w.Step = f.Interval()
	}
	def := w // the file's span, on a grid placed on its samples
	if o.From == "" || o.To == "" {
		if def, err = f.DefaultWindow(w.Step); err != nil {
			return w, nil, err
		}
	}
	if w.From, err = parseTime("from", o.From, def.From); err != nil {
		return w, nil, err
	}
	if w.To, err = parseTime("to", o.To, def.To); err != nil {
		return w, nil, err
	}
	var from, to string
	if o.From == "" {
		from = "the file's first sample,"
	}
	if o.To == "" {
		to = "one step past the file's last sample,"
	}
	if err := checkWindow(w, from, to); err != nil {
		return w, nil, err
	}
	res, err := source.ReadOpenMetrics(f, w)
	if err != nil {
		return w, nil, fmt.Errorf("%s: %w", o.OpenMetrics, err)
	}
	return w, res, nil
}

// DefaultWindow is the window read from Prometheus without --from: the
// 24 hours before --to. OpenCost's allocation API has no default (its
// `window` is required, opencost/opencost docs/api.md); its command-line
// client, kubectl-cost, defaults to `--window 1d` (pkg/cmd/common.go),
// which OpenCost reads as whole UTC days up to the end of today
// (core/pkg/opencost/window.go, parseWindow). gpuplane takes the last 24
// hours instead, OpenCost's `window=24h`, [now - 24h, now): the end of
// today has no samples yet and would be charged as idle.
const DefaultWindow = 24 * time.Hour

// readPrometheus reads the window --from to --to from --prometheus; the
// step defaults to source.DefaultStep. Without --to the window ends now,
// rounded down to the step (a whole step of Unix time, so that two runs
// within a step read the same grid); without --from it starts
// DefaultWindow before its end.
func readPrometheus(ctx context.Context, o Options, w source.Window) (source.Window, *source.Result, error) {
	if w.Step == 0 {
		w.Step = source.DefaultStep
	}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	var err error
	if w.To, err = parseTime("to", o.To, floorStep(now().UnixMilli(), w.Step)); err != nil {
		return w, nil, err
	}
	if w.From, err = parseTime("from", o.From, w.To-DefaultWindow.Milliseconds()); err != nil {
		return w, nil, err
	}
	var from, to string
	if o.From == "" {
		from = "24 hours before --to,"
	}
	if o.To == "" {
		to = "now, rounded down to the step,"
	}
	if err := checkWindow(w, from, to); err != nil {
		return w, nil, err
	}
	res, err := source.ReadPrometheus(ctx, o.Prometheus, w)
	if err != nil {
		return w, nil, err
	}
	return w, res, nil
}

// attribute is attribute with the command's options, prices and teams;
// --serve calls it on each window it reads.
func (c *command) attribute(ctx context.Context, res *source.Result) error {
	return attribute(ctx, c.o, res, c.prices, c.teams)
}

// account keeps the books over the window (alloc.Compute) and returns the
// report by --by, with its warnings and right-sizing, and the right-sizing
// recommendations for the HTML report.
func (c *command) account(w source.Window, res *source.Result) (Report, []rightsize.Recommendation, error) {
	l, err := alloc.Compute(res.Input)
	if err != nil {
		return Report{}, nil, err
	}
	r := l.Report(c.by)
	warnings := append(res.Warnings, l.Warnings...)
	warnings = append(warnings, unmatchedTeams(c.o.TeamsFile, c.teams, res.Input.Holdings)...)
	if c.o.PricesFile != "" {
		var models []string
		for _, g := range res.Input.GPUs {
			models = append(models, g.Model)
		}
		warnings = append(warnings, c.prices.Unknown(models, c.o.PricesFile)...)
	}
	rep := newReport(w, r, res, warnings)
	var recs []rightsize.Recommendation
	if rep.Rightsizing, recs, err = rightsizing(res, l.Report(alloc.ByJob), c.o.RightsizeThreshold); err != nil {
		return Report{}, nil, err
	}
	return rep, recs, nil
}

// unmatchedTeams warns of each team of the teams file (file; teams:
// namespace to team) none of whose namespaces holds a GPU in the window
// (holdings): a misspelt or renamed namespace would otherwise leave the
// team silently out of the report, its pods' cost under "(none)".
func unmatchedTeams(file string, teams map[string]string, holdings []alloc.Holding) []string {
	held := map[string]bool{}
	for _, h := range holdings {
		held[h.Namespace] = true
	}
	byTeam := map[string][]string{}
	matched := map[string]bool{}
	for ns, team := range teams {
		byTeam[team] = append(byTeam[team], ns)
		if held[ns] {
			matched[team] = true
		}
	}
	var out []string
	for _, team := range slices.Sorted(maps.Keys(byTeam)) {
		if !matched[team] {
			slices.Sort(byTeam[team])
			out = append(out, fmt.Sprintf("teams file %s: team %s matches no namespace in the window (its namespaces: %s)", file, team, strings.Join(byTeam[team], ", ")))
		}
	}
	return out
}

// emit writes the HTML report with --out, then the report in --format to
// stdout and its warnings to stderr.
func (c *command) emit(res *source.Result, rep Report, recs []rightsize.Recommendation) error {
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return err
	}
	if c.o.Out != "" {
		path, err := writeOut(c.o.Out, res, recs, js.Bytes())
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "report: %s\n", path)
	}
	out, err := format(c.o.Format, rep, &js)
	if err != nil {
		return err
	}
	for _, x := range rep.Warnings {
		fmt.Fprintf(c.stderr, "warning: %s\n", x)
	}
	_, err = c.stdout.Write(out.Bytes())
	return err
}

// writeOut writes the HTML report and report.json (js) into dir and
// returns the HTML file's path.
func writeOut(dir string, res *source.Result, recs []rightsize.Recommendation, js []byte) (string, error) {
	cr, err := report.Build(res.Input)
	if err != nil {
		return "", err
	}
	cr.Rightsizing = recs
	return report.Write(dir, cr, js)
}

// format returns the report in the format: js itself for json, else the
// report written as csv or table.
func format(f string, rep Report, js *bytes.Buffer) (*bytes.Buffer, error) {
	var err error
	buf := js
	switch f {
	case "csv":
		buf = new(bytes.Buffer)
		err = writeCSV(buf, rep)
	case "table":
		buf = new(bytes.Buffer)
		err = writeTable(buf, rep)
	}
	return buf, err
}

// attribute fills the holdings' jobs and teams (Attribute; owner lookup
// with --kubeconfig) and sets the prices.
func attribute(ctx context.Context, o Options, res *source.Result, prices *cost.Prices, teams map[string]string) error {
	var infos map[[2]string]owners.Info
	if o.Kubeconfig != "" {
		var err error
		if infos, err = lookupOwners(ctx, o.Kubeconfig, o.TeamLabel, res.Input.Holdings); err != nil {
			return err
		}
	}
	Attribute(res.Input.Holdings, teams, infos)
	res.Input.Prices = prices
	return nil
}

// parseTime reads an RFC 3339 time or Unix seconds (with a fraction) as
// Unix milliseconds; empty gives def.
func parseTime(flag, s string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixMilli(), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f < 1e11 {
		return int64(f*1000 + 0.5), nil
	}
	return 0, fmt.Errorf("--%s %q: want an RFC 3339 time (2026-11-01T00:00:00Z) or Unix seconds", flag, s)
}

// checkWindow refuses a window whose end is not after its start, in the
// terms of the flags (RFC 3339); from and to name a bound that is a
// default ("the file's first sample"), "" one given by --from or --to.
func checkWindow(w source.Window, from, to string) error {
	if w.To <= w.From {
		rfc := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
		if from == "" {
			from = "--from"
		}
		if to == "" {
			to = "--to"
		}
		return fmt.Errorf("window: %s %s is not after %s %s", to, rfc(w.To), from, rfc(w.From))
	}
	return nil
}

// floorStep returns the Unix millisecond ms rounded down to a whole
// multiple of step.
func floorStep(ms, step int64) int64 {
	r := ms % step
	if r < 0 {
		r += step
	}
	return ms - r
}

// usd formats cents as USD with two decimals.
func usd(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

func newReport(w source.Window, r alloc.Report, res *source.Result, warnings []string) Report {
	rep := Report{
		From: time.UnixMilli(w.From).UTC(), To: time.UnixMilli(w.To).UTC(), StepSeconds: float64(w.Step) / 1000,
		By: string(r.By), GPUs: len(res.Input.GPUs), AssetUSD: usd(r.AssetCents), GPUHours: r.GPUHours,
		UnattributedSeries: res.Unattributed, Warnings: warnings, Rows: []Row{}, Idle: []IdleRow{},
	}
	if rep.Warnings == nil {
		rep.Warnings = []string{}
	}
	for _, x := range r.Rows {
		rep.Rows = append(rep.Rows, Row{Key: x.Key, GPUHoursAllocated: x.GPUHoursAllocated, GPUHoursUsed: x.GPUHoursUsed,
			Efficiency: x.Efficiency, CostUSD: usd(x.CostCents), UnusedUSD: usd(x.UnusedCents), Models: x.Models})
	}
	for _, x := range r.Idle {
		rep.Idle = append(rep.Idle, IdleRow{Node: x.Node, Model: x.Model, GPUHours: x.GPUHours, CostUSD: usd(x.CostCents)})
	}
	return rep
}

func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func writeTable(out io.Writer, r Report) error {
	fmt.Fprintf(out, "GPU cost from %s to %s (step %s), %d GPUs, by %s\n\n", r.From.Format(time.RFC3339Nano), r.To.Format(time.RFC3339Nano), time.Duration(r.StepSeconds*float64(time.Second)), r.GPUs, r.By)
	// Numbers align right; the first column is padded to align left.
	keys := []string{strings.ToUpper(r.By), "total"}
	for _, x := range r.Rows {
		keys = append(keys, x.Key)
	}
	for _, x := range r.Idle {
		keys = append(keys, "idle "+x.Node)
	}
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	key := func(k string) string { return k + strings.Repeat(" ", width-len(k)) }
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, key(strings.ToUpper(r.By))+"\tGPU-H ALLOCATED\tGPU-H USED\tEFFICIENCY\tCOST USD\tUNUSED USD\tMODELS\t")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s\t%s\t%s\t\n", key(x.Key), f3(x.GPUHoursAllocated), f3(x.GPUHoursUsed), x.Efficiency*100, x.CostUSD, x.UnusedUSD, strings.Join(x.Models, ","))
	}
	for _, x := range r.Idle {
		fmt.Fprintf(tw, "%s\t%s\t\t\t%s\t\t%s\t\n", key("idle "+x.Node), f3(x.GPUHours), x.CostUSD, x.Model)
	}
	fmt.Fprintf(tw, "%s\t%s\t\t\t%s\t\t\t\n", key("total"), f3(r.GPUHours), r.AssetUSD)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Rightsizing) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\nRight-sizing (docs/cost.md): the smallest share that held each job's p95 utilisation and peak memory\n\n")
	width = len("JOB")
	for _, x := range r.Rightsizing {
		width = max(width, len(x.Job))
	}
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, key("JOB")+"\tMODEL\tHELD\tP95 UTIL\tPEAK MiB\tCOST USD\tSAVING USD\t  RECOMMENDED, OR WHY NONE")
	for _, x := range r.Rightsizing {
		p95, peak := "-", "-"
		if x.P95Util != nil {
			p95 = f3(*x.P95Util)
		}
		if x.PeakMiB != nil {
			peak = strconv.FormatFloat(*x.PeakMiB, 'f', 0, 64)
		}
		what := x.Recommended
		if what == "" {
			what = x.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", key(x.Job), x.Model, x.Held, p95, peak, x.CostUSD, x.SavingUSD, what)
	}
	return tw.Flush()
}

// csvHeader is the CSV header; every record has its fields (encoding/csv
// reads only records of one length).
var csvHeader = []string{"kind", "key", "gpu_hours_allocated", "gpu_hours_used", "efficiency", "cost_usd", "unused_usd", "models",
	"held", "p95_util", "peak_mib", "recommended", "saving_usd", "reason"}

// writeCSV writes the report as CSV: one record per row, idle row, the
// total and right-sizing, each of len(csvHeader) fields. A row's models are
// joined by ";" (a model name may hold spaces: "NVIDIA B200").
func writeCSV(out io.Writer, r Report) error {
	cw := csv.NewWriter(out)
	rec := func(f ...string) { _ = cw.Write(append(f, make([]string, len(csvHeader)-len(f))...)) }
	rec(csvHeader...)
	for _, x := range r.Rows {
		rec("row", x.Key, fmtF(x.GPUHoursAllocated), fmtF(x.GPUHoursUsed), fmtF(x.Efficiency), x.CostUSD, x.UnusedUSD, strings.Join(x.Models, ";"))
	}
	for _, x := range r.Idle {
		rec("idle", x.Node, fmtF(x.GPUHours), "", "", x.CostUSD, "", x.Model)
	}
	rec("total", "", fmtF(r.GPUHours), "", "", r.AssetUSD)
	// Right-sizing rows: the job, its GPU-hours and cost, its model.
	for _, x := range r.Rightsizing {
		p95, peak := "", ""
		if x.P95Util != nil {
			// 7 significant digits, the float32 samples': 0.3, not
			// 0.3000000119.
			p95 = strconv.FormatFloat(*x.P95Util, 'g', 7, 64)
		}
		if x.PeakMiB != nil {
			peak = fmtF(*x.PeakMiB)
		}
		rec("rightsize", x.Job, fmtF(x.GPUHours), "", "", x.CostUSD, "", x.Model, x.Held, p95, peak, x.Recommended, x.SavingUSD, x.Reason)
	}
	cw.Flush()
	return cw.Error()
}

func fmtF(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
