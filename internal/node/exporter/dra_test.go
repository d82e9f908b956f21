// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/node/podresources/podresourcestest"
)

// fakeClaims is a ClaimShares of fixed shares, by namespace/name/device/shareID.
type fakeClaims map[[4]string]float64

func (f fakeClaims) ClaimShare(ns, name, dev, share string) (float64, bool) {
	v, ok := f[[4]string{ns, name, dev, share}]
	return v, ok
}

// draPods are DRA pods as the kubelet lists them: g and h share GPU 0
// (gpu-0, allowMultipleAllocations) through shares s1 and s2; i holds a
// 3g.40gb MIG device of GPU 1 (minor 1) that discovery knows (MIG-aaaa);
// j a 1g.10gb one created after discovery (MIG-zzzz, unknown); k a device
// of another driver; l a device of a GPU not on this node (minor 9).
func draPods() []*v1.PodResources {
	dev := podresourcestest.ClaimDevice
	return []*v1.PodResources{
		podresourcestest.Pod("ml", "g", podresourcestest.DRAContainer("main", "ml", "g-gpu", dev(apidra.DriverName, "node-a", "gpu-0", "s1", "nvidia.com/gpu=GPU-0000"))),
		podresourcestest.Pod("ml", "h", podresourcestest.DRAContainer("main", "ml", "h-gpu", dev(apidra.DriverName, "node-a", "gpu-0", "s2", "nvidia.com/gpu=GPU-0000"))),
		podresourcestest.Pod("web", "i", podresourcestest.DRAContainer("srv", "web", "i-mig", dev(apidra.DriverName, "node-a", "gpu-1-mig-3g40gb-9-4", "", "nvidia.com/gpu=MIG-aaaa"))),
		podresourcestest.Pod("web", "j", podresourcestest.DRAContainer("srv", "web", "j-mig", dev(apidra.DriverName, "node-a", "gpu-1-mig-1g10gb-19-2", "", "nvidia.com/gpu=MIG-zzzz"))),
		podresourcestest.Pod("web", "k", podresourcestest.DRAContainer("srv", "web", "k-nic", dev("net.example.com", "node-a", "gpu-0", ""))),
		podresourcestest.Pod("web", "l", podresourcestest.DRAContainer("srv", "web", "l-gpu", dev(apidra.DriverName, "node-a", "gpu-9", ""))),
	}
}

// TestDRAAttribution reads DRA allocations through a pod-resources server
// and checks, by hand: g holds 250 milliGPU of GPU 0 (the claim source's
// consumed capacity): share 0.25; h's share is unknown (shared, the claim
// source does not know it): allocation but no share; i holds MIG-aaaa
// whole: 1 of the MIG device, and its series carry i's labels; j's MIG
// device is not discovered yet: counted on GPU 1 as 1 compute slice of 7,
// 1/7 = 0.14285714285714285, and GPU 1's series keep no pod labels (j holds
// a part of it); k and l are not attributed.
func TestDRAAttribution(t *testing.T) {
	dir, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := podresourcestest.Start(filepath.Join(dir, "k.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	srv.SetPods(draPods()...)
	w, err := podresources.NewWatcher(srv.Path(), time.Minute, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}

	node := device.Node{GPUs: slices.Clone(testNode.GPUs)}
	node.GPUs[0].Minor, node.GPUs[1].Minor = 0, 1
	claims := fakeClaims{{"ml", "g-gpu", "gpu-0", "s1"}: 0.25}
	e, err := New(Options{Backend: newFakeBackend(node, testSamples), Fields: testFields(t), Hostname: "node-a", Pods: w, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.now = func() time.Time { return t0.Add(time.Second) }
	e.state.setNode(node)
	e.state.setMapping(w.Current())
	e.state.addSamples(testSamples, t0)
	e.current.Store(e.state.snapshot())

	podG, podH := `,namespace="ml",pod="g",container="main"`, `,namespace="ml",pod="h",container="main"`
	podI, podJ := `,namespace="web",pod="i",container="srv"`, `,namespace="web",pod="j",container="srv"`
	want := `
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + `} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu1 + `} 7
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + `} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migA + podI + `} 0.25
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migB + `} 0.125
# HELP gpuplane_device_pods Number of pods the device is allocated to; above 1 when the GPU is shared by time-slicing.
# TYPE gpuplane_device_pods gauge
gpuplane_device_pods{` + gpu0 + `} 2
gpuplane_device_pods{` + gpu1 + `} 1
gpuplane_device_pods{` + migA + `} 1
gpuplane_device_pods{` + migB + `} 0
# HELP gpuplane_device_allocation 1 for each container the device is allocated to.
# TYPE gpuplane_device_allocation gauge
gpuplane_device_allocation{` + gpu0 + podG + `} 1
gpuplane_device_allocation{` + gpu0 + podH + `} 1
gpuplane_device_allocation{` + gpu1 + podJ + `} 1
gpuplane_device_allocation{` + migA + podI + `} 1
# HELP gpuplane_device_allocation_share Fraction of the device (GPU or MIG device) the container holds: 1 whole, k/replicas for k time-slicing replicas, units/1000 for gpuplane.io/gpu-milli; for a DRA device its consumed milliGPU/1000, and for a DRA MIG device not yet discovered its compute slices/7 of the GPU.
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{` + gpu0 + podG + `} 0.25
gpuplane_device_allocation_share{` + gpu1 + podJ + `} 0.14285714285714285
gpuplane_device_allocation_share{` + migA + podI + `} 1
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want), "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
		"gpuplane_device_pods", "gpuplane_device_allocation", "gpuplane_device_allocation_share"); err != nil {
		t.Fatal(err)
	}
}

// TestDRAWithoutClaimSource: without a claim source a device allocated
// whole (no share ID) has share 1, one allocated through a share none.
func TestDRAWithoutClaimSource(t *testing.T) {
	node := device.Node{GPUs: slices.Clone(testNode.GPUs)}
	node.GPUs[0].Minor, node.GPUs[1].Minor = 0, 1
	s := newState(testFields(t), "node-a", nil, false)
	s.setNode(node)
	s.setMapping(&podresources.Mapping{Allocations: podresources.Flatten(draPods())})
	got := map[string][]float64{}
	for uuid, dt := range s.targets {
		if len(dt.shares) > 0 {
			got[uuid] = dt.shares
		}
	}
	want := map[string][]float64{"GPU-0000": {-1, -1}, "GPU-1111": {1.0 / 7}, "MIG-aaaa": {1}}
	if len(got) != len(want) {
		t.Fatalf("shares %v, want %v", got, want)
	}
	for uuid, w := range want {
		if !slices.Equal(got[uuid], w) {
			t.Errorf("%s: shares %v, want %v", uuid, got[uuid], w)
		}
	}
}

// TestAdminAccessExporter: a claim with admin access (KEP-5018) holds
// nothing: upstream counts its result as no allocation
// (k8s.io/kubernetes v1.37.2 pkg/scheduler/framework/plugins/
// dynamicresources/allocateddevices.go: "Is not considered as
// allocated"), and gpuplane's DRA driver reports its share as 0
// (dra.Driver.ClaimShare). Monitoring pod m has admin access to MIG-aaaa
// beside workload i, and n to GPU 0 alone: MIG-aaaa has one pod (i, share
// 1, its series keep i's labels), GPU 0 none.
func TestAdminAccessExporter(t *testing.T) {
	dev := podresourcestest.ClaimDevice
	pods := []*v1.PodResources{
		podresourcestest.Pod("web", "i", podresourcestest.DRAContainer("srv", "web", "i-mig", dev(apidra.DriverName, "node-a", "gpu-1-mig-3g40gb-9-4", "", "nvidia.com/gpu=MIG-aaaa"))),
		podresourcestest.Pod("mon", "m", podresourcestest.DRAContainer("dcgm", "mon", "m-mon", dev(apidra.DriverName, "node-a", "gpu-1-mig-3g40gb-9-4", "", "nvidia.com/gpu=MIG-aaaa"))),
		podresourcestest.Pod("mon", "n", podresourcestest.DRAContainer("dcgm", "mon", "n-mon", dev(apidra.DriverName, "node-a", "gpu-0", "", "nvidia.com/gpu=GPU-0000"))),
	}
	node := device.Node{GPUs: slices.Clone(testNode.GPUs)}
	node.GPUs[0].Minor, node.GPUs[1].Minor = 0, 1
	claims := fakeClaims{{"mon", "m-mon", "gpu-1-mig-3g40gb-9-4", ""}: 0, {"mon", "n-mon", "gpu-0", ""}: 0, {"web", "i-mig", "gpu-1-mig-3g40gb-9-4", ""}: 1}
	s := newState(testFields(t), "node-a", nil, false)
	s.claims = claims
	s.setNode(node)
	s.setMapping(&podresources.Mapping{Allocations: podresources.Flatten(pods)})
	for _, tc := range []struct {
		uuid   string
		pods   int
		shares []float64
		target string // the pod its series are labelled with, "" for none
	}{
		{"MIG-aaaa", 1, []float64{1}, "i"},
		{"GPU-0000", 0, nil, ""},
	} {
		dt := s.targets[tc.uuid]
		if dt.pods != tc.pods || !slices.Equal(dt.shares, tc.shares) {
			t.Errorf("%s: %d pods, shares %v; want %d, %v", tc.uuid, dt.pods, dt.shares, tc.pods, tc.shares)
		}
		labelled := len(dt.targets) == 1 && slices.Contains(dt.targets[0].values, tc.target)
		if tc.target != "" && !labelled {
			t.Errorf("%s: its series are not labelled with pod %s: %+v", tc.uuid, tc.target, dt.targets)
		}
	}
}
