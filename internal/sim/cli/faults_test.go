// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const podHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

// TestPodLargerThanAnyNodeIsAWarning is a fault report's first input as files:
// the run goes on, the pod is a failed pod, stderr warns.
func TestPodLargerThanAnyNodeIsAWarning(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.Seeds, o.Policies, o.Format = 1, "bestfit", "json"
	o.NodesFile = writeFile(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,G2\n")
	o.PodsFile = writeFile(t, dir, "pods.csv", podHeader+"big,120000,737280,8,1000,G2,LS,Running,0,100,0\n")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := "simulate: warning: " + o.PodsFile + `:2: pod "big" (cpu_milli 120000, memory_mib 737280, num_gpu 8, gpu_milli 1000) is larger than every node of ` + o.NodesFile + ` with a GPU model it allows ("G2"): too_large` + "\n"
	if !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr\n%s\nwant prefix\n%s", stderr.String(), want)
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.FailedPods != 1 || len(r.Failed) != 1 || r.Failed[0].Reason != engine.ReasonTooLarge || r.ArrivedGPUMilli != 8000 {
		t.Errorf("result %+v", r)
	}
}

// TestReplayPlacementsFile: the fault report's p1..p5 input, replay, Best-fit, one
// seed, --placements as CSV; the rows are worked out in
// engine.TestReplayDeletedWhileWaiting (p1 and p2 share GPU 0, p3 takes GPU
// 1, p5 leaves the queue at 20 after 6 s). A second run refuses to
// overwrite the file, and --inflate is refused in replay.
func TestReplayPlacementsFile(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.Mode, o.Seeds, o.Policies = "replay", 1, "bestfit"
	o.NodesFile = writeFile(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nnode-1,96000,393216,2,T4\n")
	o.PodsFile = writeFile(t, dir, "pods.csv", podHeader+
		"p1,8000,30517,1,470,,LS,Running,10,1000,10\n"+
		"p2,8000,30517,1,470,,LS,Running,11,1000,11\n"+
		"p3,8000,30517,1,440,,LS,Running,12,1000,12\n"+
		"p5,11908,47104,1,1000,,BE,Pending,14,20,\n")
	o.PlacementsFile = filepath.Join(dir, "placements.csv")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(o.PlacementsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := `policy,seed,seq,pod,node,gpus,gpu_milli,start_seconds,wait_seconds,failed_reason
bestfit,42,1,p1,node-1,0,470,10,0,
bestfit,42,2,p2,node-1,0,470,11,0,
bestfit,42,3,p3,node-1,1,440,12,0,
bestfit,42,4,p5,,,,,6,deleted_waiting
`
	if string(got) != want {
		t.Errorf("placements\n%s\nwant\n%s", got, want)
	}
	if err := Run(context.Background(), o, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--placements: "+o.PlacementsFile+" exists (--force overwrites it)") {
		t.Errorf("second run: err = %v", err)
	}
	o.Force = true
	o.PlacementsFile = filepath.Join(dir, "placements.jsonl")
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(o.PlacementsFile)
	if first := strings.SplitN(string(got), "\n", 2)[0]; first != `{"policy":"bestfit","seed":42,"seq":1,"pod":"p1","node":"node-1","gpus":[0],"gpu_milli":470,"start_seconds":10,"wait_seconds":0}` {
		t.Errorf("first JSON line %s", first)
	}
	o.InflateSet = true
	if err := Run(context.Background(), o, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--inflate applies to --mode fill only") {
		t.Errorf("--inflate in replay: err = %v", err)
	}
}

// TestReportProvenance: the JSON report names the version, the settings,
// the prices used and each input's size and SHA-256.
func TestReportProvenance(t *testing.T) {
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,t4\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1000,1024,1,1000,T4\n"
	o := DefaultOptions()
	o.Seeds, o.Seed, o.Policies, o.Format = 2, 7, "fgd,bestfit", "json"
	o.NodesFile = writeFile(t, dir, "nodes.csv", nodes)
	o.PodsFile = writeFile(t, dir, "pods.csv", pods)
	o.PricesFile = writeFile(t, dir, "prices.txt", "T4 0.5\n")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := []engine.Input{
		{Role: "prices", Name: o.PricesFile, Bytes: 7, SHA256: sum("T4 0.5\n")},
		{Role: "nodes", Name: o.NodesFile, Bytes: int64(len(nodes)), SHA256: sum(nodes)},
		{Role: "pods", Name: o.PodsFile, Bytes: int64(len(pods)), SHA256: sum(pods)},
	}
	if len(rep.Inputs) != 3 || rep.Inputs[0] != want[0] || rep.Inputs[1] != want[1] || rep.Inputs[2] != want[2] {
		t.Errorf("inputs %+v\nwant %+v", rep.Inputs, want)
	}
	p := rep.Params
	// Policies in placement.Names order, as the run takes them. The node
	// list writes "t4": the price of the catalog's T4, 0.5 from
	// the prices file, shown under the node list's spelling.
	if p == nil || strings.Join(p.Policies, ",") != "bestfit,fgd" || p.Seeds != 2 || p.FirstSeed != 7 || p.TieBreak != "random" ||
		p.Popularity != 0.95 || p.Inflate != 1.3 || len(p.PricesUSDPerGPUHour) != 1 || p.PricesUSDPerGPUHour["t4"] != 0.5 {
		t.Errorf("params %+v", p)
	}
	if !strings.HasPrefix(rep.Version, "gpuplane version ") {
		t.Errorf("version %q", rep.Version)
	}
}

// TestOutRefusesToOverwrite: a second run into the same --out fails
// before it simulates, unless --force.
func TestOutRefusesToOverwrite(t *testing.T) {
	o := DefaultOptions()
	o.Seeds, o.Policies = 1, "bestfit"
	o.OutDir = t.TempDir()
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), o, &stdout, &stderr)
	if want := "--out: " + o.OutDir + " already holds a report: index.html (--force overwrites it)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	o.Force = true
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Errorf("--force: %v", err)
	}
}

// TestHugeValueShortError: a fault report's 300,000,000-digit gpu_milli, here
// 10,000,000 digits: the error names file, line and column and stays short.
func TestHugeValueShortError(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.NodesFile = writeFile(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,G2\n")
	o.PodsFile = writeFile(t, dir, "pods.csv", podHeader+"p,1,1,1,"+strings.Repeat("7", 10_000_000)+",,,,0,1,0\n")
	var stdout, stderr strings.Builder
	err := Run(context.Background(), o, &stdout, &stderr)
	if err == nil || !strings.HasPrefix(err.Error(), o.PodsFile+":2: column gpu_milli: ") || len(err.Error()) > 200 {
		t.Errorf("err = %.300v (%d bytes)", err, len(err.Error()))
	}
}

// TestOutAndPlacementsNotForceable: --out naming a file and --placements
// naming a directory fail before the run, and the error does not suggest
// --force, which cannot help (with --force the first still failed with the
// same hint, and the second failed only after the whole run, at rename).
func TestOutAndPlacementsNotForceable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		o := DefaultOptions()
		o.Seeds, o.Policies, o.Force = 1, "bestfit", force
		o.OutDir = file
		var stdout, stderr strings.Builder
		err := Run(context.Background(), o, &stdout, &stderr)
		if err == nil || strings.Contains(err.Error(), "--force") || !strings.HasPrefix(err.Error(), "--out: ") {
			t.Errorf("--out FILE, force %v: err = %v", force, err)
		}
		o.OutDir = ""
		o.PlacementsFile = dir
		err = Run(context.Background(), o, &stdout, &stderr)
		if want := "--placements: " + dir + " is a directory"; err == nil || err.Error() != want {
			t.Errorf("--placements DIR, force %v: err = %v, want %q", force, err, want)
		}
	}
}

// TestMissingInputNamesFlag: a file that cannot be opened is named with its
// flag ("gpuplane: open /x: no such file or directory" said neither).
func TestMissingInputNamesFlag(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.csv")
	for _, flag := range []string{"nodes", "pods", "prices"} {
		o := DefaultOptions()
		o.Seeds, o.Policies = 1, "bestfit"
		if flag != "prices" {
			o.NodesFile, o.PodsFile = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
			if err := os.WriteFile(o.NodesFile, []byte("sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,T4\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		switch flag {
		case "nodes":
			o.NodesFile = missing
		case "pods":
			o.PodsFile = missing
		case "prices":
			o.PricesFile = missing
		}
		var stdout, stderr strings.Builder
		err := Run(context.Background(), o, &stdout, &stderr)
		if want := "--" + flag + ": open " + missing + ": no such file or directory"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}
