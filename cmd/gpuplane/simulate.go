package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
)

const simulateDoc = `simulate replays a workload on a modelled GPU cluster through gpuplane's
placement core and reports GPU allocation ratio, fragmentation, queueing
delay and cost, policy against policy.

With no --nodes/--pods it runs the built-in scenario, generated from the
published statistics of the Alibaba openb trace. --nodes takes an openb node
CSV (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023), a cluster
YAML file (.yaml, .yml) or a short spec such as 'A100-80GB x 16, T4 x 100';
--pods takes an openb pod CSV or the Alibaba 2025 trace
(cluster-trace-gpu-v2025), told apart by the header. See docs/simulate.md.

Usage: gpuplane simulate [flags]   (flags take one or two dashes)

Flags:
`

// newSimulateCmd returns the simulate command's flags, bound to its own
// options (cli.DefaultOptions until parsed); errors and help go to
// stderr.
func newSimulateCmd(stderr io.Writer) (*flag.FlagSet, *cli.Options) {
	o := cli.DefaultOptions()
	f := flag.NewFlagSet("gpuplane simulate", flag.ContinueOnError)
	f.SetOutput(stderr)
	f.Usage = func() {
		fmt.Fprint(f.Output(), simulateDoc)
		f.PrintDefaults()
	}
	f.StringVar(&o.NodesFile, "nodes", o.NodesFile, "node list: openb CSV, cluster YAML (.yaml, .yml) or a spec 'MODEL x COUNT, ...'; default: the built-in cluster")
	f.StringVar(&o.PodsFile, "pods", o.PodsFile, "pod list CSV: openb or the Alibaba 2025 trace; default: the built-in workload")
	f.StringVar(&o.Mode, "mode", o.Mode, "experiment: fill (Weng et al. 2023) or replay (trace time)")
	f.StringVar(&o.Policies, "policies", o.Policies, "comma-separated policies ("+fmt.Sprint(placement.Names)+") or all")
	f.IntVar(&o.Seeds, "seeds", o.Seeds, "runs per policy (1..10000), with seeds --seed, --seed+1, ...")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "first seed")
	f.Float64Var(&o.Inflate, "inflate", o.Inflate, "fill only: stop when arrived GPU demand reaches this multiple of GPU capacity, in (0, 100]")
	f.Float64Var(&o.Popularity, "popularity", o.Popularity, "share of pods whose shapes form the target workload for FGD and fragmentation")
	f.StringVar(&o.Format, "format", o.Format, "output: table or json")
	f.StringVar(&o.OutDir, "out", o.OutDir, "write an HTML report with charts into this directory")
	f.BoolVar(&o.Force, "force", o.Force, "overwrite a report in --out, or the --placements file")
	f.StringVar(&o.PlacementsFile, "placements", o.PlacementsFile, "write one row per policy, seed and pod into this file: CSV, or JSON lines if it ends in .jsonl or .ndjson")
	f.StringVar(&o.PricesFile, "prices", o.PricesFile, "file of \"MODEL USD_PER_GPU_HOUR\" lines overriding the default prices")
	f.StringVar(&o.TeamsFile, "teams", o.TeamsFile, "replay only: teams file; GPU pods are admitted by their team's Kueue quota (team column, else FNV-1a of the name, or of the gang NAME for NAME#i) before placement")
	f.StringVar(&o.TieBreak, "tie-break", o.TieBreak, "among equally scored nodes take the first (as the paper's simulator) or a random one (as upstream kube-scheduler)")
	f.IntVar(&o.Parallel, "parallel", o.Parallel, "runs at once (0: one per CPU; at most 4096)")
	f.StringVar(&o.Sharing, "sharing", o.Sharing, "compare sharing modes: comma-separated exclusive, fractional, mig, timeslice:N (N divides 1000); default: the workload as given (fractional), no comparison")
	f.StringVar(&o.MIGConfig, "mig-config", o.MIGConfig, "--sharing mig: NVIDIA mig-parted config file giving the MIG layouts (device-filter: catalog model names); default: the cluster YAML's mig fields, else chosen from the workload")
	f.StringVar(&o.MIGConfigName, "mig-config-name", o.MIGConfigName, "the configuration of --mig-config to use (default: its only one)")
	f.StringVar(&o.SnapshotFile, "snapshot", o.SnapshotFile, "FILE of kubectl get nodes,pods -A -o json: place its pending pods on its nodes, running pods in place (fill, each pod once)")
	f.BoolVar(&o.SnapshotEmpty, "snapshot-empty", o.SnapshotEmpty, "with --snapshot: place all its pods that have not ended on an empty copy of its nodes")
	f.StringVar(&o.Size, "size", o.Size, "find the smallest cluster in the node list's mix that meets a target: 'placed>=99%' (fill, each pod once) or 'p95wait<=10m' (replay), per policy")
	return f, &o
}
