// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"
	"strings"
	"testing"
)

const twoGroups = `nodeGroups:
  - name: a100
    count: 2
    model: A100-80GB
    gpus: 8
    cpu: 128
    memoryGiB: 1024.5
    mig: [3g.40gb, 2g.20gb, 1g.10gb]
  - count: 3
    model: T4
`

func TestReadClusterTwoGroups(t *testing.T) {
	groups, err := ReadCluster("c.yaml", strings.NewReader(twoGroups))
	if err != nil {
		t.Fatal(err)
	}
	nodes := Nodes(groups)
	// 2 A100 nodes: 128 cores = 128,000 m; 1024.5 GiB = 1,049,088 MiB.
	// 3 T4 nodes of the typical T4 server: 2 GPUs, 104,000 m, 512 GiB =
	// 524,288 MiB; prefix "t4" (the model in lower case); line 9. Each
	// node carries its group's MIG layout (mig: line 8).
	want := []NodeSpec{
		{Name: "a100-0", CPUMilli: 128000, MemoryMiB: 1049088, GPUs: 8, Model: "A100-80GB", MIG: []string{"3g.40gb", "2g.20gb", "1g.10gb"}, MIGLine: 8, Line: 2},
		{Name: "a100-1", CPUMilli: 128000, MemoryMiB: 1049088, GPUs: 8, Model: "A100-80GB", MIG: []string{"3g.40gb", "2g.20gb", "1g.10gb"}, MIGLine: 8, Line: 2},
		{Name: "t4-0", CPUMilli: 104000, MemoryMiB: 524288, GPUs: 2, Model: "T4", Line: 9},
		{Name: "t4-1", CPUMilli: 104000, MemoryMiB: 524288, GPUs: 2, Model: "T4", Line: 9},
		{Name: "t4-2", CPUMilli: 104000, MemoryMiB: 524288, GPUs: 2, Model: "T4", Line: 9},
	}
	if fmt.Sprint(nodes) != fmt.Sprint(want) {
		t.Fatalf("nodes\n%+v\nwant\n%+v", nodes, want)
	}
	if fmt.Sprint(groups[0].MIG) != "[3g.40gb 2g.20gb 1g.10gb]" || groups[1].MIG != nil {
		t.Fatalf("MIG layouts %v, %v", groups[0].MIG, groups[1].MIG)
	}
}

func TestReadClusterErrors(t *testing.T) {
	g := func(s string) string { return "nodeGroups:\n  - " + s + "\n" }
	cases := []struct{ name, in, want string }{
		{"empty", "", "c.yaml:1: empty file"},
		{"top key", "groups: []\n", `c.yaml:1: unknown field "groups" (want nodeGroups)`},
		{"empty list", "nodeGroups: []\n", "c.yaml:1: field nodeGroups: want a non-empty list of node groups"},
		{"unknown key", g("count: 1\n    model: T4\n    memory: 3"), `c.yaml:4: nodeGroups[0]: unknown field "memory" (known: name, count, model, vendor, partition, gpus, cpu, memoryGiB, mig, labels, cpuMilli, memoryMiB); did you mean "memoryGiB"?`},
		{"both spellings", g("count: 1\n    model: T4\n    cpu: 2\n    cpuMilli: 2000"), "c.yaml:2: nodeGroups[0].cpuMilli: given with cpu; give one"},
		{"fraction of millicores", g("count: 1\n    model: T4\n    cpuMilli: 1.5"), "c.yaml:4: nodeGroups[0].cpuMilli: 1.5 is not a whole number"},
		{"fractional count", g("count: 2.5\n    model: T4"), "c.yaml:2: nodeGroups[0].count: 2.5 is not a whole number"},
		{"bad label key", g("count: 1\n    model: T4\n    labels: {'bad key!': x}"), `c.yaml:4: nodeGroups[0].labels: key "bad key!" is not a qualified name`},
		{"bad label value", g("count: 1\n    model: T4\n    labels: {rack: -r1}"), `c.yaml:4: nodeGroups[0].labels: rack: value "-r1" is not a label value`},
		{"label not a mapping", g("count: 1\n    model: T4\n    labels: [a]"), `c.yaml:4: nodeGroups[0].labels: want a mapping of strings`},
		{"other model, no cpu", g("count: 1\n    model: Ascend910B\n    gpus: 8\n    memoryGiB: 2048"), `c.yaml:3: nodeGroups[0].model: model "Ascend910B" is not in the GPU catalog`},
		{"repeated key", g("count: 1\n    count: 2"), "c.yaml:3: nodeGroups[0].count: given twice"},
		{"not integer", g("count: many"), `c.yaml:2: nodeGroups[0].count: "many" is not an integer`},
		{"too many GPUs", g("count: 1\n    model: T4\n    gpus: 65"), "c.yaml:4: nodeGroups[0].gpus: value 65 above 64"},
		{"negative cpu", g("count: 1\n    model: T4\n    cpu: -1"), "c.yaml:4: nodeGroups[0].cpu: negative value -1"},
		{"missing count", g("model: T4"), "c.yaml:2: nodeGroups[0].count: missing"},
		{"unknown model", g("count: 1\n    model: Ascend910B"), `c.yaml:3: nodeGroups[0].model: model "Ascend910B" is not in the GPU catalog`},
		{"no typical server", g("count: 1\n    model: H20\n    gpus: 4"), `c.yaml:2: nodeGroups[0].cpu: missing, and model "H20" has no typical server to take it from`},
		{"MIG on T4", g("count: 1\n    model: T4\n    mig: [1g.5gb]"), `c.yaml:4: nodeGroups[0].mig: model "T4" does not support MIG`},
		{"MIG too big", g("count: 1\n    model: A100-80GB\n    mig: [4g.40gb, 4g.40gb]"), "c.yaml:4: nodeGroups[0].mig: "},
		{"MIG empty", g("count: 1\n    model: A100-80GB\n    mig: []"), "c.yaml:4: nodeGroups[0].mig: no MIG device: a GPU in MIG mode with none serves no pod; leave mig out for whole GPUs"},
		{"bad prefix", g("count: 1\n    model: T4\n    name: Big_Nodes"), `c.yaml:4: nodeGroups[0].name: name prefix "Big_Nodes"`},
		{"same prefix", "nodeGroups:\n  - {count: 1, model: T4}\n  - {count: 1, model: T4}\n", `c.yaml:3: name: prefix "t4" already used on line 2`},
		{"GPUs without model", g("count: 1\n    gpus: 2\n    cpu: 1\n    memoryGiB: 1"), `c.yaml:3: nodeGroups[0].gpus: 2 GPUs of model "": give a model exactly when the nodes have GPUs`},
		{"two documents", "nodeGroups: [{count: 1, model: T4}]\n---\nx: 1\n", "c.yaml:2: a second YAML document; give one"},
		{"syntax", "nodeGroups: [\n", "c.yaml:1: did not find expected node content"},
		{"no nodes", g("count: 0\n    model: T4"), "c.yaml: no nodes"},
	}
	for _, tc := range cases {
		_, err := ReadCluster("c.yaml", strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.name, err, tc.want)
		}
	}
}

// TestReadClusterNodeYAML reads make cluster's former node YAML spellings
// (cpuMilli, memoryMiB), labels, and a model outside the catalog given
// with gpus, cpu and memory.
func TestReadClusterNodeYAML(t *testing.T) {
	in := "nodeGroups:\n- name: v100-r1\n  count: 2\n  cpuMilli: 96000\n  memoryMiB: 786432\n  gpus: 8\n  model: V100M32\n  labels:\n    topology.kubernetes.io/rack: r1\n" +
		"- {name: b, count: 1, model: Ascend910B, gpus: 8, cpu: 224, memoryGiB: 2048}\n"
	groups, err := ReadCluster("n.yaml", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// 96000 m and 786432 MiB (768 GiB) as given; 224 cores = 224000 m,
	// 2048 GiB = 2097152 MiB.
	g := groups[0]
	if g.CPUMilli != 96000 || g.MemoryMiB != 786432 || g.GPUs != 8 || g.Labels["topology.kubernetes.io/rack"] != "r1" || len(g.Labels) != 1 {
		t.Errorf("group 0: %+v", g)
	}
	if g := groups[1]; g.Model != "Ascend910B" || g.CPUMilli != 224000 || g.MemoryMiB != 2097152 || g.Labels != nil {
		t.Errorf("group 1: %+v", g)
	}
}

func TestReadClusterCPUOnly(t *testing.T) {
	groups, err := ReadCluster("c.yaml", strings.NewReader("nodeGroups:\n  - {count: 2, gpus: 0, cpu: 0.5, memoryGiB: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// 0.5 cores = 500 m, 2 GiB = 2,048 MiB, prefix "cpu".
	want := "[{cpu-0 500 2048 0  nvidia  false false 0 0 [] 0 0 false 0 0  2 map[] [] false} {cpu-1 500 2048 0  nvidia  false false 0 0 [] 0 0 false 0 0  2 map[] [] false}]" // Vendor nvidia (the zero value), Partition "", NodeSpec.Shared false, MIGAsGPU false, ReplicaMilli 0, MIGServed 0, MIG [] at line 0, MIGGPUs 0, NoDynamicMIG false, MIGModeGPUs 0, Serving 0 (device plugin), no labels, taints or cordon
	if got := fmt.Sprint(Nodes(groups)); got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

func TestParseNodeSpec(t *testing.T) {
	groups, err := ParseNodeSpec("A100-80GB x 16, T4 x 100")
	if err != nil {
		t.Fatal(err)
	}
	nodes := Nodes(groups)
	// 16 DGX A100 640GB (8 GPUs, 128 cores, 2 TB) and 100 T4 servers of
	// the openb trace (2 GPUs, 104 cores, 512 GiB): 116 nodes, 328 GPUs.
	gpus := 0
	for _, n := range nodes {
		gpus += n.GPUs
	}
	if len(nodes) != 116 || gpus != 328 {
		t.Fatalf("%d nodes, %d GPUs; want 116, 328", len(nodes), gpus)
	}
	if n := nodes[0]; n.Name != "a100-80gb-0" || n.CPUMilli != 128000 || n.MemoryMiB != 2097152 || n.Model != "A100-80GB" {
		t.Errorf("first node %+v", n)
	}
	if n := nodes[115]; n.Name != "t4-99" || n.CPUMilli != 104000 || n.MemoryMiB != 524288 || n.GPUs != 2 || n.Line != 2 {
		t.Errorf("last node %+v", n)
	}
	for _, tc := range []struct{ in, want string }{
		{"T4", `node spec item 1 "T4": want MODEL x COUNT or COUNT x MODEL`},
		{"T4 x 0", `node spec item 1 "T4 x 0": count "0" is not an integer in [1, 100000]`},
		{"T4 x 1, H20 x 2", `node spec item 2 "H20 x 2": model "H20" has no typical server; describe its nodes in a cluster YAML file`},
		{"T4 x 1, T4 x 2", `node spec:2: name: prefix "t4" already used on line 1`},
	} {
		if _, err := ParseNodeSpec(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	if !IsNodeSpec("T4 x 200") || IsNodeSpec("nodes.csv") {
		t.Error("IsNodeSpec")
	}
	// Malformed specs are specs (ParseNodeSpec names what is wrong), not
	// file names that do not exist.
	for _, tc := range []struct{ in, want string }{
		{"A100 x", `node spec item 1 "A100 x": want MODEL x COUNT or COUNT x MODEL`},
		{"A100-80GB x 0", `node spec item 1 "A100-80GB x 0": count "0" is not an integer in [1, 100000]`},
		{"A100x4", `node spec item 1 "A100x4": want MODEL x COUNT or COUNT x MODEL`},
		{"T4 x 2, x 3", `node spec item 2 "x 3": want MODEL x COUNT or COUNT x MODEL`},
	} {
		if !IsNodeSpec(tc.in) {
			t.Errorf("IsNodeSpec(%q) = false, want true", tc.in)
		}
		if _, err := ParseNodeSpec(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	for _, name := range []string{"nodes.yaml", "openb_node_list_gpu_node.csv", "x", "dir/x.csv", "max4.csv", "4x.csv"} {
		if IsNodeSpec(name) {
			t.Errorf("IsNodeSpec(%q) = true, want a file name", name)
		}
	}
}

// TestParseNodeSpecForms: the forms users type besides MODEL x COUNT.
// "4x A100-80GB" and "4 x A100-80GB" are 4 nodes, as "A100-80GB x 4" is;
// ';' joins items as ',' does; NVIDIA's product label, as
// gpu-feature-discovery publishes nvidia.com/gpu.product (the NVML name
// with spaces made '-', github.com/NVIDIA/k8s-device-plugin
// internal/lm/resource.go), names the catalog model; L4 and L40S have
// typical servers (8 GPUs each: GCP g2-standard-96, AWS g6e.48xlarge).
func TestParseNodeSpecForms(t *testing.T) {
	for in, want := range map[string]string{
		"4x A100-80GB":              "a100-80gb A100-80GB 4x8",
		"4X a100-80gb":              "a100-80gb A100-80GB 4x8",
		"4 x A100-80GB":             "a100-80gb A100-80GB 4x8",
		"4× T4":                     "t4 T4 4x2",
		"T4 x 3; 2x L4":             "t4 T4 3x2, l4 L4 2x8",
		"NVIDIA-A100-SXM4-80GB x 2": "nvidia-a100-sxm4-80gb A100-80GB 2x8",
		"NVIDIA-H100-80GB-HBM3 x 1; Tesla-T4 x 5": "nvidia-h100-80gb-hbm3 H100-80GB 1x8, tesla-t4 T4 5x2",
		"NVIDIA-L4 x 3, NVIDIA-L40S x 2":          "nvidia-l4 L4 3x8, nvidia-l40s L40S 2x8",
		"3x Tesla-T4-SHARED":                      "tesla-t4-shared T4 3x2",
	} {
		if !IsNodeSpec(in) {
			t.Errorf("IsNodeSpec(%q) = false", in)
		}
		groups, err := ParseNodeSpec(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		var got []string
		for _, g := range groups {
			got = append(got, fmt.Sprintf("%s %s %dx%d", g.Name, g.Model, g.Count, g.GPUs))
		}
		if s := strings.Join(got, ", "); s != want {
			t.Errorf("%q: %s, want %s", in, s, want)
		}
	}
	for in, want := range map[string]string{
		"4x":                                   `node spec item 1 "4x": want MODEL x COUNT or COUNT x MODEL`,
		"T4 x 2;":                              `node spec item 2 "": want MODEL x COUNT or COUNT x MODEL`,
		"0x T4":                                `node spec item 1 "0x T4": count "0" is not an integer in [1, 100000]`,
		"NVIDIA-L40 x 1":                       `node spec item 1 "NVIDIA-L40 x 1": model "NVIDIA-L40" is not in the GPU catalog`,
		"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb x 1": `node spec item 1 "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb x 1": model "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb" is a MIG device; describe MIG layouts in a cluster YAML file`,
		"2x A100-80GB; A100-80GB x 1":          `node spec:2: name: prefix "a100-80gb" already used on line 1`,
	} {
		if _, err := ParseNodeSpec(in); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: error %v, want prefix %q", in, err, want)
		}
	}
}

// FuzzReadCluster checks that no input makes ReadCluster panic, that its
// errors name the file, and that the groups it accepts are valid.
func FuzzReadCluster(f *testing.F) {
	f.Add([]byte(twoGroups))
	f.Add([]byte("nodeGroups:\n  - {count: 2, gpus: 0, cpu: 0.5, memoryGiB: 2}\n"))
	f.Add([]byte("nodeGroups: [{count: 1, model: A100-40GB, mig: [7g.40gb]}]\n---\n"))
	f.Add([]byte("nodeGroups: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		groups, err := ReadCluster("f.yaml", strings.NewReader(string(data)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		total := 0
		for _, g := range groups {
			total += g.Count
			if g.Count < 0 || g.GPUs < 0 || g.GPUs > 64 || g.CPUMilli < 0 || g.MemoryMiB < 0 || (g.Model == "") != (g.GPUs == 0) || g.Name == "" {
				t.Fatalf("accepted an invalid group %+v", g)
			}
		}
		if total < 1 || total > maxClusterNodes {
			t.Fatalf("accepted %d nodes", total)
		}
	})
}

// FuzzParseNodeSpec checks that no spec makes ParseNodeSpec panic.
func FuzzParseNodeSpec(f *testing.F) {
	f.Add("A100-80GB x 16, T4 x 100")
	f.Add("T4 × 3")
	f.Add("4x A100-80GB; NVIDIA-A100-SXM4-80GB x 2")
	f.Add("2 x Tesla-T4-SHARED, NVIDIA-L4 x 1")
	f.Fuzz(func(t *testing.T, spec string) {
		groups, err := ParseNodeSpec(spec)
		if err != nil {
			return
		}
		for _, g := range groups {
			if g.Count < 1 || g.GPUs < 1 || g.Model == "" {
				t.Fatalf("accepted an invalid group %+v", g)
			}
		}
	})
}

// TestExampleCluster reads docs/examples/cluster.yaml: 4 A100 nodes of 8
// GPUs, 100 typical T4 servers of 2 and 20 CPU-only nodes: 124 nodes,
// 4 × 8 + 100 × 2 = 232 GPUs.
func TestExampleCluster(t *testing.T) {
	groups, err := ReadClusterFile("../../docs/examples/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := Nodes(groups)
	gpus := 0
	for _, n := range nodes {
		gpus += n.GPUs
	}
	if len(nodes) != 124 || gpus != 232 || len(groups[0].MIG) != 4 {
		t.Fatalf("%d nodes, %d GPUs, MIG %v; want 124, 232 and 4 MIG devices", len(nodes), gpus, groups[0].MIG)
	}
}

// TestMakeClusterNodes reads make cluster's default nodes, the same format
// as simulate's: 2 groups of 2 V100M32 nodes (8 GPUs, 96 cores = 96000 m,
// 768 GiB = 786432 MiB), one rack label each.
func TestMakeClusterNodes(t *testing.T) {
	groups, err := ReadClusterFile("../../hack/cluster/nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "[{v100-r1-0 96000 786432 8 V100M32 nvidia  false false 0 0 [] 0 0 false 0 0  6 map[] [] false} {v100-r1-1 96000 786432 8 V100M32 nvidia  false false 0 0 [] 0 0 false 0 0  6 map[] [] false} {v100-r2-0 96000 786432 8 V100M32 nvidia  false false 0 0 [] 0 0 false 0 0  14 map[] [] false} {v100-r2-1 96000 786432 8 V100M32 nvidia  false false 0 0 [] 0 0 false 0 0  14 map[] [] false}]" // lines 6 and 14; Serving 0 (device plugin), no labels (Nodes leaves them to the groups), taints or cordon
	if got := fmt.Sprint(Nodes(groups)); got != want {
		t.Errorf("nodes %s\nwant  %s", got, want)
	}
	if len(groups) != 2 || groups[1].Labels["topology.kubernetes.io/rack"] != "r2" {
		t.Errorf("groups %+v", groups)
	}
}
