// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// pluginNode is a node as NVIDIA's device plugin and gpu-feature-discovery
// publish it: allocatable nvidia.com/gpu devices and the GFD labels.
func pluginNode(name string, devices int, labels map[string]string) *v1.Node {
	n := gpuNode(name, labels[gpuresource.LabelGPUProduct], devices, "64", "256Gi")
	for k, v := range labels {
		n.Labels[k] = v
	}
	return n
}

// The setups of issue 32's GPU Operator cluster, labelled as
// gpu-feature-discovery labels them (github.com/NVIDIA/k8s-device-plugin
// internal/lm/resource.go: "-SHARED" under time-slicing or MPS with the
// default naming, nvidia.com/gpu.replicas; mig-strategy.go: the single
// strategy's product "<gpu>-MIG-<profile>").
var (
	timeSliced = map[string]string{gpuresource.LabelGPUProduct: "NVIDIA-L4-SHARED", gpuresource.LabelGPUReplicas: "4", gpuresource.LabelGPUSharingStrategy: "time-slicing"}
	mpsShared  = map[string]string{gpuresource.LabelGPUProduct: "NVIDIA-A100-SXM4-40GB-SHARED", gpuresource.LabelGPUReplicas: "4", gpuresource.LabelGPUSharingStrategy: "mps"}
	singleMIG  = map[string]string{gpuresource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", gpuresource.LabelMIGStrategy: "single"}
	invalidMIG = map[string]string{gpuresource.LabelGPUProduct: "NVIDIA-A100-SXM4-80GB-MIG-INVALID", gpuresource.LabelMIGStrategy: "single"}
)

// TestBuildNodePluginDevices: the scheduler reads nvidia.com/gpu devices as
// the device plugin serves them, as the snapshot reader does
// (gpu.DevicePluginSetup.Devices): 16 time-sliced devices of replicas 4
// are 4 L4s, a device 250 milli-GPU; 28 single-strategy 1g.10gb devices
// are 4 H100s (7 instances each, the MIG user guide), a device 142
// milli-GPU (1/7 rounded down); bound pods of nvidia.com/gpu: 1 hold one
// device's share.
func TestBuildNodePluginDevices(t *testing.T) {
	for _, tc := range []struct {
		name      string
		node      *v1.Node
		pods      int
		gpus      int
		replica   int64
		shared    bool
		migOnly   cluster.GPUSet
		free0     int64
		reasonHas string
	}{
		{"time-slicing x4", pluginNode("ts", 16, timeSliced), 3, 4, 250, true, 0, 1000 - 3*250, ""},
		{"mps x4", pluginNode("mps", 8, mpsShared), 2, 2, 250, true, 0, 1000 - 2*250, ""},
		{"single 1g.10gb", pluginNode("single", 28, singleMIG), 5, 4, 142, false, 0b1111, 1000 - 5*142, ""},
		{"plain", gpuNode("plain", "NVIDIA-A100-SXM4-80GB", 8, "64", "256Gi"), 1, 8, 0, false, 0, 0, ""},
		{"replicas do not divide", pluginNode("odd", 6, timeSliced), 0, 0, 0, false, 0, 0, "not a multiple of its nvidia.com/gpu.replicas 4"},
		{"MIG-INVALID", pluginNode("inv", 8, invalidMIG), 0, 0, 0, false, 0, 0, "MIG instances"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*v1.Pod
			for i := 0; i < tc.pods; i++ {
				pods = append(pods, newPod("p"+string(rune('a'+i)), "1", "1Gi", withGPUs(1), onNode(tc.node.Name), withAnnotation(gpuresource.AnnotationGPUs, "0")))
			}
			st, err := buildNode(nodeInfo(tc.node, pods...), "", noRecord)
			if err != nil {
				t.Fatal(err)
			}
			n := st.node
			if len(n.GPUFree) != tc.gpus || n.ReplicaMilli != tc.replica || n.Shared != tc.shared || n.MIGOnly != tc.migOnly || !strings.Contains(st.reason, tc.reasonHas) || (tc.reasonHas == "") != (st.reason == "") {
				t.Fatalf("GPUs %d, ReplicaMilli %d, Shared %v, MIGOnly %b, reason %q; want %d, %d, %v, %b, %q",
					len(n.GPUFree), n.ReplicaMilli, n.Shared, n.MIGOnly, st.reason, tc.gpus, tc.replica, tc.shared, tc.migOnly, tc.reasonHas)
			}
			if tc.gpus > 0 && n.GPUFree[0] != tc.free0 {
				t.Errorf("GPU 0 free %d milli-GPU, want %d", n.GPUFree[0], tc.free0)
			}
		})
	}
}

// TestFilterPluginDevices: what kube-scheduler's NodeResourcesFit and the
// kubelet admit on such nodes, the plugin admits too. A time-sliced L4
// node (4 GPUs x 4 replicas) with 15 pods of one device running takes a
// 16th, and a pod of 2 devices fits no more (16 devices of 16 are taken);
// a single-strategy H100 node takes a pod of nvidia.com/gpu: 1 (one
// 1g.10gb instance); with one GPU (7 devices) and 7 pods running, an 8th
// is refused (7 x 142 = 994 milli-GPU held, 6 left), a 7th fits.
func TestFilterPluginDevices(t *testing.T) {
	pl := newTestPlugin(t, "bestfit", "first")
	ts := pluginNode("ts", 16, timeSliced)
	var running []*v1.Pod
	for i := 0; i < 15; i++ {
		running = append(running, newPod("r"+string(rune('a'+i)), "1", "1Gi", withGPUs(1), onNode("ts"), withAnnotation(gpuresource.AnnotationGPUs, string(rune('0'+i/4)))))
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		ni   fwk.NodeInfo
		code fwk.Code
	}{
		{"16th replica", newPod("p", "1", "1Gi", withGPUs(1)), nodeInfo(ts, running...), fwk.Success},
		{"2 replicas, 1 left", newPod("p", "1", "1Gi", withGPUs(2)), nodeInfo(ts, running...), fwk.Unschedulable},
		{"2 replicas, empty node", newPod("p", "1", "1Gi", withGPUs(2)), nodeInfo(ts), fwk.Success},
		{"single strategy instance", newPod("p", "1", "1Gi", withGPUs(1)), nodeInfo(pluginNode("single", 28, singleMIG)), fwk.Success},
		{"single strategy, 8th instance of 7", newPod("p", "1", "1Gi", withGPUs(1)), nodeInfo(pluginNode("one", 7, singleMIG), sevenOf("one")...), fwk.Unschedulable},
		{"single strategy, 7th instance of 7", newPod("p", "1", "1Gi", withGPUs(1)), nodeInfo(pluginNode("one", 7, singleMIG), sevenOf("one")[:6]...), fwk.Success},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := framework.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), cs, tc.pod, nil); !st.IsSuccess() && !st.IsSkip() {
				if tc.code == fwk.Success {
					t.Fatalf("PreFilter: %v", st)
				}
				return
			}
			st := pl.Filter(context.Background(), cs, tc.pod, tc.ni)
			if (st.Code() == fwk.Success) != (tc.code == fwk.Success) {
				t.Errorf("got %v %q, want %v", st.Code(), st.Message(), tc.code)
			}
		})
	}
}

// sevenOf is 7 running pods of one nvidia.com/gpu device on node.
func sevenOf(node string) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < 7; i++ {
		out = append(out, newPod("s"+string(rune('a'+i)), "1", "1Gi", withGPUs(1), onNode(node), withAnnotation(gpuresource.AnnotationGPUs, "0")))
	}
	return out
}
