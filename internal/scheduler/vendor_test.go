// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// vendorNode is a node whose accelerators another vendor's device plugin
// serves: allocatable name (amd.com/gpu, habana.ai/gaudi) of n devices,
// with labels as that vendor's components write them.
func vendorNode(name string, res v1.ResourceName, n int64, labels map[string]string) *v1.Node {
	node := gpuNode(name, "", 0, "192", "2Ti")
	node.Labels = labels
	node.Status.Allocatable[res] = *resource.NewQuantity(n, resource.DecimalSI)
	node.Status.Capacity = node.Status.Allocatable
	return node
}

func withResource(name v1.ResourceName, n int64) podOpt {
	return func(p *v1.Pod) {
		q := *resource.NewQuantity(n, resource.DecimalSI)
		p.Spec.Containers[0].Resources.Requests[name] = q
		if p.Spec.Containers[0].Resources.Limits == nil {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{}
		}
		p.Spec.Containers[0].Resources.Limits[name] = q
	}
}

var mi300xCPX = map[string]string{gpuresource.LabelAMDProductName: "AMD_Instinct_MI300X", gpuresource.LabelAMDPartition: "cpx_nps1"}

// An MI300X x 8 node in CPX/NPS1 as AMD's device plugin serves it: 64
// amd.com/gpu (8 partitions a GPU, AMD's partitioning docs), each one
// GPU of the core; a pod of 4 on its annotated GPUs, one of 2 without an
// annotation on the first free ones (4, 5).
func TestVendorNodeAMD(t *testing.T) {
	ni := nodeInfo(vendorNode("mi", gpuresource.AMDGPU, 64, mi300xCPX),
		newPod("a", "8", "64Gi", withResource(gpuresource.AMDGPU, 4), onNode("mi"), withAnnotation(gpuresource.AnnotationGPUs, "0,1,2,3")),
		newPod("b", "8", "64Gi", withResource(gpuresource.AMDGPU, 2), onNode("mi")))
	st, err := buildNode(ni, "", func(types.UID) (cluster.GPUSet, bool) { return 0, false })
	if err != nil {
		t.Fatal(err)
	}
	n := st.node
	want := gpu.Partition{Compute: "CPX", Memory: "NPS1"}
	if st.reason != "" || n.Vendor != gpu.AMD || n.Model != "MI300X" || n.Partition != want || n.GPUs() != 64 {
		t.Fatalf("reason %q, vendor %s, model %s, partition %s, %d GPUs; want AMD MI300X CPX/NPS1, 64", st.reason, n.Vendor, n.Model, n.Partition, n.GPUs())
	}
	if got := fmt.Sprint(n.GPUFree[:7]); got != "[0 0 0 0 0 0 1000]" || n.FullyFreeGPUs() != 58 {
		t.Errorf("GPUs 0..6 free %s, %d fully free; want [0 0 0 0 0 0 1000], 58", got, n.FullyFreeGPUs())
	}
	if n.CPUFree != 192000-16000 {
		t.Errorf("CPU free %d, want 176000", n.CPUFree)
	}
}

// Nodes that offer no accelerator, each with its reason: a Gaudi node
// labelled an NVIDIA model, a node of two vendors' resources, an MI300X
// in a mode it lacks (DPX/NPS4: NPS4 needs QPX or CPX).
func TestVendorNodeReasons(t *testing.T) {
	both := vendorNode("both", gpuresource.AMDGPU, 8, mi300xCPX)
	both.Status.Allocatable[gpuresource.GPU] = *resource.NewQuantity(8, resource.DecimalSI)
	for _, tc := range []struct {
		node   *v1.Node
		reason string
	}{
		{vendorNode("g", gpuresource.Gaudi, 8, map[string]string{gpuresource.LabelGPUModel: "H100-80GB"}), "label gpuplane.io/gpu.model: model H100-80GB is nvidia's"},
		{both, "node serves accelerators of two vendors"},
		{vendorNode("dpx", gpuresource.AMDGPU, 16, map[string]string{gpuresource.LabelAMDProductName: "AMD_Instinct_MI300X", gpuresource.LabelAMDPartition: "dpx_nps4"}), "label amd.com/gpu.compute-memory-partition"},
	} {
		st, err := buildNode(nodeInfo(tc.node), "", func(types.UID) (cluster.GPUSet, bool) { return 0, false })
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.reason, tc.reason) || st.node.GPUs() != 0 {
			t.Errorf("node %s: reason %q, %d GPUs; want %q, 0", tc.node.Name, st.reason, st.node.GPUs(), tc.reason)
		}
	}
}

// Each vendor's resource fits its vendor's nodes only, with
// NodeResourcesFit's reason elsewhere ("Insufficient amd.com/gpu"); a
// share of gpuplane.io/gpu-milli fits NVIDIA nodes only (gpuplane's agent
// advertises it there).
func TestFilterVendors(t *testing.T) {
	pl := newTestPlugin(t, "bestfit", "first")
	h100 := nodeInfo(gpuNode("h100", "NVIDIA-H100-80GB-HBM3", 8, "192", "2Ti"))
	mi := nodeInfo(vendorNode("mi", gpuresource.AMDGPU, 64, mi300xCPX))
	gaudi := nodeInfo(vendorNode("g3", gpuresource.Gaudi, 8, map[string]string{gpuresource.LabelGPUModel: "Gaudi3"}))
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		ni     fwk.NodeInfo
		code   fwk.Code
		reason string
	}{
		{"AMD pod on an NVIDIA node", newPod("p", "1", "1Gi", withResource(gpuresource.AMDGPU, 2)), h100, fwk.Unschedulable, "Insufficient amd.com/gpu"},
		{"NVIDIA pod on an AMD node", newPod("p", "1", "1Gi", withGPUs(2)), mi, fwk.Unschedulable, "Insufficient nvidia.com/gpu"},
		{"a share on a Gaudi node", newPod("p", "1", "1Gi", withMilli(500)), gaudi, fwk.Unschedulable, "Insufficient gpuplane.io/gpu-milli"},
		{"Gaudi pod on a Gaudi node", newPod("p", "1", "1Gi", withResource(gpuresource.Gaudi, 8)), gaudi, fwk.Success, ""},
		{"AMD pod of the node's model", newPod("p", "1", "1Gi", withResource(gpuresource.AMDGPU, 8), withAnnotation(gpuresource.AnnotationGPUModel, "MI300X")), mi, fwk.Success, ""},
		{"AMD pod of another model", newPod("p", "1", "1Gi", withResource(gpuresource.AMDGPU, 8), withAnnotation(gpuresource.AnnotationGPUModel, "MI325X")), mi, fwk.Unschedulable, "GPU model MI300X not allowed"},
		{"a share on an NVIDIA node", newPod("p", "1", "1Gi", withMilli(500)), h100, fwk.Success, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkFilter(t, pl, tc.pod, tc.ni, tc.code, tc.reason) })
	}
}

// A pod of two vendors' devices is refused before any node is tried.
func TestPodRequestVendors(t *testing.T) {
	got, err := podRequest(newPod("a", "4", "16Gi", withResource(gpuresource.Gaudi, 4)))
	got.Name = ""
	if want := (cluster.Pod{CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 4, GPUMilli: 1000, Resource: cluster.ResourceGaudi}); err != nil || got != want {
		t.Errorf("Gaudi pod: %+v, %v; want %+v", got, err, want)
	}
	_, err = podRequest(newPod("b", "1", "1Gi", withResource(gpuresource.AMDGPU, 1), withGPUs(1)))
	if err == nil || !strings.Contains(err.Error(), "amd.com/gpu 1 with nvidia.com/gpu: no node serves accelerators of two vendors") {
		t.Errorf("AMD and NVIDIA pod: %v", err)
	}
}
