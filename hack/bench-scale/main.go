// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command bench-scale measures how the simulator scales with cluster size:
// it replicates a node list and a pod list k times (k copies of every node
// and every pod) and runs one fill, for each k of -k, each in a fresh
// process, printing the fill's time, the process's wall time and its peak
// resident memory (getrusage ru_maxrss). docs/simulate-validation.md holds its output.
//
//	go run ./hack/bench-scale [-k 1,10,40] [-runs 3] [-policy fgd] [-tie first]
//	    [-nodes FILE] [-pods FILE] [-parse FILE] [-cpuprofile FILE]
//
// Each k runs -runs times; the table shows the fastest run (the least
// disturbed by other work on the machine) and the highest peak memory.
//
// -parse FILE instead times reading FILE as an openb pod list.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func main() {
	traces := filepath.Join("..", "shared", "traces", "alibaba-gpu-v2023")
	ks := flag.String("k", "1,10,40", "replication factors, comma-separated")
	flag.IntVar(&runs, "runs", 3, "runs per k; the fastest is shown")
	policy := flag.String("policy", "fgd", "placement policy")
	tie := flag.String("tie", "first", "tie-break: first or random")
	nodesFile := flag.String("nodes", filepath.Join(traces, "openb_node_list_gpu_node.csv"), "openb node list")
	podsFile := flag.String("pods", filepath.Join(traces, "openb_pod_list_default.csv"), "openb pod list")
	parse := flag.String("parse", "", "time reading this pod list instead")
	child := flag.Int("child", 0, "internal: run one fill with this k")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write each fill's CPU profile to this file, suffixed with k")
	flag.Parse()
	if err := run(*ks, *policy, *tie, *nodesFile, *podsFile, *parse, *child); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

var (
	cpuProfile string
	runs       int
)

func run(ks, policy, tie, nodesFile, podsFile, parse string, child int) error {
	if child > 0 {
		return fillOnce(child, policy, tie, nodesFile, podsFile)
	}
	if parse != "" {
		return parseOnce(parse)
	}
	fmt.Printf("# one %s fill (inflate 1.3, seed 42, tie-break %s) of %s and %s replicated k times; fastest of %d runs; %s %s/%s, GOMAXPROCS %d\n",
		policy, tie, filepath.Base(nodesFile), filepath.Base(podsFile), max(runs, 1), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Printf("%4s %7s %9s %8s %10s %8s %9s\n", "k", "nodes", "pods", "fill_s", "fill_cpu_s", "wall_s", "peak_MiB")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var first, firstCPU, last, lastCPU float64
	var firstK, lastK int
	for _, f := range strings.Split(ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return fmt.Errorf("-k: bad factor %q", f)
		}
		var nodes, pods int
		var fillS, cpuS, wall float64
		var rss int64
		for r := 0; r < max(runs, 1); r++ {
			cmd := exec.Command(self, "-child", strconv.Itoa(k), "-policy", policy, "-tie", tie, "-nodes", nodesFile, "-pods", podsFile, "-cpuprofile", cpuProfile)
			cmd.Stderr = os.Stderr
			t0 := time.Now()
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("k=%d: %w", k, err)
			}
			w := time.Since(t0).Seconds()
			var f, c float64
			if _, err := fmt.Sscan(string(out), &nodes, &pods, &f, &c); err != nil {
				return fmt.Errorf("k=%d: child printed %q: %w", k, out, err)
			}
			if r == 0 || f < fillS {
				fillS, wall = f, w
			}
			if r == 0 || c < cpuS {
				cpuS = c
			}
			rss = max(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB on Linux
		}
		fmt.Printf("%4d %7d %9d %8.2f %10.2f %8.2f %9.0f\n", k, nodes, pods, fillS, cpuS, wall, float64(rss)/1024)
		if first == 0 {
			first, firstCPU, firstK = fillS, cpuS, k
		}
		last, lastCPU, lastK = fillS, cpuS, k
	}
	if line := ratio(firstK, lastK, first, last, firstCPU, lastCPU); line != "" {
		fmt.Println(line)
	}
	return nil
}

// fillOnce prints the node count, arrived pods, and the fill's wall-clock
// and CPU (user + system, all threads) seconds.
func fillOnce(k int, policy, tie, nodesFile, podsFile string) error {
	tb, err := placement.ParseTieBreak(tie)
	if err != nil {
		return err
	}
	nodes, err := trace.ReadNodesFile(nodesFile)
	if err != nil {
		return err
	}
	pods, err := trace.ReadPodsFile(podsFile)
	if err != nil {
		return err
	}
	var rn []trace.NodeSpec
	var rp []trace.PodSpec
	for r := 0; r < k; r++ {
		for _, n := range nodes {
			n.Name = fmt.Sprintf("%s-r%d", n.Name, r)
			rn = append(rn, n)
		}
		for _, p := range pods {
			p.Name = fmt.Sprintf("%s-r%d", p.Name, r)
			rp = append(rp, p)
		}
	}
	w, err := engine.Prepare(nodesFile, rn, podsFile, rp, 0.95, nil)
	if err != nil {
		return err
	}
	if cpuProfile != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", cpuProfile, k))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	t0, c0 := time.Now(), cpuSeconds()
	rep, err := engine.Run(context.Background(), w, engine.Config{Mode: "fill", Policies: []string{policy}, Seeds: 1, Seed: 42, Inflate: 1.3, TieBreak: tb, Parallel: 1})
	if err != nil {
		return err
	}
	fmt.Println(len(rn), rep.Results[0].Pods, time.Since(t0).Seconds(), cpuSeconds()-c0)
	return nil
}

// parseOnce reads a pod list and prints its rows, time and peak memory.
func parseOnce(file string) error {
	t0 := time.Now()
	pods, err := trace.ReadPodsFile(file)
	if err != nil {
		return err
	}
	el := time.Since(t0).Seconds()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	fmt.Printf("read %d pods from %s in %.2f s, peak RSS %.0f MiB\n", len(pods), file, el, float64(ru.Maxrss)/1024)
	return nil
}

// cpuSeconds returns the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// ratio says how time grows from the first factor to the last against
// linear growth: time(k=last) / time(k=first) / (last/first). Empty with
// one factor (a run of -k 40 alone printed its own time over itself / 40).
func ratio(firstK, lastK int, first, last, firstCPU, lastCPU float64) string {
	if firstK < 1 || lastK <= firstK || first <= 0 || firstCPU <= 0 {
		return ""
	}
	n := float64(lastK) / float64(firstK)
	den := fmt.Sprintf("%d", lastK)
	if firstK != 1 {
		den = fmt.Sprintf("(%d/%d)", lastK, firstK)
	}
	return fmt.Sprintf("time(k=%d) / time(k=%d) / %s = %.2f wall, %.2f CPU (1 is linear)", lastK, firstK, den, last/first/n, lastCPU/firstCPU/n)
}
