// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/dra"
)

// buildProfile is an A100-80GB in MIG mode (GPU 0) and one without
// (GPU 1), as internal/node/dra's tests write them.
const buildProfile = `
name: two-a100
driverVersion: "535.104.05"
cudaDriverVersion: "12.2"
gpus:
  - productName: NVIDIA A100-SXM4-80GB
    migEnabled: true
  - productName: NVIDIA A100-SXM4-80GB
`

// TestSnapshotDRABuild reads the ResourceSlices gpuplane's driver really
// publishes (dra.Build with MIG and shares, split by Pool, written with
// the k8s.io/api types): 2 GPUs of A100-80GB, GPU 0 of MIG on demand, GPU
// 1 shareable; a pod allocated the 3g.40gb placement at slot 4 of GPU 0
// (the device Build names for it) holds GPU 0 in that placement, one
// allocated 300 milliGPU of gpu-1 a share of GPU 1.
func TestSnapshotDRABuild(t *testing.T) {
	n, err := mock.DiscoverProfile("p.yaml", []byte(buildProfile))
	if err != nil {
		t.Fatal(err)
	}
	r, err := dra.Build(n, dra.Options{MIG: true, Shares: true})
	if err != nil {
		t.Fatal(err)
	}
	var mig3, whole1 string
	for name, e := range r.Entries {
		switch {
		case e.GPU == 0 && e.MIG != nil && e.MIG.GIProfile == "3g.40gb" && e.MIG.Start == 4:
			mig3 = name
		case e.GPU == 1 && e.MIG == nil:
			whole1 = name
		}
	}
	if mig3 == "" || whole1 == "" {
		t.Fatalf("Build has no 3g.40gb at slot 4 of GPU 0 or no GPU 1: %v", r.Entries)
	}
	items := []runtime.RawExtension{{Object: &corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n0"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi")}}}}}
	for i, s := range r.Pool().Slices {
		items = append(items, runtime.RawExtension{Object: &resourceapi.ResourceSlice{TypeMeta: metav1.TypeMeta{Kind: "ResourceSlice", APIVersion: "resource.k8s.io/v1"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n0-gpu.nvidia.com-%d", i)},
			Spec: resourceapi.ResourceSliceSpec{Driver: apidra.DriverName, NodeName: ptr.To("n0"), Pool: resourceapi.ResourcePool{Name: "n0", ResourceSliceCount: int64(len(r.Pool().Slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters}}})
	}
	for _, c := range []struct {
		pod, device, milli string
	}{{"mig", mig3, ""}, {"share", whole1, "300"}} {
		res := resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: apidra.DriverName, Pool: "n0", Device: c.device}
		if c.milli != "" {
			res.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{"milliGPU": resource.MustParse(c.milli)}
		}
		items = append(items,
			runtime.RawExtension{Object: &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: c.pod, Namespace: "ml"},
				Spec:   corev1.PodSpec{NodeName: "n0", Containers: []corev1.Container{{Name: "c"}}, ResourceClaims: []corev1.PodResourceClaim{{Name: "r", ResourceClaimName: ptr.To(c.pod)}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning}}},
			runtime.RawExtension{Object: &resourceapi.ResourceClaim{TypeMeta: metav1.TypeMeta{Kind: "ResourceClaim", APIVersion: "resource.k8s.io/v1"}, ObjectMeta: metav1.ObjectMeta{Name: c.pod, Namespace: "ml"},
				Spec:   resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}}}},
				Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{res}}}}}})
	}
	data, err := json.Marshal(&corev1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read("build.json", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if nd := s.Nodes[0]; nd.GPUs != 2 || nd.Model != "A100-80GB" || !nd.DynamicMIG || !nd.DRAShares {
		t.Errorf("node %+v: want 2 GPUs of A100-80GB, MIG on demand, shares", nd)
	}
	got := map[string]string{}
	for _, p := range s.Pods {
		got[p.Name] = fmt.Sprintf("%d x %d %v %s@%d", p.NumGPU, p.GPUMilli, p.GPUs, p.MIGProfile, p.MIGStart)
	}
	// 3g: 3000/7 = 428 milli-GPU.
	if want := "1 x 428 [0] 3g.40gb@4"; got["ml/mig"] != want {
		t.Errorf("mig: %s, want %s", got["ml/mig"], want)
	}
	if want := "1 x 300 [1] @-1"; got["ml/share"] != want {
		t.Errorf("share: %s, want %s", got["ml/share"], want)
	}
}
