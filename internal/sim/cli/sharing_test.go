// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func TestCheckSharing(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"mode", func(o *Options) { o.Sharing = "mps" }, `--sharing: unknown sharing mode "mps"`},
		{"replicas", func(o *Options) { o.Sharing = "timeslice:3" }, "--sharing: sharing \"timeslice:3\": N must be a divisor of 1000"},
		{"mig-config without mig", func(o *Options) { o.Sharing = "exclusive"; o.MIGConfig = "m.yaml" }, "apply to --sharing with mig"},
		{"name without config", func(o *Options) { o.Sharing = "mig"; o.MIGConfigName = "x" }, "--mig-config-name needs --mig-config"},
	} {
		o := DefaultOptions()
		tc.edit(&o)
		if _, _, err := o.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: check() = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// One A100-80GB node of 2 GPUs; a mig-parted config makes GPU 0 two
// 3g.40gb instances and leaves GPU 1 whole. Pods a (300 milli-GPU, 3g),
// b (600, 7g), c (a whole GPU), d (300, 3g) arrive in that order and never
// leave. By hand (best-fit GPUs, as sim's TestSharingModesByHand): a takes
// a 3g instance, b the whole GPU 1, c fails, d the second 3g: allocated
// round(6000/7) + 1000 = 1857 of 2000 milli-GPU; exclusive places a and b
// only (2000 of 2000).
func TestRunSharingMIGConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := DefaultOptions()
	o.Mode, o.Seeds, o.Policies, o.Format = "replay", 1, "bestfit", "json"
	o.NodesFile = write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,A100-80GB\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\na,1000,1024,1,300,0\nb,1000,1024,1,600,1\nc,1000,1024,1,1000,2\nd,1000,1024,1,300,3\n")
	o.MIGConfig = write("mig.yaml", "version: v1\nmig-configs:\n  half:\n    - devices: [0]\n      mig-enabled: true\n      mig-devices:\n        3g.40gb: 2\n")
	o.Sharing = "mig,exclusive"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sharing == nil || len(rep.Sharing.Rows) != 2 {
		t.Fatalf("sharing %+v", rep.Sharing)
	}
	if r := rep.Results[0]; r.AllocatedGPUMilli != 1857 || r.FailedPods != 1 || r.Sharing.SharedPods != 2 {
		t.Errorf("mig: allocated %d, failed %d, shared %d; want 1857, 1, 2", r.AllocatedGPUMilli, r.FailedPods, r.Sharing.SharedPods)
	}
	if m, e := rep.Sharing.Rows[0], rep.Sharing.Rows[1]; m.Sharing != "mig" || m.PlacedPods != 3 || e.Sharing != "exclusive" || e.PlacedPods != 2 || e.FailedPods != 2 {
		t.Errorf("rows %+v", rep.Sharing.Rows)
	}
	want := []engine.MIGLayoutUse{{Model: "A100-80GB", Nodes: 1, NodeNames: []string{"n0"}, MIGGPUsPerNode: 1, GPUsPerNode: 2, Layout: []string{"3g.40gb", "3g.40gb"}, Source: "given"}}
	if got, _ := json.Marshal(rep.Sharing.MIGLayouts); string(got) != mustJSON(t, want) {
		t.Errorf("layouts %s", got)
	}
	// A layout the node's model cannot take names the config's line.
	o.MIGConfig = write("bad.yaml", "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {1g.5gb: 7}\n")
	if err := Run(context.Background(), o, &stdout, &stderr); err == nil || !strings.HasPrefix(err.Error(), o.MIGConfig+":4: mig-configs.\"x\": node \"n0\" GPU 0: model A100-80GB has no MIG profile \"1g.5gb\"") {
		t.Errorf("bad layout: %v", err)
	}
	// The nodes have 2 GPUs (indices 0, 1): devices [9, 10], or a
	// device-filter of a model they lack, selects none, and the config
	// would leave every GPU whole.
	for _, body := range []string{
		"version: v1\nmig-configs:\n  x:\n    - devices: [9, 10]\n      mig-enabled: true\n      mig-devices: {3g.40gb: 2}\n",
		"version: v1\nmig-configs:\n  x:\n    - device-filter: H100-80GB\n      devices: all\n      mig-enabled: true\n      mig-devices: {3g.40gb: 2}\n",
	} {
		o.MIGConfig = write("none.yaml", body)
		want := o.MIGConfig + `: mig-configs."x" selects no GPU of the nodes (device-filter and devices; the nodes have up to 2 GPUs)`
		if err := Run(context.Background(), o, &stdout, &stderr); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	// One entry of two selecting nothing is a warning naming its line.
	o.MIGConfig = write("one.yaml", "version: v1\nmig-configs:\n  x:\n    - devices: [0]\n      mig-enabled: true\n      mig-devices: {3g.40gb: 2}\n    - devices: [5]\n      mig-enabled: true\n      mig-devices: {3g.40gb: 2}\n")
	stderr.Reset()
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "simulate: warning: " + o.MIGConfig + `:7: mig-configs."x"[1] selects no GPU of the nodes`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSharingPlacements: --placements with --sharing writes every mode's
// rows, each naming its mode in a first column. TestRunSharingMIGConfig's
// workload: under mig pod c of a whole GPU fails (1 of 4), under exclusive
// c and d fail (2 of 4).
func TestSharingPlacements(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := DefaultOptions()
	o.Mode, o.Seeds, o.Policies = "replay", 1, "bestfit"
	o.NodesFile = write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,A100-80GB\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\na,1000,1024,1,300,0\nb,1000,1024,1,600,1\nc,1000,1024,1,1000,2\nd,1000,1024,1,300,3\n")
	o.MIGConfig = write("mig.yaml", "version: v1\nmig-configs:\n  half:\n    - devices: [0]\n      mig-enabled: true\n      mig-devices:\n        3g.40gb: 2\n")
	o.Sharing, o.PlacementsFile = "mig,exclusive", filepath.Join(dir, "p.csv")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	f, err := os.Open(o.PlacementsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 9 || strings.Join(recs[0][:3], ",") != "sharing,policy,seed" {
		t.Fatalf("%d records, header %v; want 9, sharing first", len(recs), recs[0])
	}
	failed := map[string]int{}
	rows := map[string]int{}
	for _, r := range recs[1:] {
		rows[r[0]]++
		if r[len(r)-1] != "" {
			failed[r[0]]++
		}
	}
	if rows["mig"] != 4 || rows["exclusive"] != 4 || failed["mig"] != 1 || failed["exclusive"] != 2 {
		t.Errorf("rows %v, failed %v; want 4 and 4, failed 1 and 2", rows, failed)
	}
}

// TestRunSharingOnDemand: four shares of 100 milli-GPU (1g.10gb each)
// on one node of 2 A100-80GB with --mig-config making GPU 0 two 3g.40gb.
// With the device plugin GPU 0 serves no 1g.10gb: the first share takes
// GPU 1 whole and the other three never start. Under --gpu-api dra the
// config is not used (a warning) and all four are made on demand on GPU 0
// (4 slices: ⌊4000/7⌋ = 571 milli-GPU allocated).
func TestRunSharingOnDemand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := DefaultOptions()
	o.Mode, o.Seeds, o.Policies, o.Format, o.Sharing = "replay", 1, "bestfit", "json", "mig"
	o.NodesFile = write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,A100-80GB\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\na,1000,1024,1,100,0\nb,1000,1024,1,100,1\nc,1000,1024,1,100,2\nd,1000,1024,1,100,3\n")
	migConfig := write("mig.yaml", "version: v1\nmig-configs:\n  half:\n    - devices: [0]\n      mig-enabled: true\n      mig-devices:\n        3g.40gb: 2\n")
	for _, tc := range []struct {
		api               string
		failed, allocated int
		source            string
	}{{"device-plugin", 3, 1000, "given"}, {"dra", 0, 571, "on demand"}} {
		o.GPUAPI = tc.api
		o.MIGConfig = migConfig
		if tc.api == "dra" {
			// Not used under dra: refused, naming the flag.
			var stdout, stderr strings.Builder
			err := Run(context.Background(), o, &stdout, &stderr)
			if want := "--mig-config and --mig-config-name apply to --gpu-api device-plugin: under dra MIG instances are made per claim (MIG on demand); leave them out"; err == nil || err.Error() != want || !IsBadInput(err) {
				t.Errorf("dra with --mig-config: error %v, want %q (bad input)", err, want)
			}
			o.MIGConfig = ""
		}
		var stdout, stderr strings.Builder
		if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v\n%s", tc.api, err, stderr.String())
		}
		var rep engine.Report
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			t.Fatal(err)
		}
		if r := rep.Results[0]; r.FailedPods != tc.failed || r.AllocatedGPUMilli != int64(tc.allocated) {
			t.Errorf("%s: %d failed, %d milli-GPU allocated; want %d, %d", tc.api, r.FailedPods, r.AllocatedGPUMilli, tc.failed, tc.allocated)
		}
		if l := rep.Sharing.MIGLayouts; len(l) != 1 || l[0].Source != tc.source {
			t.Errorf("%s: layouts %+v, want one %s", tc.api, l, tc.source)
		}
		if got := rep.Params.GPUAPI; (got == "dra") != (tc.api == "dra") {
			t.Errorf("%s: params.gpu_api %q", tc.api, got)
		}
	}
	// A cluster YAML's mig layouts are not used under dra either: a
	// warning naming the file and the group's line.
	o.NodesFile = write("c.yaml", "nodeGroups:\n  - name: a\n    count: 1\n    model: A100-80GB\n    mig: [3g.40gb, 3g.40gb]\n")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "simulate: warning: " + o.NodesFile + ":5: mig: [3g.40gb, 3g.40gb] is not used under --gpu-api dra: MIG instances are made per claim (MIG on demand), on the GPUs the simulator puts in MIG mode\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("dra with a cluster YAML's mig: stderr\n%s\nwant %q", stderr.String(), want)
	}
	// Nor with --mig-config, whose layouts rule.
	o.GPUAPI, o.MIGConfig = "device-plugin", migConfig
	stdout.Reset()
	stderr.Reset()
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "simulate: warning: " + o.NodesFile + ":5: mig: [3g.40gb, 3g.40gb] is not used: --mig-config " + migConfig + " gives the layouts\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("--mig-config over a cluster YAML's mig: stderr\n%s\nwant %q", stderr.String(), want)
	}
}

// One H100-80GB node of 1 GPU and one MI300X node of 1 device under
// partition:CPX/NPS1 (NVIDIA exclusive), replay, best fit. Pods arrive in
// order and never leave: a 500 milli-GPU, b 100, c 100, d one whole GPU.
// By hand: a is above 125 (1/8 of a device), so no CPX partition holds
// it: it takes the H100 whole; b and c take a partition each (H100
// full); d needs 8 partitions, 6 are free: it fails. Allocated 1000 + 2
// × 125 = 1250 of 2000 milli-GPU; served 500 + 100 + 100 = 700, padding
// 500 + 25 + 25 = 550.
func TestRunSharingPartition(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := DefaultOptions()
	o.Mode, o.Seeds, o.Policies, o.Format = "replay", 1, "bestfit", "json"
	o.NodesFile = write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nh,64000,262144,1,H100-80GB\nm,64000,262144,1,MI300X\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\na,1000,1024,1,500,0\nb,1000,1024,1,100,1\nc,1000,1024,1,100,2\nd,1000,1024,1,1000,3\n")
	o.Sharing = "partition:cpx_nps1"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.AllocatedGPUMilli != 1250 || r.TotalGPUMilli != 2000 || r.FailedPods != 1 || r.ServedGPUMilli != 700 || r.PaddingGPUMilli != 550 {
		t.Errorf("allocated %d of %d, failed %d, served %d, padding %d; want 1250 of 2000, 1, 700, 550",
			r.AllocatedGPUMilli, r.TotalGPUMilli, r.FailedPods, r.ServedGPUMilli, r.PaddingGPUMilli)
	}
	if rep.Sharing == nil || len(rep.Sharing.Partitions) != 1 {
		t.Fatalf("sharing %+v", rep.Sharing)
	}
	if u := rep.Sharing.Partitions[0]; u.Sharing != "partition:CPX/NPS1" || u.GPUsPerNode != 8 || u.SharesTooLarge != 1 || u.WholePods != 1 || u.Pods != 4 {
		t.Errorf("partitions %+v", u)
	}
	o.Format = "table"
	stdout.Reset()
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := "partition:CPX/NPS1: MI300X, 1 node of 1 device: 8 GPUs (partitions) a node, each of 24,576 MiB at 0.75 USD/h; 1 of the workload's 4 pods ask more than 125 milli-GPU of one GPU, which no partition holds: they cannot run on these nodes; 1 pods of whole GPUs take 8 partitions per GPU asked here, each a GPU to them"
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, stdout.String())
	}
}

// Of three running pods, one on the MI300X node (which CPX lays out), one
// on the H100 node and one CPU-only on the MI300X node, only the first is
// warned of; under exclusive none is.
func TestWarnPartitionBound(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "m", GPUs: 8, Model: "MI300X"}, {Name: "h", GPUs: 8, Model: "H100-80GB"}}
	bound := []engine.Bound{
		{Node: "m", Pod: trace.PodSpec{Name: "a", NumGPU: 1, GPUMilli: 1000}},
		{Node: "h", Pod: trace.PodSpec{Name: "b", NumGPU: 1, GPUMilli: 1000}},
		{Node: "m", Pod: trace.PodSpec{Name: "c"}},
	}
	modes, err := engine.ParseSharing("partition:CPX,exclusive")
	if err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	warnPartitionBound(modes[0], nodes, bound, &w)
	if want := "simulate: warning: --sharing partition:CPX/NPS1: 1 running pods on AMD nodes laid out in CPX/NPS1 are put in place as the snapshot gives them"; !strings.HasPrefix(w.String(), want) {
		t.Errorf("warning %q, want %q...", w.String(), want)
	}
	w.Reset()
	if warnPartitionBound(modes[1], nodes, bound, &w); w.Len() != 0 {
		t.Errorf("exclusive: %q", w.String())
	}
}
