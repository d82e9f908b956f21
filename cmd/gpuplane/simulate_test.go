// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var binary string

// The binary is built as the Makefile builds it, with the version and
// commit set at link time.
const ldflags = "-X github.com/gpuplane/gpuplane/internal/version.version=v9.8.7-test " +
	"-X github.com/gpuplane/gpuplane/internal/version.commit=c0ffee"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gpuplane-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "gpuplane")
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestVersion(t *testing.T) {
	want := "gpuplane version v9.8.7-test, commit c0ffee, " + runtime.Version() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := run(t, args...)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("gpuplane %v: exit %d, stdout %q, stderr %q; want %q", args, code, out, errOut, want)
		}
	}
}

func TestSimulateDefaultJSON(t *testing.T) {
	out, errOut, code := run(t, "simulate", "--format", "json", "--seeds", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Results []map[string]any `json:"results"`
		Summary []map[string]any `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	if len(rep.Results) != 18 || len(rep.Summary) != 9 {
		t.Fatalf("%d results, %d summaries; want 9 policies × 2 seeds", len(rep.Results), len(rep.Summary))
	}
	for _, k := range []string{"policy", "seed", "total_gpu_milli", "arrived_gpu_milli", "allocated_gpu_milli", "gpu_allocation_ratio",
		"unallocated_gpus", "failed_pods", "fragmentation_ratio", "wall_seconds"} {
		if _, ok := rep.Results[0][k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	for _, k := range []string{"policy", "gpu_allocation_ratio_mean", "gpu_allocation_ratio_std"} {
		if _, ok := rep.Summary[0][k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	r := rep.Results[0]
	total, alloc := r["total_gpu_milli"].(float64), r["allocated_gpu_milli"].(float64)
	if ratio := r["gpu_allocation_ratio"].(float64); math.Abs(ratio-alloc/total) > 5e-7*alloc/total { // 6 significant digits in JSON
		t.Errorf("gpu_allocation_ratio %v != allocated/total %v", ratio, alloc/total)
	}
}

func TestSimulateTable(t *testing.T) {
	out, _, code := run(t, "simulate", "--policies", "fgd,bestfit", "--seeds", "1")
	if code != 0 || !strings.Contains(out, "fgd") || !strings.Contains(out, "bestfit") || strings.Contains(out, "random") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestSimulateBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nodes := write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,T4\n")
	podHeader := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"empty pods file", []string{"--nodes", nodes, "--pods", write("empty.csv", "")}, "empty.csv:1: empty file"},
		{"missing column", []string{"--nodes", nodes, "--pods", write("nocol.csv", "name,cpu_milli,memory_mib,num_gpu\np,1,1,0\n")}, "nocol.csv:1: column gpu_milli: missing column"},
		{"negative request", []string{"--nodes", nodes, "--pods", write("neg.csv", podHeader+"p,-1,1,0,0,\n")}, "neg.csv:2: column cpu_milli: negative value -1"},
		{"unknown policy", []string{"--policies", "fgd,magic"}, `unknown policy "magic"`},
		{"pods without nodes", []string{"--pods", nodes}, "--pods needs --nodes"},
		{"missing file", []string{"--nodes", nodes, "--pods", filepath.Join(dir, "nope.csv")}, "no such file"},
		{"bad format", []string{"--format", "xml"}, `unknown --format "xml"`},
		{"bad mode", []string{"--mode", "warp"}, `unknown --mode "warp"`},
		{"inflate in replay", []string{"--mode", "replay", "--inflate", "1.3"}, "--inflate applies to --mode fill only"},
		{"zero seeds", []string{"--seeds", "0"}, "--seeds 0 out of range"},
		{"bad inflate", []string{"--inflate", "-1"}, "--inflate -1 out of range"},
		{"only CPU pods", []string{"--nodes", nodes, "--pods", write("cpu.csv", podHeader+"p,1000,1024,0,0,\n")}, "fill needs pods that request GPUs"},
		{"out is a file", []string{"--out", nodes}, "--out: mkdir"},
		{"negative parallel", []string{"--parallel", "-1"}, "--parallel -1 out of range"},
		{"bad prices", []string{"--prices", write("prices.txt", "T4 cheap\n")}, "prices.txt:1: price \"cheap\""},
	}
	for _, tc := range cases {
		out, errOut, code := run(t, append([]string{"simulate"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "panic") || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line containing %q", tc.name, code, out, errOut, tc.want)
		}
	}
}

// TestSimulateUnfitPodsWarn: pods that fit no node are failed
// pods and warnings, not errors: q needs 4 GPUs of a 2-GPU cluster, r only
// H100s of a T4 cluster.
func TestSimulateUnfitPodsWarn(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.csv")
	pods := filepath.Join(dir, "pods.csv")
	placements := filepath.Join(dir, "out.csv")
	if os.WriteFile(nodes, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,T4\n"), 0o644) != nil ||
		os.WriteFile(pods, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1000,1024,1,1000,\nq,1000,1024,4,1000,\nr,1000,1024,1,1000,H100\n"), 0o644) != nil {
		t.Fatal("cannot write inputs")
	}
	out, errOut, code := run(t, "simulate", "--nodes", nodes, "--pods", pods, "--policies", "bestfit", "--seeds", "1", "--placements", placements)
	for _, want := range []string{
		"simulate: warning: " + nodes + ` has no GPU model "H100", which gpu_spec names in 1 pods (first ` + pods + ":4)",
		"simulate: warning: " + pods + `:3: pod "q" (cpu_milli 1000, memory_mib 1024, num_gpu 4, gpu_milli 1000) is larger than every node of ` + nodes + ": too_large",
		"simulate: warning: " + pods + `:4: pod "r" (cpu_milli 1000, memory_mib 1024, num_gpu 1, gpu_milli 1000) allows GPU models "H100", none of which ` + nodes + " has: no_model",
		"simulate: wrote " + placements,
	} {
		if !strings.Contains(errOut, want+"\n") {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != 0 || !strings.Contains(out, "bestfit") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(placements); err != nil {
		t.Errorf("--placements: %v", err)
	}
	if _, errOut, code := run(t, "simulate", "--nodes", nodes, "--pods", pods, "--placements", placements); code != 2 || !strings.Contains(errOut, "exists (--force overwrites it)") {
		t.Errorf("second run: exit %d, stderr %q", code, errOut)
	}
}
