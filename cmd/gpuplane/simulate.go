package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/report"
	"github.com/gpuplane/gpuplane/internal/sim"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func newSimulateCmd() *cobra.Command {
	var (
		nodesFile, podsFile, mode, policies, format, outDir, pricesFile, tieBreak string
		seeds, parallel                                                           int
		seed                                                                      uint64
		inflate, popularity                                                       float64
	)
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Replay a GPU cluster trace (or the built-in workload) under several placement policies",
		Long: `simulate replays a workload on a modelled GPU cluster through gpuplane's
placement core and reports GPU allocation ratio, fragmentation, queueing
delay and cost, policy against policy.

With no --nodes/--pods it runs the built-in scenario, generated from the
published statistics of the Alibaba openb trace. --nodes and --pods take the
openb CSV format (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (nodesFile == "") != (podsFile == "") {
				return errors.New("--nodes and --pods go together")
			}
			if format != "table" && format != "json" {
				return fmt.Errorf("unknown --format %q (table or json)", format)
			}
			pols, err := placement.ParseNames(policies)
			if err != nil {
				return err
			}
			if seeds < 1 || seeds > 10000 {
				return fmt.Errorf("--seeds %d out of range 1..10000", seeds)
			}
			if seed > math.MaxUint64-uint64(seeds-1) {
				return fmt.Errorf("--seed %d + --seeds %d overflows", seed, seeds)
			}
			if !(inflate > 0 && inflate <= 100) {
				return fmt.Errorf("--inflate %v out of range (0, 100]", inflate)
			}
			if parallel < 0 || parallel > 4096 {
				return fmt.Errorf("--parallel %d out of range 0..4096", parallel)
			}
			if outDir != "" {
				if err := report.CheckDir(outDir); err != nil {
					return fmt.Errorf("--out: %w", err)
				}
			}
			if !(popularity > 0 && popularity <= 1) {
				return fmt.Errorf("--popularity %v out of range (0, 1]", popularity)
			}
			tie, err := placement.ParseTieBreak(tieBreak)
			if err != nil {
				return err
			}
			prices := gpu.Default()
			if pricesFile != "" {
				if err := prices.LoadPrices(pricesFile); err != nil {
					return err
				}
			}
			var nodes []trace.NodeSpec
			var pods []trace.PodSpec
			nName, pName := "built-in nodes", "built-in pods"
			if nodesFile == "" {
				nodes = trace.BuiltinNodes(4)
				pods = trace.BuiltinPods(2400, seed, 10, 24*3600)
			} else {
				nName, pName = nodesFile, podsFile
				if nodes, err = trace.ReadNodesFile(nodesFile); err != nil {
					return err
				}
				if pods, err = trace.ReadPodsFile(podsFile); err != nil {
					return err
				}
			}
			w, err := sim.Prepare(nName, nodes, pName, pods, popularity, prices)
			if err != nil {
				return err
			}
			warnPrices(cmd.ErrOrStderr(), nodes, prices, pricesFile)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			rep, err := sim.Run(ctx, w, sim.Config{Mode: mode, Policies: pols, Seeds: seeds, Seed: seed,
				Inflate: inflate, Popularity: popularity, TieBreak: tie, Parallel: parallel, Prices: prices, Progress: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			rep.Source = report.Source(nName, pName)
			if outDir != "" {
				path, err := report.WriteHTML(outDir, rep)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "simulate: wrote %s\n", path)
			}
			if format == "json" {
				return report.WriteJSON(cmd.OutOrStdout(), rep)
			}
			return report.WriteTable(cmd.OutOrStdout(), rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&nodesFile, "nodes", "", "node list CSV (openb format); default: the built-in cluster")
	f.StringVar(&podsFile, "pods", "", "pod list CSV (openb format); default: the built-in workload")
	f.StringVar(&mode, "mode", "fill", "experiment: fill (Weng et al. 2023) or replay (trace time)")
	f.StringVar(&policies, "policies", "all", "comma-separated policies ("+fmt.Sprint(placement.Names)+") or all")
	f.IntVar(&seeds, "seeds", 3, "runs per policy (1..10000), with seeds --seed, --seed+1, ...")
	f.Uint64Var(&seed, "seed", 42, "first seed")
	f.Float64Var(&inflate, "inflate", 1.3, "fill: stop when arrived GPU demand reaches this multiple of GPU capacity, in (0, 100]")
	f.Float64Var(&popularity, "popularity", 0.95, "share of pods whose shapes form the target workload for FGD and fragmentation")
	f.StringVar(&format, "format", "table", "output: table or json")
	f.StringVar(&outDir, "out", "", "write an HTML report with charts into this directory")
	f.StringVar(&pricesFile, "prices", "", "file of \"MODEL USD_PER_GPU_HOUR\" lines overriding the catalog's prices")
	f.StringVar(&tieBreak, "tie-break", "first", "among equally scored nodes take the first (as the paper's simulator) or a random one (as upstream kube-scheduler)")
	f.IntVar(&parallel, "parallel", 0, "runs at once (0: one per CPU; at most 4096)")
	return cmd
}

// warnPrices warns about GPU models of the cluster without a price (their
// cost counts as 0) and about models priced in the prices file that neither
// the catalog nor the cluster has (a misspelling, most likely).
func warnPrices(out io.Writer, nodes []trace.NodeSpec, prices *gpu.Catalog, pricesFile string) {
	inCluster := map[string]bool{}
	for _, n := range nodes {
		if n.Model == "" || inCluster[n.Model] {
			continue
		}
		inCluster[n.Model] = true
		if p, ok := prices.Price(n.Model); !ok || p == 0 {
			fmt.Fprintf(out, "simulate: warning: no price for GPU model %q; its GPUs cost 0 (give one with --prices)\n", n.Model)
		}
	}
	catalog := gpu.Default()
	for _, name := range prices.Names() {
		if _, known := catalog.Get(name); !known && !inCluster[name] {
			fmt.Fprintf(out, "simulate: warning: %s prices GPU model %q, which neither the catalog nor the cluster has\n", pricesFile, name)
		}
	}
}
