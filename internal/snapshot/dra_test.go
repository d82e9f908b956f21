// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// draSnapshot is a DRA cluster as `kubectl get
// nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o json`
// lists it, written by hand in the form gpuplane's driver publishes
// (internal/node/dra Build; the chart's DeviceClasses):
//
//   - node a100: 5 GPUs in one slice: gpu-0 in MIG mode (two of its MIG
//     placements: 1g.10gb at start 6, 3g.40gb at start 4), gpu-1 tainted
//     and free, gpu-2 shareable, gpu-3 plain, gpu-4 tainted and held;
//   - running: train holds gpu-3 and gpu-4, infer 300 milliGPU of gpu-2,
//     mig the 1g.10gb at start 6 of gpu-0, memshare 40Gi of gpu-2's 80Gi
//     as NVIDIA's driver's memory shares ask it (so milliGPU's default,
//     1);
//   - running plain (nvidia.com/gpu: 1, the extended resource) was
//     allocated gpu-0 by its extended-resource claim;
//   - pending: ext (nvidia.com/gpu: 1, the extended resource), share (a
//     template's claim not made yet: 250 milliGPU), mig3 (mig.nvidia.com,
//     profile 3g.40gb), two (2 GPUs of productName A100, with a clause the
//     reader does not parse), fpga (another driver's class).
var draSnapshot = list(
	`{"kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],"extendedResourceName":"nvidia.com/gpu"}}`,
	`{"kind":"DeviceClass","metadata":{"name":"mig.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}}`,
	`{"kind":"Node","metadata":{"name":"a100"},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110"}}}`,
	`{"kind":"ResourceSlice","metadata":{"name":"a100-gpu.nvidia.com-0"},"spec":{"driver":"gpu.nvidia.com","nodeName":"a100","pool":{"name":"a100","resourceSliceCount":1},"devices":[`+
		`{"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-0"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"capacity":{"memory":{"value":"80Gi"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{"compute-slices":{"value":"7"}}}]},`+
		`{"name":"gpu-0-mig-1g10gb-19-6","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-0"},"profile":{"string":"1g.10gb"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{"compute-slices":{"value":"1"}}}]},`+
		`{"name":"gpu-0-mig-3g40gb-9-4","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-0"},"profile":{"string":"3g.40gb"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{"compute-slices":{"value":"3"}}}]},`+
		`{"name":"gpu-1","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-1"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"taints":[{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoSchedule"}]},`+
		`{"name":"gpu-2","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-2"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"allowMultipleAllocations":true,"capacity":{"milliGPU":{"value":"1k"},"memory":{"value":"80Gi"}}},`+
		`{"name":"gpu-3","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-3"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}}},`+
		`{"name":"gpu-4","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-4"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"taints":[{"key":"gpu.nvidia.com/gpu-lost","effect":"NoExecute"}]}]}}`,
	podJSON("train", "a100", "Running", `[{"name":"gpus","resourceClaimName":"train-gpus"}]`, ``),
	draClaimJSON("train-gpus", `[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}]`, `[{"request":"gpus","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-3"},{"request":"gpus","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-4"}]`),
	podJSON("infer", "a100", "Running", `[{"name":"gpu","resourceClaimName":"infer-share"}]`, ``),
	draClaimJSON("infer-share", `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"milliGPU":"300"}}}}]`, `[{"request":"gpu","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-2","consumedCapacity":{"milliGPU":"300"},"shareID":"x"}]`),
	podJSON("mig", "a100", "Running", `[{"name":"mig","resourceClaimTemplateName":"mig-tpl"}]`, `"resourceClaimStatuses":[{"name":"mig","resourceClaimName":"mig-mig-x7"}]`),
	draClaimJSON("mig-mig-x7", `[{"name":"mig","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]}}]`, `[{"request":"mig","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-0-mig-1g10gb-19-6"}]`),
	`{"kind":"Pod","metadata":{"name":"ext","namespace":"ml"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}}`,
	`{"kind":"Pod","metadata":{"name":"plain","namespace":"ml"},"spec":{"nodeName":"a100","containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Running","extendedResourceClaimStatus":{"resourceClaimName":"plain-ext-abc","requestMappings":[{"containerName":"c","resourceName":"nvidia.com/gpu","requestName":"container-0-request-0"}]}}}`,
	draClaimJSON("plain-ext-abc", `[{"name":"container-0-request-0","exactly":{"deviceClassName":"gpu.nvidia.com","count":1}}]`, `[{"request":"container-0-request-0","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-0"}]`),
	podJSON("share", "", "Pending", `[{"name":"s","resourceClaimTemplateName":"share-tpl"}]`, ``),
	`{"kind":"ResourceClaimTemplate","metadata":{"name":"share-tpl","namespace":"ml"},"spec":{"spec":{"devices":{"requests":[{"name":"s","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"milliGPU":"250","memory":"10Gi"}}}}]}}}}`,
	podJSON("mig3", "", "Pending", `[{"name":"m","resourceClaimName":"mig3"}]`, ``),
	draClaimJSON("mig3", `[{"name":"m","deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes[\"gpu.nvidia.com\"].profile == \"3g.40gb\""}}]}]`, ``),
	podJSON("two", "", "Pending", `[{"name":"g","resourceClaimName":"two"}]`, ``),
	draClaimJSON("two", `[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com","count":2,"selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}}]`, ``),
	podJSON("fpga", "", "Pending", `[{"name":"f","resourceClaimName":"fpga"}]`, ``),
	draClaimJSON("fpga", `[{"name":"f","exactly":{"deviceClassName":"fpga.example.com"}}]`, ``),
	podJSON("memshare", "a100", "Running", `[{"name":"gpu","resourceClaimName":"mem-share"}]`, ``),
	draClaimJSON("mem-share", `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"memory":"40Gi"}}}}]`, `[{"request":"gpu","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-2","consumedCapacity":{"milliGPU":"1","memory":"40Gi"},"shareID":"y"}]`),
	podJSON("memask", "", "Pending", `[{"name":"gpu","resourceClaimName":"mem-ask"}]`, ``),
	draClaimJSON("mem-ask", `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"memory":"20Gi"}}}}]`, ``),
)

// podJSON is a pod of namespace ml with one container of 1 CPU and the
// given claims (spec.resourceClaims) and status fields.
func podJSON(name, node, phase, claims, status string) string {
	if status != "" {
		status = "," + status
	}
	return `{"kind":"Pod","metadata":{"name":"` + name + `","namespace":"ml"},"spec":{"nodeName":"` + node + `","containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":` + claims + `},"status":{"phase":"` + phase + `"` + status + `}}`
}

// draClaimJSON is a ResourceClaim of namespace ml with requests and, when
// results is not empty, its allocation.
func draClaimJSON(name, requests, results string) string {
	status := `{}`
	if results != "" {
		status = `{"allocation":{"devices":{"results":` + results + `}}}`
	}
	return `{"kind":"ResourceClaim","metadata":{"name":"` + name + `","namespace":"ml"},"spec":{"devices":{"requests":` + requests + `}},"status":` + status + `}`
}

// TestSnapshotDRA reads draSnapshot; every value is worked out by hand
// from the List above.
func TestSnapshotDRA(t *testing.T) {
	s, err := Read("dra.json", strings.NewReader(draSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 1 {
		t.Fatalf("%d nodes, want 1", len(s.Nodes))
	}
	// gpu-1 (tainted, free) is left out: gpu-0, 2, 3, 4 are GPUs 0..3.
	n := s.Nodes[0]
	if n.GPUs != 4 || n.Model != "A100-80GB" || !n.DRA || !n.DynamicMIG || !n.DRAShares || n.NoDynamicMIG || n.CPUMilli != 64000 || n.MemoryMiB != 512*1024 {
		t.Errorf("node %+v; want 4 GPUs of A100-80GB, DRA, MIG on demand, shares, 64000 m, 524288 MiB", n)
	}
	// DRA only, and class gpu.nvidia.com maps nvidia.com/gpu
	// (extendedResourceName): ext may take its GPUs.
	if n.Serving != cluster.ServedByDRAExtended {
		t.Errorf("node serving %d, want ServedByDRAExtended", n.Serving)
	}
	const claimed = cluster.ResourceClaimed
	type want struct {
		numGPU   int8
		milli    int16
		resource cluster.ResourceKind
		gpus     string
		spec     string
		profile  string
		start    int
	}
	wants := map[string]want{
		// A pod that asks by its claims is marked ResourceClaimed; ext and
		// plain ask for the extended resource nvidia.com/gpu.
		"ml/train": {2, 1000, cluster.ResourceGPU | claimed, "[2 3]", "", "", -1},
		"ml/infer": {1, 300, cluster.ResourceAny | claimed, "[1]", "", "", -1},
		// 1g: 1/7 of a GPU, rounded down.
		"ml/mig": {1, 142, cluster.ResourceMIG | claimed, "[0]", "", "1g.10gb", 6},
		"ml/ext": {1, 1000, cluster.ResourceGPU, "[]", "", "", -1},
		// The extended resource's claim: its allocation, gpu-0.
		"ml/plain": {1, 1000, cluster.ResourceGPU, "[0]", "", "", -1},
		"ml/share": {1, 250, cluster.ResourceAny | claimed, "[]", "", "", -1},
		// 3g: 3000/7 = 428.
		"ml/mig3": {1, 428, cluster.ResourceMIG | claimed, "[]", "", "", -1},
		"ml/two":  {2, 1000, cluster.ResourceGPU | claimed, "[]", "A100-80GB", "", -1},
		"ml/fpga": {0, 0, cluster.ResourceAny, "[]", "", "", -1},
		// 40Gi of 80Gi: 500 thousandths, more than its 1 milliGPU.
		"ml/memshare": {1, 500, cluster.ResourceAny | claimed, "[1]", "", "", -1},
		// Pending, memory alone: its share depends on the GPU it gets.
		"ml/memask": {1, 1000, cluster.ResourceGPU | claimed, "[]", "", "", -1},
	}
	for _, p := range s.Pods {
		w, ok := wants[p.Name]
		if !ok {
			t.Errorf("unexpected pod %s", p.Name)
			continue
		}
		got := want{p.NumGPU, p.GPUMilli, p.Resource, fmt.Sprint(p.GPUs), p.GPUSpec, p.MIGProfile, p.MIGStart}
		if got != w {
			t.Errorf("pod %s: %+v, want %+v", p.Name, got, w)
		}
	}
	warnings := strings.Join(s.Warnings, "\n")
	for _, w := range []string{
		`node "a100": 1 of its 5 GPUs are tainted (unhealthy, NoSchedule or NoExecute) and held by no pod: left out`,
		`dra.json:1: items[18]: spec.devices.requests[0].selectors[0].cel: "device.capacity['gpu.nvidia.com'].memory"… (73 bytes) is not simulated`,
		`dra.json:1: items[20]: spec.devices.requests[0]: device class "fpga.example.com" is not one of driver gpu.nvidia.com's GPUs or MIG devices, nor gpu.amd.com's or gaudi.intel.com's devices: not simulated`,
		`dra.json:1: items[24]: spec.devices.requests[0]: capacity.requests.memory without milliGPU (a memory share): simulated as a whole GPU`,
	} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}
}

// TestSnapshotDRAYAML: the same List as YAML (`-o yaml`; JSON is YAML,
// read as YAML after a comment line) reads the same nodes and pods: its
// count and allowMultipleAllocations are a YAML number and boolean.
func TestSnapshotDRAYAML(t *testing.T) {
	j, err := Read("dra.json", strings.NewReader(draSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	y, err := Read("dra.yaml", strings.NewReader("# kubectl get ... -o yaml\n"+draSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	for i := range j.Pods {
		j.Pods[i].Line = 0
		y.Pods[i].Line = 0
	}
	j.Nodes[0].Line, y.Nodes[0].Line = 0, 0
	if fmt.Sprintf("%+v %+v", j.Nodes, j.Pods) != fmt.Sprintf("%+v %+v", y.Nodes, y.Pods) {
		t.Errorf("YAML:\n%+v %+v\nJSON:\n%+v %+v", y.Nodes, y.Pods, j.Nodes, j.Pods)
	}
}

// FuzzReadSnapshotDRA checks that no List of DRA objects makes
// Read panic, that its errors name the file, and that what it
// accepts is in bounds: a DRA node's GPUs 0..64 of a model, a pod's
// request valid, its GPU indices 0..63, a MIG start -1..7.
func FuzzReadSnapshotDRA(f *testing.F) {
	f.Add([]byte(draSnapshot))
	f.Add([]byte(strings.ReplaceAll(draSnapshot, `"count":2`, `"count":65`)))
	f.Add([]byte(strings.ReplaceAll(draSnapshot, `"300"`, `"3e3"`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read("f.json", strings.NewReader(string(data)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		gpus := map[string]int{}
		for _, n := range s.Nodes {
			if n.GPUs < 0 || n.GPUs > 64 || (n.GPUs > 0 && n.Model == "") || (n.DRA && n.DynamicMIG == n.NoDynamicMIG) {
				t.Fatalf("node out of bounds: %+v", n)
			}
			gpus[n.Name] = n.GPUs
		}
		for _, p := range s.Pods {
			kind, claim := p.Resource.SplitClaim()
			c := cluster.Pod{NumGPU: int(p.NumGPU), GPUMilli: int64(p.GPUMilli), Resource: kind, Claim: claim}
			if err := c.Validate(); err != nil || p.CPUMilli < 0 || p.MemoryMiB < 0 || p.MIGStart < -1 || p.MIGStart > 7 {
				t.Fatalf("pod out of bounds (%v): %+v", err, p)
			}
			for _, g := range p.GPUs {
				if g < 0 || g >= cluster.MaxGPUsPerNode {
					t.Fatalf("pod %s holds GPU %d", p.Name, g)
				}
			}
		}
	})
}

// TestSnapshotDRAServing: how each node serves its GPUs (NodeSpec.Serving),
// worked out by hand from draSnapshot's node a100 (no nvidia.com/gpu, a
// slice of GPUs) and a node t4 added with nvidia.com/gpu 2:
//   - as listed, class gpu.nvidia.com maps nvidia.com/gpu: a100
//     ServedByDRAExtended, t4 ServedByDevicePlugin;
//   - without extendedResourceName: a100 ServedByDRA;
//   - with it on mig.nvidia.com only (MIG devices, not whole GPUs): a100
//     ServedByDRA still;
//   - t4's name on the slice too (a device plugin and a DRA driver both):
//     t4 ServedByBoth, with its device plugin's 2 GPUs.
func TestSnapshotDRAServing(t *testing.T) {
	const ext = `,"extendedResourceName":"nvidia.com/gpu"`
	t4 := `{"kind":"Node","metadata":{"name":"t4","labels":{"nvidia.com/gpu.product":"Tesla-T4"}},"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/gpu":"2"}}},`
	withT4 := strings.Replace(draSnapshot, `{"kind":"Node","metadata":{"name":"a100"}`, t4+`{"kind":"Node","metadata":{"name":"a100"}`, 1)
	noExt := strings.Replace(withT4, ext, "", 1)
	migExt := strings.Replace(noExt, `'mig'"}}]}`, `'mig'"}}]`+ext+`}`, 1)
	both := strings.Replace(withT4, `"nodeName":"a100"`, `"nodeName":"t4"`, 1)
	if noExt == withT4 || migExt == noExt || both == withT4 {
		t.Fatal("a replacement left the List as it was")
	}
	for _, tc := range []struct {
		name, list string
		a100, t4   cluster.GPUServing
	}{
		{"listed", withT4, cluster.ServedByDRAExtended, cluster.ServedByDevicePlugin},
		{"no extendedResourceName", noExt, cluster.ServedByDRA, cluster.ServedByDevicePlugin},
		{"mig class maps it", migExt, cluster.ServedByDRA, cluster.ServedByDevicePlugin},
		{"t4 publishes the slice", both, cluster.ServedByDevicePlugin, cluster.ServedByBoth},
	} {
		s, err := Read("dra.json", strings.NewReader(tc.list))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := map[string]cluster.GPUServing{}
		gpus := map[string]int{}
		for _, n := range s.Nodes {
			got[n.Name], gpus[n.Name] = n.Serving, n.GPUs
		}
		if got["a100"] != tc.a100 || got["t4"] != tc.t4 || gpus["t4"] != 2 {
			t.Errorf("%s: a100 %d, t4 %d with %d GPUs; want %d, %d with 2", tc.name, got["a100"], got["t4"], gpus["t4"], tc.a100, tc.t4)
		}
	}
}

// TestSnapshotDRAAdminAccess: a claim with admin access (KEP-5018) holds
// nothing: upstream's scheduler counts its results as no allocation
// (k8s.io/kubernetes v1.37.2 pkg/scheduler/framework/plugins/
// dynamicresources/allocateddevices.go: "Is not considered as
// allocated"). Node a100 publishes gpu-1 (tainted) and gpu-3; train holds
// gpu-3; mon, running, has admin access to gpu-3 and gpu-1, and monp,
// pending, asks admin access. By hand: gpu-1 is held by no workload, so
// it is left out as tainted and free: the node has 1 GPU, gpu-3 (GPU 0);
// train holds GPU 0 whole; mon and monp hold and ask no GPU.
func TestSnapshotDRAAdminAccess(t *testing.T) {
	in := list(
		`{"kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}`,
		`{"kind":"Node","metadata":{"name":"a100"},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110"}}}`,
		`{"kind":"ResourceSlice","metadata":{"name":"a100-gpu.nvidia.com-0"},"spec":{"driver":"gpu.nvidia.com","nodeName":"a100","pool":{"name":"a100","resourceSliceCount":1},"devices":[`+
			`{"name":"gpu-1","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-1"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"taints":[{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoSchedule"}]},`+
			`{"name":"gpu-3","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-3"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}}}]}}`,
		podJSON("train", "a100", "Running", `[{"name":"gpu","resourceClaimName":"train-gpu"}]`, ``),
		draClaimJSON("train-gpu", `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]`, `[{"request":"gpu","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-3"}]`),
		podJSON("mon", "a100", "Running", `[{"name":"gpus","resourceClaimName":"mon-gpus"}]`, ``),
		draClaimJSON("mon-gpus", `[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"All","adminAccess":true}}]`,
			`[{"request":"gpus","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-3","adminAccess":true},{"request":"gpus","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-1","adminAccess":true}]`),
		podJSON("monp", "", "Pending", `[{"name":"gpus","resourceClaimName":"monp-gpus"}]`, ``),
		draClaimJSON("monp-gpus", `[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","adminAccess":true}}]`, ``),
	)
	s, err := Read("admin.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 1 || s.Nodes[0].GPUs != 1 {
		t.Fatalf("nodes %+v, want a100 with 1 GPU", s.Nodes)
	}
	type want struct {
		numGPU   int8
		milli    int16
		resource cluster.ResourceKind
		gpus     string
	}
	wants := map[string]want{
		"ml/train": {1, 1000, cluster.ResourceGPU | cluster.ResourceClaimed, "[0]"},
		"ml/mon":   {0, 0, cluster.ResourceAny, "[]"},
		"ml/monp":  {0, 0, cluster.ResourceAny, "[]"},
	}
	for _, p := range s.Pods {
		got := want{p.NumGPU, p.GPUMilli, p.Resource, fmt.Sprint(p.GPUs)}
		if w, ok := wants[p.Name]; !ok || got != w {
			t.Errorf("pod %s: %+v, want %+v", p.Name, got, w)
		}
	}
	if w := strings.Join(s.Warnings, "\n"); strings.Contains(w, "allocationMode All") {
		t.Errorf("a warning of the admin request, which asks nothing:\n%s", w)
	}
}
