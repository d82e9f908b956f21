// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// dpNode is a node with the given labels and allocatable GPU resources.
func dpNode(name, labels, alloc string) string {
	return `{"kind":"Node","metadata":{"name":"` + name + `","labels":{` + labels + `}},"status":{"allocatable":{"cpu":"64","memory":"256Gi"` + alloc + `}}}`
}

// dpPod is a pod of 1 CPU and the given requests, bound to node ("" for
// pending).
func dpPod(name, node, requests string) string {
	phase := "Running"
	if node == "" {
		phase = "Pending"
	}
	return `{"kind":"Pod","metadata":{"name":"` + name + `","namespace":"ns"},"spec":{"nodeName":"` + node + `","containers":[{"resources":{"requests":{"cpu":"1",` + requests + `}}}]},"status":{"phase":"` + phase + `"}}`
}

// deviceplugin is a List of the device plugin's setups (github.com/NVIDIA/k8s-device-plugin;
// labels as gpu-feature-discovery writes them, internal/lm/resource.go and
// internal/lm/mig-strategy.go; allocatable as internal/rm/device_map.go
// serves it: each device replicas times), with running pods on each.
var deviceplugin = list(
	// 4 L4, time-slicing 4 ways, default naming: 16 nvidia.com/gpu.
	dpNode("ts", `"nvidia.com/gpu.product":"NVIDIA-L4-SHARED","nvidia.com/gpu.count":"4","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"time-slicing"`, `,"nvidia.com/gpu":"16"`),
	// 2 A100-40GB, MPS 4 ways: 8.
	dpNode("mps", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB-SHARED","nvidia.com/gpu.count":"2","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"mps"`, `,"nvidia.com/gpu":"8"`),
	// An H100, single strategy, 7 x 1g.10gb: 7 nvidia.com/gpu, count 7.
	dpNode("single", `"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb","nvidia.com/gpu.count":"7","nvidia.com/gpu.replicas":"1","nvidia.com/mig.strategy":"single"`, `,"nvidia.com/gpu":"7"`),
	// The same, its instances time-sliced 2 ways: 14.
	dpNode("single-ts", `"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED","nvidia.com/gpu.count":"7","nvidia.com/gpu.replicas":"2","nvidia.com/gpu.sharing-strategy":"time-slicing","nvidia.com/mig.strategy":"single"`, `,"nvidia.com/gpu":"14"`),
	// The same renamed: 14 nvidia.com/gpu.shared, no "-SHARED".
	dpNode("single-renamed", `"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb","nvidia.com/gpu.count":"7","nvidia.com/gpu.replicas":"2","nvidia.com/gpu.sharing-strategy":"time-slicing","nvidia.com/mig.strategy":"single"`, `,"nvidia.com/gpu.shared":"14"`),
	// Single, GPUs in more than one profile: -MIG-INVALID, count and
	// replicas 0 (newInvalidMigStrategyLabeler); the plugin serves no
	// device (device_map.go assertAllMigDevicesAreValid fails).
	dpNode("invalid", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB-MIG-INVALID","nvidia.com/gpu.count":"0","nvidia.com/gpu.replicas":"0","nvidia.com/gpu.sharing-strategy":"","nvidia.com/mig.strategy":"single"`, `,"nvidia.com/gpu":"0"`),
	// Mixed: 6 whole A100s time-sliced 2 ways (12 nvidia.com/gpu,
	// "-SHARED": newGPULabelers lets the whole GPUs' labels win) and 2
	// MIG-enabled as 2 x 3g.40gb; count 8.
	dpNode("mixed-ts", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB-SHARED","nvidia.com/gpu.count":"8","nvidia.com/gpu.replicas":"2","nvidia.com/gpu.sharing-strategy":"time-slicing","nvidia.com/mig.strategy":"mixed"`, `,"nvidia.com/gpu":"12","nvidia.com/mig-3g.40gb":"4"`),
	// Mixed, 2 A100s as 2 x 3g.40gb each, the instances time-sliced 2
	// ways: 8 nvidia.com/mig-3g.40gb, labelled
	// nvidia.com/mig-3g.40gb.replicas 2 (resource.go key).
	dpNode("mixed-mig-ts", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"2","nvidia.com/gpu.replicas":"0","nvidia.com/mig.strategy":"mixed","nvidia.com/mig-3g.40gb.replicas":"2"`, `,"nvidia.com/mig-3g.40gb":"8"`),
	dpNode("t4", `"nvidia.com/gpu.product":"Tesla-T4","nvidia.com/gpu.replicas":"1"`, `,"nvidia.com/gpu":"2"`),
	dpPod("ts1", "ts", `"nvidia.com/gpu":"1"`),
	dpPod("ts3", "ts", `"nvidia.com/gpu":"3"`),
	dpPod("ts5", "ts", `"nvidia.com/gpu":"5"`),
	dpPod("mps2", "mps", `"nvidia.com/gpu":"2"`),
	dpPod("s1", "single", `"nvidia.com/gpu":"1"`),
	dpPod("s2", "single", `"nvidia.com/gpu":"2"`),
	dpPod("sts1", "single-ts", `"nvidia.com/gpu":"1"`),
	dpPod("sr1", "single-renamed", `"nvidia.com/gpu.shared":"1"`),
	dpPod("mx1", "mixed-ts", `"nvidia.com/gpu":"1"`),
	dpPod("t41", "t4", `"nvidia.com/gpu":"1"`),
	dpPod("pending", "", `"nvidia.com/gpu":"1"`),
)

// TestServedRequests: each node's GPUs and each running pod's GPU request
// as the kubelet served it, worked out by hand from the List above, and
// the warnings for what is not modelled.
func TestServedRequests(t *testing.T) {
	s, err := Read("dp.json", strings.NewReader(deviceplugin))
	if err != nil {
		t.Fatal(err)
	}
	// GPUs: ts 16 / 4; mps 8 / 4; single ⌈7 / 7⌉ (gpu.MIGFullCount of
	// 1g.10gb on an H100); single-ts 14 / 2 = 7 instances, 1 GPU;
	// single-renamed 14 / 2 = 7, read as shared whole GPUs (warned);
	// invalid 0; mixed-ts count 8 (12 / 2 = 6 whole, 2 MIG-enabled);
	// mixed-mig-ts count 2.
	gpus := map[string]int{"ts": 4, "mps": 2, "single": 1, "single-ts": 1, "single-renamed": 7, "invalid": 0, "mixed-ts": 8, "mixed-mig-ts": 2, "t4": 2}
	// A device's milli-GPU where nvidia.com/gpu devices are less than a
	// GPU (NodeSpec.ReplicaMilli, cluster.Node.Served): ts and mps a
	// replica, 1000 / 4; single and single-ts an instance (each replica
	// of single-ts read as one, warned), 142; the others 0 (single-
	// renamed serves no nvidia.com/gpu, mixed-ts's replicas are not
	// modelled).
	replica := map[string]int64{"ts": 250, "mps": 250, "single": 142, "single-ts": 142}
	for _, n := range s.Nodes {
		if n.GPUs != gpus[n.Name] {
			t.Errorf("node %s: %d GPUs, want %d", n.Name, n.GPUs, gpus[n.Name])
		}
		if n.ReplicaMilli != replica[n.Name] {
			t.Errorf("node %s: ReplicaMilli %d, want %d", n.Name, n.ReplicaMilli, replica[n.Name])
		}
	}
	type req struct {
		num, milli int
		res        cluster.ResourceKind
	}
	// ts: a replica is 1000 / 4 = 250 milli-GPU, k of them k x 250 of one
	// GPU, at most 1000 (5 x 250 = 1250 -> 1000). mps: 2 x 250. single,
	// single-ts: one 1g.10gb instance, 1 of 7 slices, 142 milli-GPU
	// (gpu.MIGShareMilli), k of them k x 142 (s2: 284), a share of kind
	// ResourceAny: the node serves no nvidia.com/mig-<profile>
	// (cluster.Node.MIGAsGPU) and the pod runs there. single-renamed: a
	// replica of a (whole, as read) GPU, 1000 / 2. mixed-ts and t4: whole
	// GPUs; pending: as asked.
	want := map[string]req{
		"ns/ts1": {1, 250, cluster.ResourceShared}, "ns/ts3": {1, 750, cluster.ResourceShared}, "ns/ts5": {1, 1000, cluster.ResourceShared},
		"ns/mps2": {1, 500, cluster.ResourceShared},
		"ns/s1":   {1, 142, cluster.ResourceAny}, "ns/s2": {1, 284, cluster.ResourceAny}, "ns/sts1": {1, 142, cluster.ResourceAny},
		"ns/sr1": {1, 500, cluster.ResourceShared},
		"ns/mx1": {1, 1000, cluster.ResourceGPU}, "ns/t41": {1, 1000, cluster.ResourceGPU}, "ns/pending": {1, 1000, cluster.ResourceGPU},
	}
	for _, p := range s.Pods {
		got := req{int(p.NumGPU), int(p.GPUMilli), p.Resource}
		if got != want[p.Name] {
			t.Errorf("pod %s: %+v, want %+v", p.Name, got, want[p.Name])
		}
	}
	all := strings.Join(s.Warnings, "\n")
	for _, w := range []string{
		`pod "ns/ts3" asks for 3 replicas of node "ts" (time-slicing may give them from different GPUs): simulated as 750 milli-GPU of one GPU`,
		`pod "ns/ts5" asks for 5 replicas of node "ts"`,
		`pod "ns/mps2" asks for 2 replicas of node "mps" (under MPS the device plugin fails a request for more than one by default`,
		`pod "ns/s2" holds 2 MIG instances 1g.10gb of node "single" (single strategy; they may be of different GPUs): simulated as 284 milli-GPU of one GPU`,
		`node "single-ts" shares its MIG instances 2 ways (time-slicing): not modelled, each read as one instance`,
		`node "single-renamed": product "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb": its nvidia.com/gpu.shared devices are replicas of MIG instances 1g.10gb (single strategy, renamed): not modelled, read as 7 whole GPUs, each 2 replicas`,
		`node "invalid": product "NVIDIA-A100-SXM4-80GB-MIG-INVALID": its GPUs are MIG-enabled in no layout the single MIG strategy serves`,
		`node "mixed-ts" serves its whole GPUs as 2 time-slicing replicas each besides MIG devices: not modelled`,
		`node "mixed-mig-ts" shares its nvidia.com/mig-3g.40gb instances 2 ways (nvidia.com/mig-3g.40gb.replicas): not modelled, its 8 devices read as as many instances`,
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no warning %q in\n%s", w, all)
		}
	}
	// The pending pod asks for what it asks; the simulator serves it on
	// each node (cluster.Node.Served), so no warning names it.
	for _, no := range []string{`"ns/ts1"`, `"ns/s1"`, `"ns/t41"`, `"ns/mx1"`, `node "ts" shares`, `node "t4"`, `pending`} {
		if strings.Contains(all, no) {
			t.Errorf("a warning names %s:\n%s", no, all)
		}
	}
}
