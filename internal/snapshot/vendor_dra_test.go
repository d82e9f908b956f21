// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestReadMixedVendorsDRA reads testdata/mixed-vendors-dra.json, hand-made
// as `kubectl get nodes,pods,resourceslices,resourceclaims,deviceclasses
// -A -o json` lists a cluster whose accelerators DRA drivers publish:
//   - mi300x-dra-0: AMD's driver (github.com/ROCm/k8s-gpu-dra-driver at
//     2622427226d5ac361c3588284f4815e0dae11eaa, cmd/gpu-kubeletplugin
//     deviceinfo.go AmdPartitionInfo.GetDevice, discovery.go, types.go):
//     8 MI300X in CPX/NPS1, each partition a device "gpu-<card>-<renderD>"
//     of type amdgpu-partition, productName AMD_Instinct_MI300X,
//     partitionProfile cpx_nps1, memory 24Gi: 8 x 8 = 64 devices;
//   - gaudi3-dra-0: Intel's Gaudi driver
//     (github.com/intel/intel-resource-drivers-for-kubernetes at
//     1da939faa33a90dd641d0327cdcdcbbfaa1acdb4,
//     cmd/kubelet-gaudi-plugin/node_state.go, pkg/gaudi/device/device.go
//     ModelNames 0x1060: Gaudi3): 8 devices of model Gaudi3;
//   - h100-dra-0: gpu.nvidia.com, 8 H100 80GB;
//   - fpga-0: a slice of driver fpga.example.com, which gpuplane does not
//     read: a warning naming the slice, and a node without accelerators.
//
// DeviceClasses gpu.amd.com and gaudi.intel.com as the vendors' charts
// install them (device.driver == ...). Allocated, by hand: amd-train 4
// partitions + amd-infer 1 = 5 on mi300x-dra-0, gaudi-train 2 on
// gaudi3-dra-0, h100-train 1 on h100-dra-0; pending amd-wait asks 2 of
// gpu.amd.com, gaudi-wait 1 of gaudi.intel.com.
func TestReadMixedVendorsDRA(t *testing.T) {
	f, err := os.Open("testdata/mixed-vendors-dra.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Read("mixed-vendors-dra.json", f)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int{}
	for _, p := range s.Pods {
		held[p.NodeName] += len(p.GPUs)
	}
	cpx := gpu.Partition{Compute: "CPX", Memory: "NPS1"}
	for i, w := range []struct {
		name, model string
		vendor      gpu.Vendor
		gpus        int
		part        gpu.Partition
		held        int
	}{
		{"mi300x-dra-0", "MI300X", gpu.AMD, 64, cpx, 5},
		{"gaudi3-dra-0", "Gaudi3", gpu.Intel, 8, gpu.Partition{}, 2},
		{"h100-dra-0", "H100-80GB", gpu.NVIDIA, 8, gpu.Partition{}, 1},
		{"fpga-0", "", gpu.NVIDIA, 0, gpu.Partition{}, 0},
	} {
		n := s.Nodes[i].NodeSpec
		if n.Name != w.name || n.Model != w.model || n.Vendor != w.vendor || n.GPUs != w.gpus || n.Partition != w.part || held[n.Name] != w.held {
			t.Errorf("node %s: %q of %s, %d devices, %q, %d allocated; want %s: %q of %s, %d, %q, %d",
				n.Name, n.Model, n.Vendor, n.GPUs, n.Partition, held[n.Name], w.name, w.model, w.vendor, w.gpus, w.part, w.held)
		}
	}
	claimed := cluster.ResourceClaimed
	for i, w := range []struct {
		name string
		kind cluster.ResourceKind
		n    int8
	}{
		{"amd-train", cluster.ResourceAMD | claimed, 4}, {"amd-infer", cluster.ResourceAMD | claimed, 1},
		{"gaudi-train", cluster.ResourceGaudi | claimed, 2}, {"h100-train", cluster.ResourceGPU | claimed, 1},
		{"amd-wait", cluster.ResourceAMD | claimed, 2}, {"gaudi-wait", cluster.ResourceGaudi | claimed, 1},
	} {
		p := s.Pods[i]
		if p.Name != "ml/"+w.name || p.Resource != w.kind || p.NumGPU != w.n || p.GPUMilli != cluster.MilliGPU {
			t.Errorf("pod %s: %d x %d (%d milli); want %s: %d x %d", p.Name, p.NumGPU, p.Resource, p.GPUMilli, w.name, w.n, w.kind)
		}
	}
	warn := strings.Join(s.Warnings, "\n")
	if !strings.Contains(warn, `ResourceSlice "fpga-0-fpga.example.com-z1z1z" of node "fpga-0": driver "fpga.example.com" is none gpuplane reads`) {
		t.Errorf("warnings lack the unknown driver's slice:\n%s", warn)
	}
	if strings.Count(warn, "\n") != 0 {
		t.Errorf("want 1 warning, got:\n%s", warn)
	}
}

// TestReadMixedVendorsDRAUnknown: in the fixture of
// TestReadMixedVendorsDRA, an AMD device of a type AMD's driver does not
// publish (neither amdgpu nor amdgpu-partition) is left out with a
// warning naming its slice: 63 devices; a Gaudi whose model is "Unknown"
// (what Intel's driver writes for a PCI device ID it lacks,
// pkg/gaudi/device/device.go SetModelName) stays, unpriced, with a
// warning naming its slice.
func TestReadMixedVendorsDRAUnknown(t *testing.T) {
	b, err := os.ReadFile("testdata/mixed-vendors-dra.json")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(string(b), `"name": "gpu-64-191",
      "attributes": {
       "type": {
        "string": "amdgpu-partition"`, `"name": "gpu-64-191",
      "attributes": {
       "type": {
        "string": "amdgpu-vf"`, 1)
	in = strings.Replace(in, `"name": "0000-89-00-0-0x1060",
      "attributes": {
       "model": {
        "string": "Gaudi3"`, `"name": "0000-89-00-0-0x1060",
      "attributes": {
       "model": {
        "string": "Unknown"`, 1)
	s, err := Read("d.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Nodes[0]; n.GPUs != 63 || n.Model != "MI300X" {
		t.Errorf("node %s: %d of %s, want 63 of MI300X", n.Name, n.GPUs, n.Model)
	}
	warn := strings.Join(s.Warnings, "\n")
	for _, w := range []string{
		`ResourceSlice "mi300x-dra-0-gpu.amd.com-x7k2p": device "gpu-64-191" of type "amdgpu-vf" is neither amdgpu nor amdgpu-partition: not simulated`,
		`ResourceSlice "gaudi3-dra-0-gaudi.intel.com-q9w4m": device "0000-89-00-0-0x1060"'s model "Unknown" is no model gpuplane knows: simulated unpriced`,
	} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings lack %q:\n%s", w, warn)
		}
	}
}

// TestVendorClaimSelectors: the pending claims of TestReadMixedVendorsDRA
// given selectors as AMD's and Intel's examples write them: the model
// each names (AMD's productName, Gaudi's model) becomes the pod's model
// constraint; a clause the simulator does not read (Gaudi's healthy) is
// warned about by name.
func TestVendorClaimSelectors(t *testing.T) {
	b, err := os.ReadFile("testdata/mixed-vendors-dra.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := func(e string) string {
		return `"deviceClassName": "%s",
        "selectors": [{"cel": {"expression": ` + strconv.Quote(e) + `}}],
        "allocationMode": "ExactCount",
        "count": %d`
	}
	in := string(b)
	for _, r := range []struct {
		class string
		count int
		expr  string
	}{
		{"gpu.amd.com", 2, `device.attributes['gpu.amd.com'].productName == 'AMD_Instinct_MI300X'`},
		{"gaudi.intel.com", 1, `device.attributes["gaudi.intel.com"].model == "Gaudi3" && device.attributes["gaudi.intel.com"].healthy == true`},
	} {
		old := fmt.Sprintf(`"deviceClassName": "%s",
        "allocationMode": "ExactCount",
        "count": %d`, r.class, r.count)
		if !strings.Contains(in, old) {
			t.Fatalf("fixture lacks %s", old)
		}
		in = strings.Replace(in, old, fmt.Sprintf(sel(r.expr), r.class, r.count), 1)
	}
	s, err := Read("d.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []struct{ name, spec string }{{"ml/amd-wait", "MI300X"}, {"ml/gaudi-wait", "Gaudi3"}} {
		if p := s.Pods[4+i]; p.Name != w.name || p.GPUSpec != w.spec {
			t.Errorf("pod %s: models %q, want %s: %q", p.Name, p.GPUSpec, w.name, w.spec)
		}
	}
	warn := strings.Join(s.Warnings, "\n")
	// The clause quoted to its first 40 bytes (trace.Quote).
	if w := `selectors[0].cel: "device.attributes[\"gaudi.intel.com\"].hea"… (52 bytes) is not simulated (the simulator reads gaudi.intel.com's attribute model compared with ==`; !strings.Contains(warn, w) || strings.Contains(warn, "productName") {
		t.Errorf("warnings lack %q:\n%s", w, warn)
	}
}

// TestAMDLayoutWarnings: on the fixture of TestReadMixedVendors (an
// MI300X x 8 node in CPX/NPS1, 64 amd.com/gpu), 63 GPUs are not a whole
// number of devices (8 partitions each), and without the partition label
// 64 GPUs are more than an MI300X server's 8 devices: both warned, the
// node read as given.
func TestAMDLayoutWarnings(t *testing.T) {
	b, err := os.ReadFile("testdata/mixed-vendors.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"amd.com/gpu": "64"`, `"amd.com/gpu": "63"`, `node "mi300x-0": 63 amd.com/gpu in CPX/NPS1 are not a whole number of MI300X devices (8 GPUs each)`},
		{`"amd.com/gpu.compute-memory-partition": "cpx_nps1",`, ``, `node "mi300x-0": 64 amd.com/gpu of MI300X and no amd.com/gpu.compute-memory-partition label: simulated as 64 whole devices`},
	} {
		in := string(b)
		if !strings.Contains(in, tc.old) {
			t.Fatalf("fixture lacks %s", tc.old)
		}
		s, err := Read("m.json", strings.NewReader(strings.ReplaceAll(in, tc.old, tc.new)))
		if err != nil {
			t.Fatal(err)
		}
		if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, tc.want) {
			t.Errorf("warnings lack %q:\n%s", tc.want, w)
		}
	}
}
