// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/sim/report"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
)

// runSizeJSON writes the node and pod lists, runs o with them and --format
// json, and returns the sizing report.
func runSizeJSON(t *testing.T, o Options, nodes, pods string) *sizing.Report {
	t.Helper()
	dir := t.TempDir()
	o.NodesFile, o.PodsFile = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
	if err := os.WriteFile(o.NodesFile, []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.PodsFile, []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Format = "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep sizing.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout.String())
	}
	return &rep
}

type step struct {
	nodes int
	value float64 // -1: infinite
}

func checkCurve(t *testing.T, r sizing.Result, answer int, want []step) {
	t.Helper()
	if !r.Reached || r.Answer.Nodes != answer {
		t.Errorf("%s: answer %+v, want %d nodes", r.Policy, r.Answer, answer)
	}
	if len(r.Curve) != len(want) {
		t.Fatalf("%s: curve %d steps, want %d", r.Policy, len(r.Curve), len(want))
	}
	for i, w := range want {
		s := r.Curve[i]
		v := -1.0
		if s.Value != nil {
			v = *s.Value
		}
		if s.Nodes != w.nodes || math.Abs(v-w.value) > 1e-6*math.Max(1, math.Abs(w.value)) { // JSON: 6 significant digits
			t.Errorf("%s: step %d = %d nodes, %v; want %d, %v", r.Policy, i, s.Nodes, v, w.nodes, w.value)
		}
	}
}

// TestSizeFill: 10 pods of one whole GPU on one node of 8 V100M32 GPUs,
// target every pod placed. As given, 8 of 10 place (80%, fails); adding 1
// node places all: 2 nodes, 16 GPUs, for every policy.
func TestSizeFill(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
	for i := range 10 {
		pods += fmt.Sprintf("p%d,4000,16384,1,1000\n", i)
	}
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds = "placed>=100%", "fgd,bestfit,leastallocated", 2
	rep := runSizeJSON(t, o, nodes, pods)
	if len(rep.Results) != 3 || rep.Mode != "fill" || rep.ListNodes != 1 || rep.Pods != 10 {
		t.Fatalf("report %+v", rep)
	}
	usd := 16 * prices.Default().USDPerHour("V100M32")
	for _, r := range rep.Results {
		checkCurve(t, r, 2, []step{{1, 0.8}, {2, 1}})
		if r.Answer.GPUs != 16 || r.Answer.Added != 1 || math.Abs(r.Answer.USDPerHour-usd) > 1e-9 || r.Model != "V100M32" {
			t.Errorf("%s: answer %+v, want 1 V100M32 node added, 16 GPUs, %v USD/h", r.Policy, r.Answer, usd)
		}
	}
}

// TestSizeReplay: 4 pods of one GPU, all created at 0, each running 1 h
// once placed (scheduled_time 9 h, deletion_time 10 h: they leave the
// queue only after waiting 10 h), on nodes of one GPU. With n nodes the
// pods start in waves of n an hour apart: waits 0,1,2,3 h on 1 node;
// 0,0,1,1 h on 2; 0,0,0,1 h on 3; 0 on 4. The p95 of 4 pods is the 4th
// smallest (nearest rank, ⌈3.8⌉), the longest wait. The list has 1 node.
// p95wait<=1h: adding 0 fails, 1 holds: 2 nodes. p95wait<=30m: adding 0,
// 1, 2 fail, 4 holds, then bisection 3 holds: 4 nodes (3 added).
func TestSizeReplay(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,1,T4\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n"
	for i := range 4 {
		pods += fmt.Sprintf("p%d,1000,1024,1,1000,0,36000,32400\n", i)
	}
	o := DefaultOptions()
	o.Mode, o.Policies, o.Seeds = "replay", "fgd,bestfit", 1
	o.Size = "p95wait<=1h"
	for _, r := range runSizeJSON(t, o, nodes, pods).Results {
		checkCurve(t, r, 2, []step{{1, 3 * 3600}, {2, 3600}})
	}
	o.Size = "p95wait<=30m"
	rep := runSizeJSON(t, o, nodes, pods)
	for _, r := range rep.Results {
		checkCurve(t, r, 4, []step{{1, 3 * 3600}, {2, 3600}, {3, 3600}, {4, 0}, {5, 0}})
		if r.Answer.USDPerHour != 4*prices.Default().USDPerHour("T4") {
			t.Errorf("%s: %v USD/h, want 4 T4", r.Policy, r.Answer.USDPerHour)
		}
	}
}

// TestSizeOutputs: the table names the answer and the curve, --out writes
// a page with the chart and report.json.
func TestSizeOutputs(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds, o.OutDir = "placed>=100%", "fgd", 1, filepath.Join(dir, "out")
	o.NodesFile, o.PodsFile = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
	os.WriteFile(o.NodesFile, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n"), 0o644)
	os.WriteFile(o.PodsFile, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,8,1000\nb,1000,1024,8,1000\nc,1000,1024,8,1000\n"), 0o644)
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	// Three pods of 8 GPUs on nodes of 8, 1 in the list: n nodes place n
	// of them. The search adds 0 (33%), 1 (67%), which fail, then 2,
	// which holds: 2 nodes added, 16 GPUs.
	price := prices.Default().USDPerHour("V100M32")
	ty := "V100M32 x8 (96 CPU, 768 GiB)"
	var lines []string
	for _, l := range strings.Split(stdout.String(), "\n")[1:] {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	want := []string{"", "policy sharing node type add nodes GPUs USD/h placed % steps",
		fmt.Sprintf("fgd fractional %s 2 3 24 %.2f 100.00 3", ty, 24*price), ""}
	for _, l := range strings.Split(report.SizingLegend, "\n") {
		want = append(want, strings.Join(strings.Fields(l), " "))
	}
	addUSD := money(16 * price * 730)
	addUSD = addUSD[:len(addUSD)-3] // whole USD
	want = append(want, "",
		// The recommendation: add 2 nodes, 16 GPUs × 730 h a month; the
		// cluster's 24 GPUs, all held by the 3 pods, so nothing is idle.
		"recommendation (fewest USD per hour added meeting placed>=100%): fgd, sharing fractional",
		"cluster: 3 nodes, 24 GPUs: 3 V100M32 nodes (24 GPUs)",
		fmt.Sprintf("cost: %s USD per month (%.2f USD/h × 730 h, every GPU, idle or not)", money(24*price*730), 24*price),
		"left on the table: 0.0 GPUs unallocated, 0.00 USD per month",
		"what to buy: add 2 × "+ty+": +"+addUSD+" USD per month",
		"why: add 2 × "+ty+": +"+addUSD+" USD per month with fgd (fractional); it is the only answer that reached the target.", "", "curve searched:",
		"policy sharing node type add nodes GPUs USD/h placed % holds",
		fmt.Sprintf("fgd fractional %s 0 1 8 %.2f 33.33 false", ty, 8*price),
		fmt.Sprintf("fgd fractional %s 1 2 16 %.2f 66.67 false", ty, 16*price),
		fmt.Sprintf("fgd fractional %s 2 3 24 %.2f 100.00 true", ty, 24*price), "")
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("table\n%s\nwant (spaces collapsed)\n%s", stdout.String(), strings.Join(want, "\n"))
	}
	page, err := os.ReadFile(filepath.Join(o.OutDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", `id="sizing"`, "Pods placed against cluster size", "<td>fgd</td><td>fractional</td><td>" + ty + "</td><td class=\"best\">2</td>", "What to buy: <b>add 2 × ",
		`<div id="recommendation" class="lead"><h2>Recommendation</h2>`, "3 V100M32 nodes (24 GPUs)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(o.OutDir, "report.json")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr.String(), "simulate: --size fgd, adding "+ty+": +2 nodes (3 in all): placed 100.00%") {
		t.Errorf("stderr lacks the progress of the 3-node step:\n%s", stderr.String())
	}
}

func TestSizeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"target", func(o *Options) { o.Size = "placed>=99" }, "percent"},
		{"mode", func(o *Options) { o.Size = "p95wait<=10m" }, "--size \"p95wait<=10m\" is measured in replay: add --mode replay"},
		{"inflate", func(o *Options) { o.Size, o.InflateSet = "placed>=99%", true }, "no --inflate"},
		{"placements", func(o *Options) { o.Size, o.PlacementsFile = "placed>=99%", filepath.Join(t.TempDir(), "p.csv") }, "no --placements"},
		{"teams", func(o *Options) { o.Size, o.Mode, o.TeamsFile = "p95wait<=1m", "replay", "t.yaml" }, "--size does not take --teams"},
	} {
		o := DefaultOptions()
		tc.edit(&o)
		if _, _, err := o.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: check() = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A pod of 16 GPUs fits no node of 8: 1 of 2 pods can never place.
	dir := t.TempDir()
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds = "placed>=99%", "fgd", 1
	o.NodesFile, o.PodsFile = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
	os.WriteFile(o.NodesFile, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n"), 0o644)
	os.WriteFile(o.PodsFile, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,16,1000\nb,1000,1024,1,1000\n"), 0o644)
	var stdout, stderr strings.Builder
	err := Run(context.Background(), o, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "cannot hold on any number of nodes of "+o.NodesFile+": 1 of 2 pods fit no node type") {
		t.Errorf("unreachable target: %v", err)
	}
}

// TestSizeSharing: --size per sharing mode. 10 pods of half a GPU on nodes
// of 8 V100M32 GPUs (1 in the list), every pod placed: exclusive rounds
// each up to a whole GPU, so 10 GPUs: 1 node added, 2 in all; fractional
// packs two per GPU and timeslice:2 gives each a replica of 500
// milli-GPU, so 5 GPUs: the node as given.
func TestSizeSharing(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
	for i := range 10 {
		pods += fmt.Sprintf("p%d,4000,16384,1,500\n", i)
	}
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds, o.Sharing = "placed>=100%", "fgd", 1, "exclusive,fractional,timeslice:2"
	rep := runSizeJSON(t, o, nodes, pods)
	want := []struct {
		sharing string
		nodes   int
	}{{"exclusive", 2}, {"fractional", 1}, {"timeslice:2", 1}}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(rep.Results), len(want), rep.Results)
	}
	for i, w := range want {
		r := rep.Results[i]
		if r.Sharing != w.sharing || r.Policy != "fgd" || !r.Reached || r.Answer.Nodes != w.nodes {
			t.Errorf("result %d: %s %s reached %v with %d nodes; want %s fgd with %d", i, r.Sharing, r.Policy, r.Reached, r.Answer.Nodes, w.sharing, w.nodes)
		}
	}
}

// TestSizeSharingUnreachable: a MIG layout decides what fits. One node of
// 8 A100-80GB GPUs with GPUs 0-3 MIG-enabled (4g.40gb+2g.20gb+1g.10gb, the
// docs' half-mig) keeps 4 whole GPUs, so a pod of 8 whole GPUs never fits
// under --sharing mig: 1 of 2 pods, and placed>=99% needs 2 of 2. Before,
// the check looked at the whole-GPU node only and the search doubled the
// node count to sizing.MaxNodes.
func TestSizeSharingUnreachable(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds, o.Sharing = "placed>=99%", "fgd", 1, "mig"
	o.NodesFile, o.PodsFile, o.MIGConfig = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv"), filepath.Join(dir, "mig.yaml")
	os.WriteFile(o.NodesFile, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,A100-80GB\n"), 0o644)
	os.WriteFile(o.PodsFile, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nbig,1000,1024,8,1000\nsmall,1000,1024,1,500\n"), 0o644)
	os.WriteFile(o.MIGConfig, []byte("version: v1\nmig-configs:\n  half:\n    - device-filter: A100-80GB\n      devices: [0, 1, 2, 3]\n      mig-enabled: true\n      mig-devices:\n        \"4g.40gb\": 1\n        \"2g.20gb\": 1\n        \"1g.10gb\": 1\n"), 0o644)
	var stdout, stderr strings.Builder
	err := Run(context.Background(), o, &stdout, &stderr)
	want := "cannot hold on any number of nodes of " + o.NodesFile + " with --sharing mig: 1 of 2 pods fit no node type even when empty (first " + o.PodsFile + ":2: pod \"big\")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unreachable under mig: %v, want %q", err, want)
	}
	// Fractional, the same lists fit both pods on the one node.
	o.Sharing, o.MIGConfig = "fractional", ""
	var out2, err2 strings.Builder
	if err := Run(context.Background(), o, &out2, &err2); err != nil {
		t.Errorf("fractional: %v", err)
	}
}

// TestSizeChosenMIGGrows: chosen MIG layouts leave more nodes whole as the
// cluster grows, so no pod is ruled out from the node list's size alone.
// One node of 8 A100-80GB GPUs; pods: big (8 whole GPUs) and 7 shares of
// 100 milli-GPU (1g.10gb, 1/7 GPU each). engine.ChooseMIGLayouts: MIG share
// f = 1 / (1 + 8) of the GPU demand, round(f × GPUs) MIG GPUs packed on
// the first node: 1 of 8 at 1 node (big fits nowhere: 7 of 8 pods placed),
// 2 of 16 at 2 nodes, both on the first, so the second keeps 8 whole.
func TestSizeChosenMIGGrows(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,128000,2097152,8,A100-80GB\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nbig,8000,65536,8,1000\n"
	for i := range 7 {
		pods += fmt.Sprintf("s%d,1000,4096,1,100\n", i)
	}
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds, o.Sharing = "placed>=100%", "fgd", 1, "mig"
	rep := runSizeJSON(t, o, nodes, pods)
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	checkCurve(t, rep.Results[0], 2, []step{{1, 7.0 / 8}, {2, 1}})
}

// money writes USD with thousands separators and cents, as the report does.
func money(v float64) string {
	c := int64(math.Round(v * 100))
	s := strconv.FormatInt(c/100, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return fmt.Sprintf("%s.%02d", s, c%100)
}

// TestSizeWhatToBuy: the cluster as given is 1 node of 2 A100-80GB GPUs
// and 1 CPU-only node; the pods are 6 of 1 A100-80GB GPU each and 1 that
// asks for an H100-80GB, which no node type has. placed>=85% needs 6 of 7
// pods (85.7%): as given 2 place, adding 1 A100 node 4, adding 2 all 6:
// add 2 A100 nodes, 4 GPUs. The CPU-only type is not grown, and the H100
// pod is named as fitting no node type, for the model it asks.
func TestSizeWhatToBuy(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\na0,64000,262144,2,A100-80GB\ncpu0,64000,262144,0,\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
	for i := range 6 {
		pods += fmt.Sprintf("p%d,1000,1024,1,1000,A100-80GB\n", i)
	}
	pods += "h,1000,1024,1,1000,H100-80GB\n"
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds = "placed>=85%", "fgd", 1
	rep := runSizeJSON(t, o, nodes, pods)
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1 (the A100 type alone): %+v", len(rep.Results), rep.Results)
	}
	r := rep.Results[0]
	checkCurve(t, r, 4, []step{{2, 2.0 / 7}, {3, 4.0 / 7}, {4, 6.0 / 7}})
	if r.Answer.Added != 2 || r.Model != "A100-80GB" || r.GPUsPerNode != 2 {
		t.Errorf("answer %+v of %s, want 2 A100-80GB nodes added", r.Answer, r.NodeType)
	}
	if len(rep.Skipped) != 1 || !strings.HasPrefix(rep.Skipped[0].Type, "CPU-only") || rep.Skipped[0].Nodes != 1 {
		t.Errorf("skipped %+v, want the CPU-only node", rep.Skipped)
	}
	if rep.UnfitPods != 1 || len(rep.Unfit) != 1 || !strings.HasSuffix(rep.Unfit[0].Pod, `pod "h"`) || !strings.Contains(rep.Unfit[0].Why, "H100-80GB") {
		t.Errorf("unfit %d %+v, want pod h, for H100-80GB", rep.UnfitPods, rep.Unfit)
	}
	usd := 4 * prices.Default().USDPerHour("A100-80GB") * 730
	if a := rep.Recommendation.Add; a == nil || a.Nodes != 2 || math.Abs(a.USDPerMonth-usd) > 0.01 {
		t.Errorf("recommendation adds %+v, want 2 nodes, %v USD per month", a, usd)
	}
}
