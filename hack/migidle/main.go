// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command migidle counts, at the end of each run of a `gpuplane simulate
// --sharing mig --placements FILE` fill, the idle compute slices of the
// GPUs that hold MIG instances, and how many of them sit on nodes with
// under 4 cores of CPU free: the figures of docs/simulate-validation.md,
// "Where the MIG GPUs go".
//
//	go run ./hack/migidle --nodes 'A100-80GB x 60' --pods $T/openb_pod_list_gpushare100.csv PLACEMENTS.csv
//
// A GPU counts its instances' shares (the placements' gpu_milli: 142 a
// slice, gpu.MIGShareMilli) as round(Σ × 7 / 1000) slices held; a GPU
// holding one whole-GPU pod (1000) or nothing is no MIG GPU. A node's CPU
// free is its CPU less the CPU of the pods placed on it (their cpu_milli
// in the pod list). One line per policy and seed, then the totals.
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/gpuplane/gpuplane/internal/trace"
)

func main() {
	nodes := flag.String("nodes", "", "the node list simulated: a spec such as 'A100-80GB x 60' or a cluster YAML")
	pods := flag.String("pods", "", "the openb pod list simulated")
	flag.Parse()
	if err := count(*nodes, *pods, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "migidle:", err)
		os.Exit(1)
	}
}

func count(nodesSpec, podsFile string, args []string, w io.Writer) error {
	if nodesSpec == "" || podsFile == "" || len(args) != 1 {
		return errors.New("usage: migidle --nodes SPEC --pods PODS.csv PLACEMENTS.csv")
	}
	groups, err := trace.ParseNodeSpec(nodesSpec)
	if err != nil {
		if groups, err = trace.ReadClusterFile(nodesSpec); err != nil {
			return err
		}
	}
	ps, err := trace.ReadPodsFile(podsFile)
	if err != nil {
		return err
	}
	cpu := map[string]int64{}
	for _, p := range ps {
		cpu[p.Name] = p.CPUMilli
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	runs, err := readRuns(args[0], f, cpu)
	if err != nil {
		return err
	}
	var idle, stranded int
	for _, r := range runs {
		i, s := r.idle(trace.Nodes(groups))
		idle, stranded = idle+i, stranded+s
		fmt.Fprintf(w, "%s seed %s: %d idle slices on MIG GPUs, %d on nodes with under 4 cores free\n", r.policy, r.seed, i, s)
	}
	fmt.Fprintf(w, "all %d runs: %d idle slices on MIG GPUs, %d on nodes with under 4 cores free\n", len(runs), idle, stranded)
	return nil
}

// run is one policy and seed's end state: milli-GPU held per node and
// GPU, CPU millicores held per node.
type run struct {
	policy, seed string
	held         map[string]map[string][]int64
	cpu          map[string]int64
}

// readRuns reads a placements CSV (simulate --placements, with its
// sharing column) into its runs, in order of appearance.
func readRuns(file string, r io.Reader, cpu map[string]int64) ([]*run, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(rows) == 0 || len(rows[0]) != 11 || rows[0][0] != "sharing" {
		return nil, fmt.Errorf("%s:1: want simulate --placements' header with sharing first (sharing,policy,seed,...)", file)
	}
	byKey := map[string]*run{}
	var out []*run
	for i, row := range rows[1:] {
		policy, seed, pod, node, gpus, milli, failed := row[1], row[2], row[4], row[5], row[6], row[7], row[10]
		key := policy + "/" + seed
		r := byKey[key]
		if r == nil {
			r = &run{policy: policy, seed: seed, held: map[string]map[string][]int64{}, cpu: map[string]int64{}}
			byKey[key] = r
			out = append(out, r)
		}
		if failed != "" || node == "" {
			continue
		}
		r.cpu[node] += cpu[pod]
		if gpus == "" {
			continue
		}
		m, err := strconv.ParseInt(milli, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: gpu_milli %q: %w", file, i+2, milli, err)
		}
		if r.held[node] == nil {
			r.held[node] = map[string][]int64{}
		}
		r.held[node][gpus] = append(r.held[node][gpus], m)
	}
	return out, nil
}

// idle returns the run's idle slices on MIG GPUs, and those on nodes
// with under 4 cores (4000 m) free.
func (r *run) idle(nodes []trace.NodeSpec) (idle, stranded int) {
	names := make([]string, 0, len(nodes))
	byName := map[string]trace.NodeSpec{}
	for _, n := range nodes {
		names = append(names, n.Name)
		byName[n.Name] = n
	}
	sort.Strings(names)
	for _, name := range names {
		n := byName[name]
		for g := range n.GPUs {
			held := r.held[name][strconv.Itoa(g)]
			if len(held) == 0 || len(held) == 1 && held[0] == 1000 {
				continue
			}
			var sum int64
			for _, m := range held {
				sum += m
			}
			s := 7 - int((sum*7+500)/1000)
			idle += s
			if n.CPUMilli-r.cpu[name] < 4000 {
				stranded += s
			}
		}
	}
	return idle, stranded
}
