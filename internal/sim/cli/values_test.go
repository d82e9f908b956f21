// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// TestValuesModes: -o values sets, per sharing mode and kubelet API, the
// chart's keys that mode needs and no other (deploy/helm's
// TestSimulateValues renders them with the chart).
func TestValuesModes(t *testing.T) {
	for _, tc := range []struct {
		sharing, api, order string
		want                chartValues
	}{
		{"exclusive", "device-plugin", "", chartValues{}},
		{"fractional", "device-plugin", "", chartValues{Config: &agentConfig{Version: "v1", Gpuplane: &agentExtension{MilliGPU: true}}}},
		{"fractional", "dra", "", chartValues{NodeAgent: &nodeAgentValues{KubeletAPI: "dra", DRA: &draValues{Shares: true}}}},
		{"mig", "dra", "", chartValues{NodeAgent: &nodeAgentValues{KubeletAPI: "dra", DRA: &draValues{MIGOrder: "core"}}}},
		{"mig", "dra", "table", chartValues{NodeAgent: &nodeAgentValues{KubeletAPI: "dra", DRA: &draValues{MIGOrder: "table"}}}},
		{"mig", "dra", "stale", chartValues{NodeAgent: &nodeAgentValues{KubeletAPI: "dra", DRA: &draValues{MIGOrder: "core"}}}},
	} {
		o := DefaultOptions()
		o.Seeds, o.Policies, o.Sharing, o.GPUAPI, o.Format = 1, "leastallocated", tc.sharing, tc.api, "values"
		o.DRAMIGOrder = tc.order
		var stdout, stderr strings.Builder
		if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
			t.Fatalf("%s %s: %v\n%s", tc.sharing, tc.api, err, stderr.String())
		}
		var got chartValues
		dec := yaml.NewDecoder(strings.NewReader(stdout.String()))
		dec.KnownFields(true)
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("%s %s: %v\n%s", tc.sharing, tc.api, err, stdout.String())
		}
		tc.want.Scheduler = schedulerValues{Enabled: true, Policy: "leastallocated", TieBreak: o.TieBreak}
		wb, _ := yaml.Marshal(tc.want)
		if gb, _ := yaml.Marshal(got); string(gb) != string(wb) {
			t.Errorf("%s %s: values\n%s\nwant\n%s", tc.sharing, tc.api, gb, wb)
		}
	}
	o := DefaultOptions()
	o.Format, o.Size = "values", "placed>=99%"
	if err := Run(context.Background(), o, &strings.Builder{}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "-o values") {
		t.Errorf("-o values with --size: %v", err)
	}
}

// TestValuesRefused: a recommendation the chart cannot deploy is an error
// of -o values, not a values file without its sharing mode.
func TestValuesRefused(t *testing.T) {
	var v chartValues
	if _, err := v.setSharing("timeslice:2", true, nil); err == nil || !strings.Contains(err.Error(), "--gpu-api dra") {
		t.Errorf("timeslice under dra: %v", err)
	}
	if _, err := v.setSharing("mps", false, nil); err == nil || !strings.Contains(err.Error(), "sharing mps has no setting") {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestValuesTieKeepsDefault: where every policy allocates the same (the
// example snapshot: each pod once, 83.33% under all nine), the values keep
// the chart's default policy instead of the first of the tied.
func TestValuesTieKeepsDefault(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.Seeds, o.Format = "../../../docs/examples/snapshot.json", 1, "values"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var got chartValues
	if err := yaml.Unmarshal([]byte(stdout.String()), &got); err != nil {
		t.Fatal(err)
	}
	if got.Scheduler.Policy != placement.DefaultPolicy || !strings.Contains(stdout.String(), "the default is kept") {
		t.Errorf("policy %q, want the default %q:\n%s", got.Scheduler.Policy, placement.DefaultPolicy, stdout.String())
	}
}

// TestValuesInfeasible: a run whose best configuration places fewer than
// half the arrived pods (engine's "infeasible" verdict, Policy and Sharing
// empty) writes no values file: there is nothing to deploy.
func TestValuesInfeasible(t *testing.T) {
	rep := &engine.Report{Params: &engine.Params{TieBreak: "random"}, Recommendation: &engine.Recommendation{Verdict: "infeasible"}}
	var b strings.Builder
	if err := writeValues(&b, rep); err == nil || !strings.Contains(err.Error(), "nothing to deploy") || b.Len() != 0 {
		t.Errorf("infeasible: err %v, wrote %q", err, b.String())
	}
}

// TestValuesGivenMIG: a --mig-config whose GPUs differ (GPUs 0-1 as 2 ×
// 3g.40gb, GPU 3 as 7 × 1g.10gb, GPU 2 whole, on 2 nodes of 4 A100-80GB)
// is written back GPU by GPU, as simulated (a new-user pass got GPUs 0-3
// as 7 × 1g.10gb, the last GPU's layout), with the kubectl command that
// labels its nodes.
func TestValuesGivenMIG(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return writeFile(t, dir, name, body) }
	o := DefaultOptions()
	o.Seeds, o.Policies, o.Sharing, o.Format = 1, "fgd", "mig", "values"
	o.NodesFile = write("c.yaml", "nodeGroups:\n  - {name: a100, count: 2, model: A100-80GB, gpus: 4}\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,1,400\nb,1000,1024,1,100\n")
	o.MIGConfig = write("mig.yaml", "version: v1\nmig-configs:\n  c:\n    - devices: [0, 1]\n      mig-enabled: true\n      mig-devices: {3g.40gb: 2}\n    - devices: [3]\n      mig-enabled: true\n      mig-devices: {1g.10gb: 7}\n")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var got chartValues
	if err := yaml.Unmarshal([]byte(stdout.String()), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][]migPartedGPU{"gpuplane-a100-80gb": {
		{Devices: []any{0, 1}, MIGEnabled: true, MIGDevices: migDevices{"3g.40gb": 2}},
		{Devices: []any{2}, MIGEnabled: false},
		{Devices: []any{3}, MIGEnabled: true, MIGDevices: migDevices{"1g.10gb": 7}},
	}}
	if got.MIGManager == nil || !reflect.DeepEqual(got.MIGManager.Config.MIGConfigs, want) {
		t.Errorf("mig-configs %+v, want %+v\n%s", got.MIGManager, want, stdout.String())
	}
	for _, line := range []string{
		"#   2 A100-80GB nodes, 3 of 4 GPUs with MIG (GPUs 0-1: 2 × 3g.40gb; GPU 3: 7 × 1g.10gb): nvidia.com/mig.config=gpuplane-a100-80gb\n",
		"#     kubectl label node a100-0 a100-1 nvidia.com/mig.config=gpuplane-a100-80gb --overwrite\n",
	} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("header lacks %q:\n%s", line, stdout.String())
		}
	}
}

// TestNodeList: runs of three or more numbered names as bash brace
// expansions, other names than plain words quoted for the shell (a
// new-user pass had node CSV names run as commands), worked by hand.
func TestNodeList(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a-0", "a-1", "a-2", "b"}, "a-{0..2} b"},
		{[]string{"a-0", "a-1", "b-7"}, "a-0 a-1 b-7"},
		{[]string{"n-01", "n-02", "n-03"}, "n-0{1..3}"},
		{[]string{"n-08", "n-09", "n-10"}, "n-08 n-09 n-10"},
		{[]string{"gpu-9", "gpu-10", "gpu-11", "gpu-13"}, "gpu-{9..11} gpu-13"},
		{[]string{"x"}, "x"},
		{[]string{"n$(id)", "x;ls", "it's", "n{1..2}", "*", "a b"}, `'n$(id)' 'x;ls' 'it'\''s' 'n{1..2}' '*' 'a b'`},
	} {
		if got := nodeList(tc.names); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.names, got, tc.want)
		}
	}
}
