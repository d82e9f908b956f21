// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"os"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestReadMixedVendors reads testdata/mixed-vendors.json, hand-made as
// kubectl get nodes,pods -o json lists a cluster whose AMD node AMD's
// device plugin and node labeller serve (ROCm/k8s-device-plugin: 64
// amd.com/gpu, 8 MI300X in CPX/NPS1, labels amd.com/gpu.product-name
// AMD_Instinct_MI300X and amd.com/gpu.compute-memory-partition cpx_nps1)
// and whose Gaudi node Intel's Gaudi plugin serves (8 habana.ai/gaudi,
// gpuplane's model label Gaudi3). Each node is its vendor's; each pod
// asks for its vendor's whole devices (limits count as requests).
func TestReadMixedVendors(t *testing.T) {
	f, err := os.Open("testdata/mixed-vendors.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Read("mixed-vendors.json", f)
	if err != nil {
		t.Fatal(err)
	}
	cpx := gpu.Partition{Compute: "CPX", Memory: "NPS1"}
	for i, w := range []struct {
		model  string
		vendor gpu.Vendor
		gpus   int
		part   gpu.Partition
		cpu    int64
	}{{"H100-80GB", gpu.NVIDIA, 8, gpu.Partition{}, 112000}, {"MI300X", gpu.AMD, 64, cpx, 96000}, {"Gaudi3", gpu.Intel, 8, gpu.Partition{}, 160000}} {
		n := s.Nodes[i].NodeSpec
		if n.Model != w.model || n.Vendor != w.vendor || n.GPUs != w.gpus || n.Partition != w.part || n.CPUMilli != w.cpu {
			t.Errorf("node %s: %s of %s, %d GPUs, %q, %d m; want %s of %s, %d, %q, %d", n.Name, n.Model, n.Vendor, n.GPUs, n.Partition, n.CPUMilli, w.model, w.vendor, w.gpus, w.part, w.cpu)
		}
	}
	for i, w := range []struct {
		kind cluster.ResourceKind
		n    int8
	}{{cluster.ResourceAMD, 8}, {cluster.ResourceGaudi, 4}, {cluster.ResourceGPU, 1}, {cluster.ResourceAMD, 1}} {
		p := s.Pods[i]
		if p.Resource != w.kind || p.NumGPU != w.n || p.GPUMilli != 1000 {
			t.Errorf("pod %s: %d x %s (%d milli); want %d x %s", p.Name, p.NumGPU, p.Resource.Name(), p.GPUMilli, w.n, w.kind.Name())
		}
	}
}

// TestReadVendorErrors: a node of two vendors' resources, a partition
// mode the model lacks, a Gaudi node labelled with an NVIDIA model.
func TestReadVendorErrors(t *testing.T) {
	for _, tc := range []struct{ labels, alloc, want string }{
		{``, `,"nvidia.com/gpu":"8","amd.com/gpu":"8"`, "a node that serves accelerators of two vendors is not simulated"},
		{`"amd.com/gpu.product-name":"AMD_Instinct_MI300X","amd.com/gpu.compute-memory-partition":"dpx_nps4"`, `,"amd.com/gpu":"16"`, `["amd.com/gpu.compute-memory-partition"]: model MI300X has no partition mode DPX/NPS4`},
		{`"gpuplane.io/gpu.model":"H100-80GB"`, `,"habana.ai/gaudi":"8"`, "model H100-80GB is nvidia's, and the node serves habana.ai/gaudi"},
	} {
		_, err := Read("s.json", strings.NewReader(list(dpNode("n", tc.labels, tc.alloc))))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.labels, tc.alloc, err, tc.want)
		}
	}
}
