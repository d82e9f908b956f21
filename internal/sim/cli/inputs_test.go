// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/testenv"
)

// runJSON runs o with --format json and returns the report.
func runJSON(t *testing.T, o Options) *engine.Report {
	t.Helper()
	o.Format = "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout.String())
	}
	return &rep
}

// TestRunNodesYAMLAndSpec reads the same cluster as YAML and as a short
// spec: 3 typical T4 servers (2 GPUs, 104 cores, 512 GiB each, from the
// openb node list): 3 nodes, 6 GPUs. The pods are one Alibaba 2025 GPU row
// (1 GPU, 12 vCPU, 120 GiB) and one small CPU row (1 vCPU, 1 GiB). Fill
// samples pods until the arrived GPU demand reaches 1.3 × 6 = 7.8 GPUs, so
// 8 GPU pods arrive; 6 of them fill the 6 GPUs (2 per node need 24 cores
// and 240 GiB of the node's 104 and 512, so only more than 80 CPU pods on
// one node could block one), and the allocation ratio is 6/6 = 1.
func TestRunNodesYAMLAndSpec(t *testing.T) {
	dir := t.TempDir()
	yamlFile, pods := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "pods.csv")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(yamlFile, "nodeGroups:\n  - {name: t4, count: 3, model: T4}\n")
	write(pods, "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,rdma_limit,memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,creation_time,scheduled_time,deletion_time\n"+
		"instance_0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n"+
		"instance_1,CN,app_1,1,1,0,0,1,1,1.0,1.0,1,1,-1,10,10,20\n")
	for _, nodes := range []string{yamlFile, "T4 x 3"} {
		o := DefaultOptions()
		o.Seeds, o.Policies, o.NodesFile, o.PodsFile = 1, "bestfit", nodes, pods
		rep := runJSON(t, o)
		if rep.Nodes != 3 || rep.GPUs != 6 || rep.Pods != 2 {
			t.Fatalf("%s: %d nodes, %d GPUs, %d pods; want 3, 6, 2", nodes, rep.Nodes, rep.GPUs, rep.Pods)
		}
		if r := rep.Results[0]; r.GPUAllocationRatio != 1 {
			t.Errorf("%s: GPU allocation ratio %v, want 1", nodes, r.GPUAllocationRatio)
		}
	}
}

// TestRunAlibaba2025OnT4 runs the command of docs/simulate.md on the
// published 2025 trace: 200 typical T4 servers hold 400 GPUs.
func TestRunAlibaba2025OnT4(t *testing.T) {
	o := DefaultOptions()
	o.Seeds, o.Policies, o.NodesFile = 1, "bestfit", "T4 x 200"
	o.PodsFile = filepath.Join(testenv.TracesDir(t), "alibaba-gpu-v2025", "disaggregated_DLRM_trace.csv")
	rep := runJSON(t, o)
	if rep.Nodes != 200 || rep.GPUs != 400 || rep.Pods != 23871 {
		t.Fatalf("%d nodes, %d GPUs, %d pods; want 200, 400, 23,871", rep.Nodes, rep.GPUs, rep.Pods)
	}
	if r := rep.Results[0]; r.GPUAllocationRatio <= 0 || r.GPUAllocationRatio > 1 {
		t.Errorf("GPU allocation ratio %v", r.GPUAllocationRatio)
	}
}

func TestRunNodesErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "c.yml")
	if err := os.WriteFile(bad, []byte("nodeGroups:\n  - {count: 1, model: T4, gpu: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for nodes, want := range map[string]string{
		bad:       bad + `:2: nodeGroups[0]: unknown field "gpu"`,
		"H20 x 2": `--nodes: node spec item 1 "H20 x 2": model "H20" has no typical server`,
	} {
		o := DefaultOptions()
		o.NodesFile, o.PodsFile = nodes, bad
		err := Run(context.Background(), o, &strings.Builder{}, &strings.Builder{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want prefix %q", nodes, err, want)
		}
	}
}

// TestRunNodesAlone: --nodes without --pods runs the built-in pods (2,400
// from the openb shapes) on the user's nodes, 2 L4 servers (8 GPUs each)
// and 3 T4 servers (2 each) here, and says so in the source line.
func TestRunNodesAlone(t *testing.T) {
	o := DefaultOptions()
	o.NodesFile, o.Seeds, o.Policies, o.Format = "2x NVIDIA-L4; T4 x 3", 1, "bestfit", "json"
	var out, errs strings.Builder
	if err := Run(context.Background(), o, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	for _, want := range []string{`"source": "2x NVIDIA-L4; T4 x 3 + built-in pods"`, `"name": "node spec: 2x NVIDIA-L4; T4 x 3"`, `"name": "built-in pods: trace.BuiltinPods(2400, seed 42), internal/trace/builtin.go"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s", want)
		}
	}
}

// TestRunExplainsCodes: an openb node list's model codes are said on
// stderr with what they stand for (gpu.About), each once; T4 needs no
// word.
func TestRunExplainsCodes(t *testing.T) {
	nodes := filepath.Join(t.TempDir(), "nodes.csv")
	if err := os.WriteFile(nodes, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nn1,96000,393216,8,g2\nn2,32000,131072,4,V100M16\nn3,104000,524288,2,T4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.NodesFile, o.Seeds, o.Policies = nodes, 1, "bestfit"
	var out, errs strings.Builder
	if err := Run(context.Background(), o, &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	want := "simulate: " + nodes + " models: G2 = undisclosed openb model, memory unknown, priced as a V100; V100M16 = NVIDIA V100 16 GB (openb code)\n"
	if !strings.Contains(errs.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs.String())
	}
}
