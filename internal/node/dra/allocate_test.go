// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"fmt"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// TestAllocator allocates claims over the published slices with the
// scheduler's own allocator (k8s.io/dynamic-resource-allocation/structured,
// partitionable devices on): of two A100-80GB, GPU 0 in MIG mode, one
// whole GPU fits (gpu-1) and a second does not (a MIG-mode GPU has no
// whole-GPU device); seven 1g.10gb MIG devices fit GPU 0 and an eighth
// does not; then no 3g.40gb does.
func TestAllocator(t *testing.T) {
	ctx := context.Background()
	_, n := mockNode(t, twoA100)
	r, err := Build(n, Options{MIG: true})
	if err != nil {
		t.Fatal(err)
	}
	slices := poolSlices(r)
	cls, err := kube.ChartClasses() // the chart's, as the cluster has them
	if err != nil {
		t.Fatal(err)
	}
	state := structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](), AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}
	k8sNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"kubernetes.io/hostname": node}}}
	features := structured.Features{PartitionableDevices: true, DeviceTaints: true, ConsumableCapacity: true}
	cache := cel.NewCache(100, cel.Features{EnableConsumableCapacity: true})

	allocate := func(name, class, selector string) (string, bool) {
		t.Helper()
		claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}
		req := resourceapi.DeviceRequest{Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, Count: 1, AllocationMode: resourceapi.DeviceAllocationModeExactCount}}
		if selector != "" {
			req.Exactly.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: selector}}}
		}
		claim.Spec.Devices.Requests = []resourceapi.DeviceRequest{req}
		a, err := structured.NewAllocator(ctx, features, state, cls, slices, cache)
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Allocate(ctx, k8sNode, []*resourceapi.ResourceClaim{claim})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res) == 0 {
			return "", false
		}
		d := res[0].Devices.Results[0]
		state.AllocatedDevices.Insert(structured.MakeDeviceID(d.Driver, d.Pool, d.Device))
		return d.Device, true
	}
	if d, ok := allocate("whole", "gpu.nvidia.com", ""); !ok || d != "gpu-1" {
		t.Errorf("a whole GPU: %q %v, want gpu-1", d, ok)
	}
	if d, ok := allocate("whole-2", "gpu.nvidia.com", ""); ok {
		t.Errorf("a second whole GPU fit: %s", d)
	}
	gpu0 := fmt.Sprintf("device.attributes['gpu.nvidia.com'].parentUUID == '%s'", n.GPUs[0].UUID)
	got := map[string]bool{}
	for i := 0; i < 7; i++ {
		d, ok := allocate(fmt.Sprintf("small-%d", i), "mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")
		if !ok {
			t.Fatalf("1g.10gb number %d did not fit", i+1)
		}
		if got[d] {
			t.Fatalf("%s allocated twice", d)
		}
		got[d] = true
	}
	for s := 0; s < 7; s++ {
		if !got[fmt.Sprintf("gpu-0-mig-1g10gb-19-%d", s)] {
			t.Errorf("1g.10gb at %d not allocated: %v", s, got)
		}
	}
	if d, ok := allocate("small-8", "mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"); ok {
		t.Errorf("an eighth 1g.10gb fit: %s", d)
	}
	if d, ok := allocate("mig-3g", "mig.nvidia.com", gpu0+" && device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"); ok {
		t.Errorf("a 3g.40gb fit beside seven 1g.10gb: %s", d)
	}
}
