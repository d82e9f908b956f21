// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcev1 "k8s.io/kubernetes/pkg/apis/resource/v1"
	"k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// poolSlices turns a pool into the ResourceSlices kubeletplugin's
// controller writes for node.
func poolSlices(r Resources) []*resourceapi.ResourceSlice {
	pool := r.Pool()
	var out []*resourceapi.ResourceSlice
	for i, s := range pool.Slices {
		out = append(out, &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-gpu.nvidia.com-%d", node, i)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver: apidra.DriverName, NodeName: ptr.To(node),
				Pool:    resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters,
			},
		})
	}
	return out
}

// TestSlicesValid checks the slices with the API server's validation of
// ResourceSlices (k8s.io/kubernetes/pkg/apis/resource/validation), which
// the fake clientset of the other tests does not apply: names, attribute
// and capacity names and values, request policies, counter and device
// limits, taints.
func TestSlicesValid(t *testing.T) {
	_, n := mockNode(t, twoA100)
	_, n8 := mockNode(t, "name: x\ngpus:\n  - count: 8\n    productName: NVIDIA H100 80GB HBM3\n    migEnabled: true\n")
	for _, tc := range []struct {
		name string
		r    func() (Resources, error)
	}{
		{"A100 MIG and whole", func() (Resources, error) { return Build(n, Options{MIG: true, PCIeRoot: fakeRoot}) }},
		{"shares", func() (Resources, error) { return Build(n, Options{MIG: true, Shares: true}) }},
		{"unlimited shares", func() (Resources, error) {
			return Build(n, Options{Shares: true, ShareMode: ShareMode{Unlimited: true}})
		}},
		{"4 shares", func() (Resources, error) { return Build(n, Options{Shares: true, ShareMode: ShareMode{Shares: 4}}) }},
		{"8 H100 MIG", func() (Resources, error) { return Build(n8, Options{MIG: true}) }},
	} {
		r, err := tc.r()
		if err != nil {
			t.Fatal(err)
		}
		if tc.name == "shares" {
			// Taints too: a lost GPU.
			for i := range r.Devices {
				r.Devices[i].Taints = []resourceapi.DeviceTaint{{Key: TaintKeyXID, Value: "79", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
			}
		}
		for _, s := range poolSlices(r) {
			var in resource.ResourceSlice
			if err := resourcev1.Convert_v1_ResourceSlice_To_resource_ResourceSlice(s, &in, nil); err != nil {
				t.Fatal(err)
			}
			if errs := validation.ValidateResourceSlice(&in); len(errs) > 0 {
				t.Errorf("%s: slice %s: %v", tc.name, s.Name, errs.ToAggregate())
			}
		}
	}
}
