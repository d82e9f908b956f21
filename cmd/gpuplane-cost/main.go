// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpuplane-cost is gpuplane cost: GPU cost per pod, job, namespace,
// team, node or model from the node agent's metrics, read from Prometheus
// or an OpenMetrics file (internal/cost/cli). `gpuplane cost ARGS` runs it.
// This file wires the command line only.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gpuplane/gpuplane/internal/cost/cli"
	"github.com/gpuplane/gpuplane/internal/version"
)

const name = "gpuplane-cost"

// viaGpuplane is the argv[0] `gpuplane cost` runs this binary with
// (cmd/gpuplane, cost.go): errors and usage then say "gpuplane cost", the
// command the user typed, not "gpuplane-cost".
const viaGpuplane = "gpuplane cost"

func main() {
	prog := progName(os.Args[0])
	if err := newCostCmd(prog).Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		os.Exit(1)
	}
}

// progName returns the name the command goes by: "gpuplane cost" when
// gpuplane ran it (argv0 viaGpuplane), else "gpuplane-cost", whatever the
// path or name of the binary.
func progName(argv0 string) string {
	if argv0 == viaGpuplane {
		return viaGpuplane
	}
	return name
}

func newCostCmd(prog string) *cobra.Command {
	o := cli.DefaultOptions()
	cmd := &cobra.Command{
		Use:   prog + " (--prometheus URL | --openmetrics FILE) [flags]",
		Short: "GPU cost per pod, job, namespace, team, node or model",
		Long: `gpuplane-cost attributes the GPUs' cost over a window to the pods that
held them (whole GPUs, MIG instances, time-slicing replicas and milli-GPU
shares priced as shares) and the rest to idle capacity per node and model,
exact to the cent. It reads the node agent's series from Prometheus's HTTP
API or from an OpenMetrics file. See docs/cost.md.`,
		Version:       version.Get().String(name),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Options take 0 as the default threshold; a 0 given here is
			// no threshold.
			if cmd.Flags().Changed("rightsize-threshold") && o.RightsizeThreshold == 0 {
				return fmt.Errorf("--rightsize-threshold 0: want a fraction in (0, 1]")
			}
			// Options take 0 as the default step; a 0 given here is no
			// step.
			if cmd.Flags().Changed("step") && o.Step == 0 {
				return fmt.Errorf("--step 0: want a positive step (leave --step out for the default)")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return cli.Run(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	f := cmd.Flags()
	f.StringVar(&o.Prometheus, "prometheus", o.Prometheus, "Prometheus server URL, e.g. http://prometheus:9090")
	f.StringVar(&o.OpenMetrics, "openmetrics", o.OpenMetrics, "OpenMetrics file with timestamps (the format promtool backfills), - for standard input, instead of --prometheus")
	f.StringVar(&o.From, "from", o.From, "window start: RFC 3339 or Unix seconds (--openmetrics default: the file's first sample, on the samples' phase; --prometheus default: 24 hours before --to)")
	f.StringVar(&o.To, "to", o.To, "window end, exclusive: RFC 3339 or Unix seconds (--openmetrics default: the file's last sample plus its finest sample interval; --prometheus default: now, rounded down to the step)")
	f.DurationVar(&o.Step, "step", o.Step, "time between evaluations; at least the scrape interval (default 30s with --prometheus, the file's sample interval with --openmetrics, which refuses another)")
	f.StringVar(&o.PricesFile, "prices", o.PricesFile, `prices file, lines "MODEL USD_PER_GPU_HOUR", overriding the defaults (docs/simulate.md)`)
	f.StringVar(&o.TeamsFile, "teams", o.TeamsFile, "teams file (gpuplane quota's): namespaces to teams, for --by team")
	f.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file: look each pod's job up as its top owner (Job, Deployment, PyTorchJob, ...) and the team from --team-label")
	f.StringVar(&o.TeamLabel, "team-label", o.TeamLabel, "namespace label whose value is the team, with --kubeconfig (the --teams file wins where both give one)")
	f.StringVar(&o.By, "by", o.By, "group rows by pod, job, namespace, team, node or model")
	f.StringVar(&o.Format, "format", o.Format, "output format: table, csv or json")
	f.StringVar(&o.Out, "out", o.Out, "directory for the HTML report (index.html) and report.json (the --format json output)")
	f.BoolVar(&o.Force, "force", o.Force, "overwrite a report already in --out")
	f.StringVar(&o.Serve, "serve", o.Serve, "serve cost rates for Prometheus on this address (e.g. :9402) until SIGTERM or SIGINT; needs --prometheus")
	f.DurationVar(&o.ServeWindow, "serve-window", o.ServeWindow, "with --serve: the trailing window the rates are computed over (default 1h)")
	f.DurationVar(&o.ServeRefresh, "serve-refresh", o.ServeRefresh, "with --serve: time between refreshes (default 1m)")
	f.Float64Var(&o.RightsizeThreshold, "rightsize-threshold", o.RightsizeThreshold, "right-sizing: a job is a candidate when its p95 utilisation is below this fraction, in (0, 1], of the share it held")
	return cmd
}
