// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// draGPUs is a node's GPUs as discovery finds them: gpus of model
// (a catalog name, the productName kwok nodes' GPUs get, which
// gpu.ModelOfProduct reads back) with minor = index.
func draGPUs(gpus int, model string, memMiB int64) device.Node {
	n := device.Node{DriverVersion: "550.54.15", CUDADriverMajor: 12, CUDADriverMinor: 4}
	for i := range gpus {
		n.GPUs = append(n.GPUs, device.GPU{Index: i, Minor: i, UUID: fmt.Sprintf("GPU-%s-%d", model, i), ProductName: model, Model: model,
			MemoryMiB: memMiB, NUMANode: -1, ComputeMajor: 7, ComputeMinor: 0})
	}
	return n
}

// publishSlices creates node's ResourceSlices as gpuplane's DRA driver
// publishes them (dra.Build, split by Resources.Pool, named with the
// index first as the kubelet plugin's resourceslice controller does);
// taint, when not nil, is applied to the devices it names first.
func publishSlices(t testing.TB, c kubernetes.Interface, node string, n device.Node, o dra.Options, taint map[string]resourcev1.DeviceTaint) {
	t.Helper()
	r, err := dra.Build(n, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Devices {
		if tt, ok := taint[r.Devices[i].Name]; ok {
			r.Devices[i].Taints = append(r.Devices[i].Taints, tt)
		}
	}
	for _, s := range nodeSlices(node, r) {
		if _, err := c.ResourceV1().ResourceSlices().Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("ResourceSlice of %s: %v", node, err)
		}
	}
}

// nodeSlices returns node's ResourceSlices of r (dra.Build's content),
// split by Resources.Pool and named with the index first as the kubelet
// plugin's resourceslice controller does; pool generation 1.
func nodeSlices(node string, r dra.Resources) []*resourcev1.ResourceSlice {
	pool := r.Pool()
	out := make([]*resourcev1.ResourceSlice, len(pool.Slices))
	for i, s := range pool.Slices {
		out[i] = &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%04x-gpu.nvidia.com", node, i)},
			Spec: resourcev1.ResourceSliceSpec{
				Driver: apidra.DriverName, NodeName: ptr.To(node),
				Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters,
			},
		}
	}
	return out
}

// installClasses creates the chart's DeviceClasses.
func installClasses(t testing.TB, c kubernetes.Interface) {
	t.Helper()
	if err := kube.InstallDeviceClasses(t.Context(), c, filepath.Join("..", "..", kube.DeviceClassTemplate)); err != nil {
		t.Fatal(err)
	}
}

// createGPUTemplate creates a ResourceClaimTemplate of one request for
// count devices of class gpu.nvidia.com; milli > 0 asks a share:
// milliGPU milli and memory 1Mi (both, see docs/dra.md "shares").
func createGPUTemplate(t testing.TB, c kubernetes.Interface, name string, count, milli int64) {
	t.Helper()
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}
	if milli > 0 {
		req.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{
			apidra.CapacityMilliGPU: *resource.NewQuantity(milli, resource.DecimalSI), apidra.CapacityMemory: resource.MustParse("1Mi")}}
	}
	_, err := c.ResourceV1().ResourceClaimTemplates("default").Create(t.Context(), &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: req}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// createClaimPod creates a pod of spec s (CPU, memory, model; its GPU
// fields unused) whose GPUs come from a claim of template.
func createClaimPod(t testing.TB, c kubernetes.Interface, s podSpec, template string) {
	t.Helper()
	if _, err := c.CoreV1().Pods("default").Create(t.Context(), makeClaimPod(s, template), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// makeClaimPod returns a pod of spec s (CPU, memory, model, scheduler; its
// GPU fields unused) whose container's GPUs come from a claim "gpu" of
// template.
func makeClaimPod(s podSpec, template string) *v1.Pod {
	p := makePod(podSpec{name: s.name, cpu: s.cpu, mem: s.mem, model: s.model, scheduler: s.scheduler})
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}}
	p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	return p
}

// podDevices returns the devices of gpu.nvidia.com allocated to pod p
// (its template's claim, or the claim the scheduler made for its
// nvidia.com/gpu), comma-separated; "" while it has none.
func podDevices(t testing.TB, c kubernetes.Interface, p *v1.Pod) string {
	t.Helper()
	var name string
	switch {
	case p.Status.ExtendedResourceClaimStatus != nil:
		name = p.Status.ExtendedResourceClaimStatus.ResourceClaimName
	case len(p.Status.ResourceClaimStatuses) > 0 && p.Status.ResourceClaimStatuses[0].ResourceClaimName != nil:
		name = *p.Status.ResourceClaimStatuses[0].ResourceClaimName
	default:
		return ""
	}
	claim, err := c.ResourceV1().ResourceClaims(p.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || claim.Status.Allocation == nil {
		return ""
	}
	var out []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver == apidra.DriverName {
			out = append(out, r.Device)
		}
	}
	return strings.Join(out, ",")
}

// waitDRAPod waits until pod name is bound with its devices allocated, or
// unschedulable; it returns the node and devices ("" and the message when
// unschedulable).
func waitDRAPod(t testing.TB, c kubernetes.Interface, sp *schedulerProc, name string) (node, devices, refused string) {
	t.Helper()
	waitFor(t, sp, "pod "+name+" decided", func() (bool, error) {
		p, err := c.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			node, devices = p.Spec.NodeName, podDevices(t, c, p)
			return devices != "", nil
		}
		refused = unschedulable(p)
		return refused != "", nil
	})
	return node, devices, refused
}

// TestDRAPlacement: GPUPlacement places DRA pods on the real API server
// with the real gpuplane-scheduler (policy bestfit, tie-break first) over
// kwok nodes whose GPUs are published only as ResourceSlices
// (dra.Build): a (4 V100M16) and b (8 V100M16, gpu-0 tainted
// gpu.nvidia.com/xid=79:NoSchedule), equal CPU and memory. Worked by
// hand: bestfit takes the node with the least left after the pod.
//  1. x1 (nvidia.com/gpu: 1, the chart class's extendedResourceName): a
//     has 4 free GPUs, b 7: a; upstream's allocator gives the first free
//     GPU: gpu-0.
//  2. c2 (a claim of 2 whole GPUs): a (3 free) over b (7): gpu-1,gpu-2.
//  3. x4 (nvidia.com/gpu: 4): a has 1 free: b, whose gpu-0 is tainted:
//     gpu-1..gpu-4.
//  4. c8 (a claim of 8): nowhere (b has 3 healthy GPUs free): refused,
//     and nothing is double-booked: every device
//     belongs to one claim.
//
// kube-scheduler's default profile (LeastAllocated) would put x1 on b.
func TestDRAPlacement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and gpuplane-scheduler")
	}
	kc := startCluster(t, []kube.Node{
		{Name: "a", CPUMilli: 64000, MemoryMiB: 256 << 10},
		{Name: "b", CPUMilli: 64000, MemoryMiB: 256 << 10},
	})
	installClasses(t, kc.Client)
	publishSlices(t, kc.Client, "a", draGPUs(4, "V100M16", 16<<10), dra.Options{}, nil)
	publishSlices(t, kc.Client, "b", draGPUs(8, "V100M16", 16<<10), dra.Options{},
		map[string]resourcev1.DeviceTaint{"gpu-0": {Key: "gpu.nvidia.com/xid", Value: "79", Effect: resourcev1.DeviceTaintEffectNoSchedule}})
	createGPUTemplate(t, kc.Client, "gpus-2", 2, 0)
	createGPUTemplate(t, kc.Client, "gpus-8", 8, 0)
	sp := startScheduler(t, kc, map[string]any{"policy": "bestfit", "tieBreak": "first"})

	createPod(t, kc.Client, podSpec{name: "x1", cpu: "1", mem: "1Gi", gpus: 1})
	check := func(name, wantNode, wantDevices string) {
		t.Helper()
		node, devices, refused := waitDRAPod(t, kc.Client, sp, name)
		if node != wantNode || devices != wantDevices {
			t.Errorf("%s: node %q devices %q (refused: %q); want %s %s", name, node, devices, refused, wantNode, wantDevices)
		}
	}
	check("x1", "a", "gpu-0")
	createClaimPod(t, kc.Client, podSpec{name: "c2", cpu: "1", mem: "1Gi"}, "gpus-2")
	check("c2", "a", "gpu-1,gpu-2")
	createPod(t, kc.Client, podSpec{name: "x4", cpu: "1", mem: "1Gi", gpus: 4})
	check("x4", "b", "gpu-1,gpu-2,gpu-3,gpu-4")
	createClaimPod(t, kc.Client, podSpec{name: "c8", cpu: "1", mem: "1Gi"}, "gpus-8")
	if node, _, refused := waitDRAPod(t, kc.Client, sp, "c8"); node != "" || refused == "" {
		t.Errorf("c8: node %q, message %q; want refused", node, refused)
	} else {
		t.Logf("c8 refused: %s", refused)
	}
	claims, err := kc.Client.ResourceV1().ResourceClaims("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]string{}
	for _, c := range claims.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			id := r.Pool + "/" + r.Device
			if other, ok := held[id]; ok {
				t.Errorf("device %s allocated to claims %s and %s", id, other, c.Name)
			}
			held[id] = c.Name
		}
	}
	if len(held) != 7 {
		t.Errorf("%d devices allocated, want 7 (1+2+4): %v", len(held), held)
	}
}
