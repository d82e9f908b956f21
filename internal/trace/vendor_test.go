// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestReadClusterVendors: 2 nodes of 8 MI300X (the typical server, Azure
// ND MI300X v5: 96 cores, 1,850 GiB = 1,894,400 MiB) in CPX/NPS1 have 8 ×
// 8 = 64 GPUs each; a Gaudi3 node 8; a model outside the catalog takes
// the vendor given.
func TestReadClusterVendors(t *testing.T) {
	groups, err := ReadCluster("c.yaml", strings.NewReader("nodeGroups:\n"+
		"  - {name: mi, count: 2, model: MI300X, partition: CPX/NPS1}\n"+
		"  - {name: g, count: 1, model: gaudi3}\n"+
		"  - {name: x, count: 1, model: Ascend910B, vendor: intel, gpus: 8, cpu: 10, memoryGiB: 10}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cpx := gpu.Partition{Compute: "CPX", Memory: "NPS1"}
	want := []NodeSpec{
		{Name: "mi-0", GPUs: 64, Model: "MI300X", Vendor: gpu.AMD, Partition: cpx, CPUMilli: 96000, MemoryMiB: 1894400},
		{Name: "mi-1", GPUs: 64, Model: "MI300X", Vendor: gpu.AMD, Partition: cpx, CPUMilli: 96000, MemoryMiB: 1894400},
		{Name: "g-0", GPUs: 8, Model: "Gaudi3", Vendor: gpu.Intel, CPUMilli: 160000, MemoryMiB: 1792 * 1024},
		{Name: "x-0", GPUs: 8, Model: "Ascend910B", Vendor: gpu.Intel, CPUMilli: 10000, MemoryMiB: 10240},
	}
	got := Nodes(groups)
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || g.GPUs != w.GPUs || g.Model != w.Model || g.Vendor != w.Vendor || g.Partition != w.Partition || g.CPUMilli != w.CPUMilli || g.MemoryMiB != w.MemoryMiB {
			t.Errorf("node %d = %+v, want %+v", i, g, w)
		}
	}
	for _, tc := range []struct{ yaml, want string }{
		{"{count: 1, model: MI300X, vendor: nvidia}", "c.yaml:2: nodeGroups[0].vendor: model MI300X is amd's, not nvidia"},
		{"{count: 1, model: MI300X, vendor: huawei}", `c.yaml:2: nodeGroups[0].vendor: vendor "huawei": want one of nvidia, amd, intel`},
		{"{count: 1, model: H100-80GB, partition: CPX}", "c.yaml:2: nodeGroups[0].partition: model H100-80GB has no compute or memory partitioning"},
		{"{count: 1, model: MI300X, partition: DPX/NPS4}", "c.yaml:2: nodeGroups[0].partition: model MI300X has no partition mode DPX/NPS4"},
		{"{count: 1, model: MI300X, partition: CPX, gpus: 9}", "c.yaml:2: nodeGroups[0].partition: 9 devices of 8 GPUs each (CPX/NPS1) are more than 64 GPUs"},
		{"{count: 1, model: MI300X, partition: XPX}", `c.yaml:2: nodeGroups[0].partition: partition "XPX": "XPX" is not a compute mode`},
	} {
		_, err := ReadCluster("c.yaml", strings.NewReader("nodeGroups:\n  - "+tc.yaml+"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.yaml, err, tc.want)
		}
	}
}

// TestNodeSpecVendors: the short spec gives a catalog model's vendor, and
// reads AMD's node labeller's product name as NVIDIA's product labels.
func TestNodeSpecVendors(t *testing.T) {
	groups, err := ParseNodeSpec("H100-80GB x 8, AMD_Instinct_MI300X x 8, Gaudi3 x 2")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []gpu.Vendor{gpu.NVIDIA, gpu.AMD, gpu.Intel} {
		if groups[i].Vendor != want || groups[i].GPUs != 8 || i == 1 && (groups[i].Model != "MI300X" || groups[i].Name != "amd-instinct-mi300x") {
			t.Errorf("group %d: %s, %d GPUs; want %s, 8", i, groups[i].Vendor, groups[i].GPUs, want)
		}
	}
}

// TestReadNodesVendorColumns: the node CSV's vendor and partition
// columns; the gpu column counts devices (8 MI300X in QPX: 32 GPUs).
func TestReadNodesVendorColumns(t *testing.T) {
	nodes, err := ReadNodes("n.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model,vendor,partition\n"+
		"a,96000,1894400,8,MI300X,amd,QPX\nb,1000,1024,4,Ascend910B,intel,\nc,1000,1024,8,H100-80GB,,\nd,1000,1024,0,,,\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []struct {
		gpus   int
		vendor gpu.Vendor
		mode   string
	}{{32, gpu.AMD, "QPX/NPS1"}, {4, gpu.Intel, ""}, {8, gpu.NVIDIA, ""}, {0, gpu.NVIDIA, ""}} {
		if n := nodes[i]; n.GPUs != w.gpus || n.Vendor != w.vendor || n.Partition.String() != w.mode {
			t.Errorf("node %d: %d GPUs of %s in %q; want %d of %s in %q", i, n.GPUs, n.Vendor, n.Partition, w.gpus, w.vendor, w.mode)
		}
	}
	for _, tc := range []struct{ row, want string }{
		{"a,1,1,8,MI300X,intel,", "n.csv:2: column vendor: model MI300X is amd's, not intel"},
		{"a,1,1,8,H100-80GB,,CPX", "n.csv:2: column partition: model H100-80GB has no compute or memory partitioning"},
	} {
		_, err := ReadNodes("n.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model,vendor,partition\n"+tc.row+"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.row, err, tc.want)
		}
	}
}

// TestReadPodsResourceColumn: the pod CSV's resource column names the
// vendor's resource; "" is a trace's pod (any accelerator).
func TestReadPodsResourceColumn(t *testing.T) {
	pods, err := ReadPods("p.csv", strings.NewReader("name,cpu_milli,memory_mib,num_gpu,gpu_milli,resource\n"+
		"a,1000,1024,2,1000,amd.com/gpu\nb,1000,1024,8,1000,habana.ai/gaudi\nc,1000,1024,1,1000,nvidia.com/gpu\nd,1000,1024,1,500,\ne,1000,1024,1,250,gpuplane.io/gpu-milli\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []cluster.ResourceKind{cluster.ResourceAMD, cluster.ResourceGaudi, cluster.ResourceGPU, cluster.ResourceAny, cluster.ResourceMilli} {
		if pods[i].Resource != want {
			t.Errorf("pod %d: resource %s, want %s", i, pods[i].Resource.Name(), want.Name())
		}
	}
	for _, tc := range []struct{ row, want string }{
		{"a,1,1,1,500,amd.com/gpu", "p.csv:2: column resource: resource amd.com/gpu with num_gpu 1 and gpu_milli 500: it counts whole devices"},
		{"a,1,1,0,0,habana.ai/gaudi", "p.csv:2: column resource: resource habana.ai/gaudi with num_gpu 0"},
		{"a,1,1,2,1000,gpuplane.io/gpu-milli", "p.csv:2: column resource: resource gpuplane.io/gpu-milli with num_gpu 2: it is a share of one GPU"},
		{"a,1,1,1,1000,amd.com/cpx_nps1", `p.csv:2: column resource: resource "amd.com/cpx_nps1": want nvidia.com/gpu, amd.com/gpu, habana.ai/gaudi, gpuplane.io/gpu-milli or nothing`},
	} {
		_, err := ReadPods("p.csv", strings.NewReader("name,cpu_milli,memory_mib,num_gpu,gpu_milli,resource\n"+tc.row+"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.row, err, tc.want)
		}
	}
}
