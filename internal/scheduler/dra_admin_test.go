// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	kptr "k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// allocatedClaim is a ResourceClaim allocated on node's pool: one result
// per device, admin access (KEP-5018) on every result when admin.
func allocatedClaim(name, node string, admin bool, shared map[string]string, devices ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "mon", Name: name, UID: types.UID("uid-" + name)}}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for _, d := range devices {
		r := resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: apidra.DriverName, Pool: node, Device: d}
		if admin {
			r.AdminAccess = kptr.To(true)
		}
		if milli, ok := shared[d]; ok {
			r.ShareID = kptr.To(types.UID(fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", len(name))))
			r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{
				apidra.CapacityMilliGPU: resource.MustParse(milli), apidra.CapacityMemory: resource.MustParse("1Mi")}
		}
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, r)
	}
	return c
}

// draManager is kube-scheduler's own DRA manager (k8s.io/kubernetes
// v1.37.2 pkg/scheduler/scheduler.go: an assume cache of ResourceClaims,
// the ResourceSlice tracker) over a fake API server holding objs. It is
// made once the assume cache has every claim: NewDRAManager's handler
// then receives them all before it returns (assumecache AddEventHandler
// delivers the cache's objects at once), so the allocated state is
// complete.
func draManager(t *testing.T, objs ...runtime.Object) *dynamicresources.DefaultDRAManager {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	f.Resource().V1().DeviceClasses().Informer()
	claims := assumecache.NewAssumeCache(klog.Background(), f.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	tr, err := tracker.StartTracker(ctx, tracker.Options{EnableConsumableCapacity: true, SliceInformer: f.Resource().V1().ResourceSlices(), KubeClient: client})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v not synced", typ)
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), claims.AddEventHandler(cache.ResourceEventHandlerFuncs{}).HasSynced) {
		t.Fatal("the claims' assume cache did not sync")
	}
	return dynamicresources.NewDRAManager(ctx, claims, tr, f)
}

// TestDRAAdminAccessHoldsNothing: a claim with admin access holds no GPU
// in the scheduler's view. Upstream's allocator gives admin access any
// device and marks it in use only for other requests, not consuming it
// (k8s.io/dynamic-resource-allocation v0.37.2
// structured/internal/stable/allocator_stable.go, allocateDevice: "Mark
// as in use (unless we do admin access)"), and kube-scheduler's DRA
// manager counts no result with adminAccess as allocated (k8s.io/kubernetes
// v1.37.2 pkg/scheduler/framework/plugins/dynamicresources/
// allocateddevices.go, foreachAllocatedDevice: "Is not considered as
// allocated"); gpuplane's view is read from that manager
// (readDRA, GatherAllocatedState). Worked by hand on node n1, four
// whole GPUs, gpu-2 and gpu-3 published shared: workload claim "work"
// holds gpu-0 and "share" 300 milli-GPU of gpu-2; monitoring claim "mon"
// has admin access to all four. GPU free: gpu-0 0 (the workload's),
// gpu-1 1000, gpu-2 700, gpu-3 1000: the monitor's results count for
// nothing.
func TestDRAAdminAccessHoldsNothing(t *testing.T) {
	sl := draSlice("n1-0", "n1", 1, false, 0, 1)
	sh := draSlice("n1-1", "n1", 1, true, 2, 3)
	sl.Spec.Pool.ResourceSliceCount, sh.Spec.Pool.ResourceSliceCount = 2, 2
	m := draManager(t, sl, sh,
		allocatedClaim("work", "n1", false, nil, "gpu-0"),
		allocatedClaim("share", "n1", false, map[string]string{"gpu-2": "300"}, "gpu-2"),
		allocatedClaim("mon", "n1", true, nil, "gpu-0", "gpu-1", "gpu-2", "gpu-3"))
	sl1, st, err := readDRA(m)
	if err != nil {
		t.Fatal(err)
	}
	v := buildDRAView(sl1, st)
	ns, err := buildNodeWith(nodeInfo(gpuNode("n1", "", 0, "64", "512Gi")), "", noRecord, v["n1"])
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ns.node.GPUFree); got != "[0 1000 700 1000]" {
		t.Errorf("GPU free %s, want [0 1000 700 1000]", got)
	}
	// Without the monitor's claim the view is the same.
	m = draManager(t, sl, sh,
		allocatedClaim("work", "n1", false, nil, "gpu-0"),
		allocatedClaim("share", "n1", false, map[string]string{"gpu-2": "300"}, "gpu-2"))
	sl2, st2, err := readDRA(m)
	if v2 := buildDRAView(sl2, st2); err != nil || !v2["n1"].equal(v["n1"]) {
		t.Errorf("without the monitor: %+v (%v), want %+v", v2["n1"], err, v["n1"])
	}
}
