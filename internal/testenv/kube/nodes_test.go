// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

func names(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func TestBundledNodes(t *testing.T) {
	nodes, err := ReadNodesFile("../../../hack/cluster/nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v100-r1-0", "v100-r1-1", "v100-r2-0", "v100-r2-1"}
	if got := names(nodes); !reflect.DeepEqual(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	for _, n := range nodes {
		if n.GPUs != 8 || n.Model != "V100M32" || n.CPUMilli != 96000 || n.MemoryMiB != 786432 {
			t.Errorf("%+v, want 8 V100M32, 96000 millicores, 786432 MiB", n)
		}
	}
	if nodes[2].Labels["topology.kubernetes.io/rack"] != "r2" {
		t.Errorf("labels of %s: %v", nodes[2].Name, nodes[2].Labels)
	}
}

func TestParseNodesPadsIndices(t *testing.T) {
	nodes, err := ParseNodes("n.yaml", []byte("nodeGroups:\n- {name: a, count: 11, cpuMilli: 1000, memoryMiB: 1024, gpus: 1, model: T4}\n- {name: b, count: 1, cpuMilli: 1000, memoryMiB: 1024, gpus: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := names(nodes)
	if got[0] != "a-00" || got[10] != "a-10" || got[11] != "b-0" || len(got) != 12 {
		t.Fatalf("names %v, want a-00 .. a-10, b-0", got)
	}
	if !sort.StringsAreSorted(got) {
		t.Errorf("names not in file order when sorted: %v", got)
	}
}

func TestParseNodesErrors(t *testing.T) {
	const g = "nodeGroups:\n- {name: a, count: 1, cpuMilli: 1000, memoryMiB: 1024, gpus: 1, model: T4"
	// The messages are trace.ReadCluster's (one node format), with the
	// line.
	for _, c := range []struct{ yaml, want string }{
		{"nodeGroups: []\n", "n.yaml:1: field nodeGroups: want a non-empty list of node groups"},
		{"nodeGroups:\n- {name: a, count: 1, cpuMilli: 1000, memoryMiB: 1024, gpu: 1}\n", `n.yaml:2: nodeGroups[0]: unknown field "gpu" (known: `},
		{"nodeGroups:\n- {name: a, count: 0, cpuMilli: 1000, memoryMiB: 1024}\n", "n.yaml: no nodes"},
		{g + "}\n- {name: b, count: 1, cpuMilli: -1, memoryMiB: 1024}\n", "n.yaml:3: nodeGroups[1].cpuMilli: negative value -1"},
		{"nodeGroups:\n- {name: a, count: 1, cpuMilli: 1000, memoryMiB: 1024, gpus: 2}\n", `n.yaml:2: nodeGroups[0].gpus: 2 GPUs of model "": give a model exactly when the nodes have GPUs`},
		{"nodeGroups:\n- {name: a, count: 1, cpuMilli: 1000, memoryMiB: 1024, gpus: 65, model: T4}\n", "n.yaml:2: nodeGroups[0].gpus: value 65 above 64"},
		{g + ", labels: {'bad key!': x}}\n", `n.yaml:2: nodeGroups[0].labels: key "bad key!"`},
		{g + "}\n" + g[len("nodeGroups:\n"):] + "}\n", `n.yaml:3: name: prefix "a" already used on line 2`},
		{"nodeGroups:\n- {name: A_1, count: 1, cpuMilli: 1000, memoryMiB: 1024}\n", `n.yaml:2: nodeGroups[0].name: name prefix "A_1"`},
		{"nodeGroups:\n  - name: a\n bad\n", "n.yaml:3: did not find expected key"},
	} {
		_, err := ParseNodes("n.yaml", []byte(c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %s...", c.yaml, err, c.want)
		}
	}
}

func TestReadNodesCSV(t *testing.T) {
	nodes, err := ReadNodesFile("testdata/nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{Name: "openb-node-0000", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 2, Model: "P100"},
		{Name: "openb-node-0001", CPUMilli: 96000, MemoryMiB: 393216, GPUs: 8, Model: "G2"},
		{Name: "openb-node-0002", CPUMilli: 32000, MemoryMiB: 131072},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Fatalf("got %+v\nwant %+v", nodes, want)
	}
	_, err = ReadNodesFile("testdata/bad-name.csv")
	if want := `testdata/bad-name.csv:3: column sn: "Node_1" is not a valid node name`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %s...", err, want)
	}
	if _, err := ReadNodesFile("nodes.json"); err == nil || !strings.Contains(err.Error(), "nodes.json: unknown node file type") {
		t.Errorf("error %v for a .json file", err)
	}
}

func TestNodeObject(t *testing.T) {
	n := NodeObject(Node{Name: "v", CPUMilli: 96000, MemoryMiB: 786432, GPUs: 8, Model: "V100M32", Labels: map[string]string{"rack": "r1"}})
	// 786432 MiB = 768 GiB = 768 × 2^30 bytes; 8 GPUs = 8000 milli-GPU;
	// a V100 32GB has 32 × 1024 MiB.
	wantRes := map[corev1.ResourceName]string{
		corev1.ResourceCPU: "96", corev1.ResourceMemory: "768Gi", corev1.ResourcePods: "110",
		gpuresource.GPU: "8", gpuresource.GPUMilli: "8k",
	}
	for _, list := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		if len(list) != len(wantRes) {
			t.Errorf("resources %v, want %v", list, wantRes)
		}
		for name, want := range wantRes {
			if q := list[name]; q.String() != want {
				t.Errorf("%s = %s, want %s", name, q.String(), want)
			}
		}
	}
	if q := n.Status.Capacity[corev1.ResourceMemory]; q.Value() != 824633720832 {
		t.Errorf("memory %d bytes, want 824633720832", q.Value())
	}
	wantLabels := map[string]string{
		"kubernetes.io/hostname": "v", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.product": "V100M32",
		"nvidia.com/gpu.memory": "32768", "gpuplane.io/gpu.model": "V100M32", "rack": "r1",
	}
	if !reflect.DeepEqual(n.Labels, wantLabels) {
		t.Errorf("labels %v\nwant %v", n.Labels, wantLabels)
	}
	if n.Annotations[KwokAnnotation] != "fake" {
		t.Errorf("annotations %v", n.Annotations)
	}

	// G2 is an openb model whose memory is undisclosed; X9 is unknown.
	if l := NodeObject(Node{Name: "g", CPUMilli: 1, MemoryMiB: 1, GPUs: 1, Model: "G2"}).Labels; l["nvidia.com/gpu.memory"] != "" || l["gpuplane.io/gpu.model"] != "G2" {
		t.Errorf("G2 labels %v", l)
	}
	if l := NodeObject(Node{Name: "x", CPUMilli: 1, MemoryMiB: 1, GPUs: 1, Model: "X9"}).Labels; l["gpuplane.io/gpu.model"] != "" || l["nvidia.com/gpu.product"] != "X9" {
		t.Errorf("X9 labels %v", l)
	}
	cpu := NodeObject(Node{Name: "c", CPUMilli: 1000, MemoryMiB: 1024})
	if _, ok := cpu.Status.Capacity[gpuresource.GPU]; ok || cpu.Labels["nvidia.com/gpu.present"] != "" {
		t.Errorf("CPU node has GPU resources or labels: %v %v", cpu.Status.Capacity, cpu.Labels)
	}
}

func TestOrderNames(t *testing.T) {
	nodes := make([]Node, 11)
	for i := range nodes {
		nodes[i].Name = string(rune('z' - i)) // z, y, ..., p: reverse order
	}
	OrderNames(nodes)
	got := names(nodes)
	if got[0] != "00-z" || got[10] != "10-p" || !sort.StringsAreSorted(got) {
		t.Errorf("names %v, want 00-z .. 10-p, sorted", got)
	}
}

// TestExampleClusterNodes makes fake nodes of simulate's example cluster
// YAML: one file for make cluster and gpuplane simulate. 4 A100 nodes
// (a100-0..3), 100 T4 nodes of the typical T4 server (2 GPUs, 104 cores,
// 512 GiB; t4-00..t4-99) and 20 CPU nodes (cpu-00..cpu-19).
func TestExampleClusterNodes(t *testing.T) {
	nodes, err := ReadNodesFile("../../../docs/examples/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := names(nodes)
	if len(got) != 124 || got[0] != "a100-0" || got[4] != "t4-00" || got[103] != "t4-99" || got[104] != "cpu-00" {
		t.Fatalf("%d nodes %v", len(got), got)
	}
	if n := nodes[4]; n.GPUs != 2 || n.Model != "T4" || n.CPUMilli != 104000 || n.MemoryMiB != 512<<10 {
		t.Errorf("T4 node %+v", n)
	}
	if n := nodes[104]; n.GPUs != 0 || n.Model != "" || n.CPUMilli != 96000 || n.MemoryMiB != 384<<10 {
		t.Errorf("CPU node %+v", n)
	}
}
