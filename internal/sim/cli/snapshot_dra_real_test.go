// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// realProfile: GPU 0 an A100-80GB in MIG mode, GPU 1 one without.
const realProfile = `
name: two-a100
driverVersion: "535.104.05"
cudaDriverVersion: "12.2"
gpus:
  - productName: NVIDIA A100-SXM4-80GB
    migEnabled: true
  - productName: NVIDIA A100-SXM4-80GB
`

// TestSnapshotDRARealAPIServer is draMIGSnapshot's case on a real
// kube-apiserver: the chart's DeviceClasses, the ResourceSlices dra.Build
// publishes for realProfile, a running pod allocated the 1g.10gb at slot
// 6 of GPU 0, one allocated GPU 1, a pending 4g.40gb claim; what `kubectl
// get nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o json`
// writes is simulated under --gpu-api dra --sharing mig: big takes slots
// 0-3 of GPU 0, 1714 of 2000 milli-GPU allocated (TestSnapshotDRAMIGOnDemand).
func TestSnapshotDRARealAPIServer(t *testing.T) {
	kubectl := kube.Binary(t, "kubectl")
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	ctx := t.Context()
	if err := kube.InstallDeviceClasses(ctx, c.Client, filepath.Join("..", "..", "..", kube.DeviceClassTemplate)); err != nil {
		t.Fatal(err)
	}
	r := buildSlices(t)
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a100"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slices := r.Pool().Slices
	for i, s := range slices {
		sl := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "a100-gpu.nvidia.com-" + string(rune('a'+i))},
			Spec: resourceapi.ResourceSliceSpec{Driver: apidra.DriverName, NodeName: ptr.To("a100"), Pool: resourceapi.ResourcePool{Name: "a100", ResourceSliceCount: int64(len(slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters}}
		if _, err := c.Client.ResourceV1().ResourceSlices().Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ml"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mig, whole := "", ""
	for name, e := range r.Entries {
		switch {
		case e.GPU == 0 && e.MIG != nil && e.MIG.GIProfile == "1g.10gb" && e.MIG.Start == 6:
			mig = name
		case e.GPU == 1 && e.MIG == nil:
			whole = name
		}
	}
	createPod(ctx, t, c, "mig", "a100", "mig.nvidia.com", "", mig)
	createPod(ctx, t, c, "train", "a100", "gpu.nvidia.com", "", whole)
	createPod(ctx, t, c, "big", "", "mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '4g.40gb'", "")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", c.Kubeconfig, "get", "nodes,pods,resourceslices,resourceclaims,deviceclasses", "-A", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.GPUAPI, o.Sharing = file, "bestfit", 1, "dra", "mig"
	rep := runJSON(t, o)
	if r := rep.Results[0]; r.AllocatedGPUMilli != 1714 || len(rep.SnapshotPods) != 1 || rep.SnapshotPods[0].Node != "a100" || len(rep.SnapshotPods[0].GPUs) != 1 || rep.SnapshotPods[0].GPUs[0] != 0 {
		t.Errorf("%d milli-GPU allocated, outcomes %+v; want 1714, big on a100 GPU 0", r.AllocatedGPUMilli, rep.SnapshotPods)
	}
}

// buildSlices returns what gpuplane's driver publishes for realProfile.
func buildSlices(t *testing.T) dra.Resources {
	t.Helper()
	n, err := mock.DiscoverProfile("p.yaml", []byte(realProfile))
	if err != nil {
		t.Fatal(err)
	}
	r, err := dra.Build(n, dra.Options{MIG: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// createPod creates pod ml/name with a claim of one device of class (CEL
// selector sel, "" none); on node, running with the claim allocated
// device, or pending when node is "".
func createPod(ctx context.Context, t *testing.T, c *kube.Cluster, name, node, class, sel, device string) {
	t.Helper()
	req := resourceapi.DeviceRequest{Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class}}
	if sel != "" {
		req.Exactly.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: sel}}}
	}
	claim, err := c.Client.ResourceV1().ResourceClaims("ml").Create(ctx, &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := c.Client.CoreV1().Pods("ml").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "x",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("1")}, Claims: []corev1.ResourceClaim{{Name: "r"}}}}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "r", ResourceClaimName: ptr.To(name)}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node == "" {
		return
	}
	claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{Request: "r", Driver: apidra.DriverName, Pool: "a100", Device: device}}}}
	claim.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: name, UID: pod.UID}}
	if _, err := c.Client.ResourceV1().ResourceClaims("ml").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if _, err := c.Client.CoreV1().Pods("ml").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
