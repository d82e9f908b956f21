// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestNewPartitionedNode: a node of 8 MI300X is 8 GPUs in SPX, 16 in DPX,
// 32 in QPX and 64 in CPX (8 per device, AMD's CPX: one GPU per XCD); 8
// Gaudi3 are 8; 8 H100-80GB 8 and no AMD mode; 9 MI300X in CPX would be
// 72 GPUs, more than a node's 64.
func TestNewPartitionedNode(t *testing.T) {
	for _, tc := range []struct {
		model, mode string
		devices     int
		gpus        int
		vendor      gpu.Vendor
		err         string
	}{
		{"MI300X", "", 8, 8, gpu.AMD, ""},
		{"MI300X", "DPX", 8, 16, gpu.AMD, ""},
		{"MI300X", "QPX/NPS4", 8, 32, gpu.AMD, ""},
		{"MI300X", "CPX/NPS1", 8, 64, gpu.AMD, ""},
		{"MI250X", "", 4, 8, gpu.AMD, ""},
		{"Gaudi3", "", 8, 8, gpu.Intel, ""},
		{"H100-80GB", "", 8, 8, gpu.NVIDIA, ""},
		{"MI300X", "CPX", 9, 0, 0, "node n: 9 devices of 8 GPUs each (MI300X CPX/NPS1) are more than 64 GPUs"},
		{"H100-80GB", "CPX", 8, 0, 0, "node n: model H100-80GB has no compute or memory partitioning"},
	} {
		p, err := gpu.ParsePartition(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		n, err := NewPartitionedNode("n", tc.model, p, 1000, 1024, tc.devices)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s x %d %s: err %v, want %q", tc.model, tc.devices, tc.mode, err, tc.err)
			}
			continue
		}
		if err != nil || n.GPUs() != tc.gpus || n.Vendor != tc.vendor || n.Partition != p || n.GPUFreeTotal() != int64(tc.gpus)*MilliGPU {
			t.Errorf("%s x %d %s: %d GPUs of %s, partition %q, %v; want %d of %s", tc.model, tc.devices, tc.mode, n.GPUs(), n.Vendor, n.Partition, err, tc.gpus, tc.vendor)
		}
	}
}

// TestVendorResources: a pod fits a node only where the node's vendor's
// device plugin serves its resource (kube-scheduler's NodeResourcesFit
// finds no amd.com/gpu on an NVIDIA node): amd.com/gpu an AMD node only,
// habana.ai/gaudi a Gaudi node only, nvidia.com/gpu an NVIDIA node only; a
// trace's pod (ResourceAny) any node by its share. 8 MI300X in CPX are 64
// GPUs, so a pod of 64 amd.com/gpu fits and one of 9 Gaudi does not fit 8
// Gaudi3.
func TestVendorResources(t *testing.T) {
	cpx, _ := gpu.ParsePartition("CPX/NPS1")
	nodes := map[string]Node{}
	for name, mk := range map[string]func() (Node, error){
		"h100":   func() (Node, error) { return NewNode("h100", "H100-80GB", 112000, 2<<20, 8) },
		"mi300x": func() (Node, error) { return NewPartitionedNode("mi300x", "MI300X", cpx, 96000, 1850<<10, 8) },
		"gaudi3": func() (Node, error) { return NewNode("gaudi3", "Gaudi3", 160000, 1792<<10, 8) },
	} {
		n, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		nodes[name] = n
	}
	pod := func(k ResourceKind, gpus int, milli int64) Pod {
		return Pod{Name: "p", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: milli, Resource: k}
	}
	for _, tc := range []struct {
		pod  Pod
		fits map[string]bool
	}{
		{pod(ResourceGPU, 1, 1000), map[string]bool{"h100": true, "mi300x": false, "gaudi3": false}},
		{pod(ResourceAMD, 1, 1000), map[string]bool{"h100": false, "mi300x": true, "gaudi3": false}},
		{pod(ResourceAMD, 64, 1000), map[string]bool{"h100": false, "mi300x": true, "gaudi3": false}},
		{pod(ResourceGaudi, 8, 1000), map[string]bool{"h100": false, "mi300x": false, "gaudi3": true}},
		{pod(ResourceGaudi, 9, 1000), map[string]bool{"h100": false, "mi300x": false, "gaudi3": false}},
		{pod(ResourceAny, 1, 500), map[string]bool{"h100": true, "mi300x": true, "gaudi3": true}},
		// gpuplane.io/gpu-milli: gpuplane's agent advertises it on NVIDIA
		// nodes only.
		{pod(ResourceMilli, 1, 500), map[string]bool{"h100": true, "mi300x": false, "gaudi3": false}},
	} {
		for name, want := range tc.fits {
			n := nodes[name]
			if got, why := Fits(&n, &tc.pod); got != want {
				t.Errorf("%d x %s on %s: fits %v (%s), want %v", tc.pod.NumGPU, tc.pod.Resource.Name(), name, got, why, want)
			}
		}
	}
	n := nodes["h100"]
	p := pod(ResourceAMD, 1, 1000)
	if _, why := Fits(&n, &p); why != "Insufficient amd.com/gpu" {
		t.Errorf("amd.com/gpu on an NVIDIA node: %q, want Insufficient amd.com/gpu", why)
	}
	if bad := pod(ResourceAMD, 1, 500); bad.Validate() == nil {
		t.Errorf("500 milli of amd.com/gpu: no error")
	}
	// A claim of Intel's Gaudi DRA driver's devices (gaudi.intel.com):
	// valid, and it fits a Gaudi node whose ResourceSlices publish them
	// (ServedByDRA), not one its device plugin serves, nor another
	// vendor's DRA node.
	claim := Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGaudi, Claim: true}
	if err := claim.Validate(); err != nil {
		t.Errorf("a claim of 1 Gaudi: %v", err)
	}
	for name, want := range map[string]bool{"h100": false, "gaudi3": true} {
		n := nodes[name]
		n.Serving = ServedByDRA
		dp := nodes["gaudi3"]
		if got, _ := Fits(&n, &claim); got != want {
			t.Errorf("a claim of 1 Gaudi on DRA node %s: fits %v, want %v", name, got, want)
		}
		if got, _ := Fits(&dp, &claim); got {
			t.Errorf("a claim of 1 Gaudi on a device-plugin Gaudi node: fits")
		}
	}
	for name, want := range map[string]ResourceKind{"amd.com/gpu": ResourceAMD, "habana.ai/gaudi": ResourceGaudi, "nvidia.com/gpu": ResourceGPU} {
		if k, ok := ResourceOf(name); !ok || k != want || k.Name() != name {
			t.Errorf("ResourceOf(%q) = %v, %v", name, k, ok)
		}
	}
}
