// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
	"github.com/gpuplane/gpuplane/internal/sim/report"
)

const simulateDoc = `Usage: gpuplane simulate [flags]

Replays a workload through gpuplane's placement core; compares and recommends policies.

Flags:
`

// simulateExtra follows the flags in the help: the columns of the table.
var simulateExtra = `
Policies: ` + strings.Join(placement.Names, ",") + `

Columns, fill (the --sharing and --size tables print their legends under them):
` + report.FillLegend + `
Columns, replay:
` + report.ReplayLegend + `
`

// newSimulateCmd returns the simulate command, its flags bound to its own
// options (cli.DefaultOptions until parsed).
func newSimulateCmd() (*command, *cli.Options) {
	o := cli.DefaultOptions()
	c := newCommand("gpuplane simulate", simulateDoc)
	c.extra = simulateExtra
	f := c.fs
	f.StringVar(&o.NodesFile, "nodes", o.NodesFile, "openb CSV, cluster YAML or '4x L4; T4 x 9' (alone: built-in pods)")
	f.StringVar(&o.PodsFile, "pods", o.PodsFile, "pod list: openb CSV or the Alibaba 2025 trace (CSV)")
	f.StringVar(&o.Mode, "mode", o.Mode, "fill (Weng et al. 2023) or replay (in trace time)")
	f.StringVar(&o.Policies, "policies", o.Policies, "comma-separated policies (below), or all")
	f.IntVar(&o.Seeds, "seeds", o.Seeds, "runs per policy, 1..10000, seeds S, S+1, ...")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "first seed")
	f.Float64Var(&o.Inflate, "inflate", o.Inflate, "fill: stop when X times the GPU capacity has arrived")
	f.Float64Var(&o.Popularity, "popularity", o.Popularity, "share of pods whose shapes are FGD's target workload")
	f.StringVar(&o.Format, "format", o.Format, "output on stdout: table, json or values (chart)")
	f.StringVar(&o.OutDir, "out", o.OutDir, "write index.html (charts) and report.json into `DIR`")
	f.BoolVar(&o.Force, "force", o.Force, "overwrite the report in --out, or the --placements file")
	f.StringVar(&o.PlacementsFile, "placements", o.PlacementsFile, "a row per policy, seed and pod: CSV, or JSON lines (.jsonl)")
	f.StringVar(&o.PricesFile, "prices", o.PricesFile, "lines 'MODEL USD_PER_GPU_HOUR' over the default prices")
	f.StringVar(&o.TeamsFile, "teams", o.TeamsFile, "replay: teams file; pods wait for their team's Kueue quota")
	f.BoolVar(&o.Gangs, "gangs", o.Gangs, "replay: pods NAME#0, NAME#1, ... start together, once all fit")
	f.StringVar(&o.TieBreak, "tie-break", o.TieBreak, "equal scores: random (kube-scheduler's) or first")
	f.StringVar(&o.GPUAPI, "gpu-api", o.GPUAPI, "GPUs in the node: the policy's, or dra's")
	f.StringVar(&o.DRAMIGOrder, "dra-mig-order", o.DRAMIGOrder, "dra: MIG placement order: core (default), table or stale")
	f.IntVar(&o.Parallel, "parallel", o.Parallel, "runs at once (0: one per CPU, at most 4096)")
	f.StringVar(&o.Sharing, "sharing", o.Sharing, "compare: exclusive,fractional,mig,timeslice:N,partition:CPX/NPS1")
	f.StringVar(&o.MIGConfig, "mig-config", o.MIGConfig, "--sharing mig: MIG layouts, an NVIDIA mig-parted config file")
	f.StringVar(&o.MIGConfigName, "mig-config-name", o.MIGConfigName, "the configuration of --mig-config (default: its only one)")
	f.StringVar(&o.SnapshotFile, "snapshot", o.SnapshotFile, "kubectl get nodes,pods[,resourceslices,...] -A -o json")
	f.BoolVar(&o.SnapshotEmpty, "snapshot-empty", o.SnapshotEmpty, "with --snapshot: all its pods on an empty copy of its nodes")
	f.StringVar(&o.Size, "size", o.Size, "nodes to add for 'placed>=99%' (fill), 'p95wait<=10m' (replay)")
	f.StringVar(&o.PodVendors, "pod-vendors", o.PodVendors, "vendors the GPU pods that name none accept: nvidia, 'nvidia|amd'")
	c.alias("o", "format")
	for name, arg := range map[string]string{"nodes": "NODES", "pods": "PODS", "mode": "fill|replay", "format": "FORMAT",
		"tie-break": "random|first", "gpu-api": "API", "dra-mig-order": "ORDER", "sharing": "MODES", "size": "TARGET", "pod-vendors": "LIST",
		"placements": "FILE", "prices": "FILE", "teams": "FILE", "snapshot": "FILE", "mig-config": "FILE", "mig-config-name": "NAME",
		"policies": "LIST|all", "seeds": "N", "seed": "S", "inflate": "X", "popularity": "P", "parallel": "N"} {
		c.args[name] = arg
	}
	return c, &o
}

// simulateHelp is the help of gpuplane simulate, for tests.
func simulateHelp() string {
	c, _ := newSimulateCmd()
	var b strings.Builder
	c.help(&b)
	return b.String()
}
