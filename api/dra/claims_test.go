// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestAsks reads claim specs as Kubernetes serves them (JSON) and checks
// what each asks for, worked out by hand: NVIDIA's quickstart shapes
// (github.com/NVIDIA/k8s-dra-driver-gpu demo/specs/quickstart, commit
// 22407113785e): v1/gpu-test1.yaml's single-gpu template (one request of
// class gpu.nvidia.com, no count: 1 GPU), gpu-test8.yaml's v1beta1
// double-gpu (count 2 in the request itself), v1/gpu-test4.yaml's
// mig-devices (four MIG requests, profiles from the CEL selectors); and,
// by the resource.k8s.io/v1 API (k8s.io/api resource/v1 DeviceRequest,
// ExactDeviceRequest), a 16-GPU request, allocationMode All,
// firstAvailable, admin access, a milliGPU share and a selector this
// reader does not model.
func TestAsks(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		want       []Ask
	}{
		{"gpu-test1 single-gpu", `{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}`,
			[]Ask{{Request: "gpu", Class: "gpu.nvidia.com", Type: "gpu", Count: 1}}},
		{"gpu-test8 double-gpu (v1beta1)", `{"devices":{"requests":[{"name":"gpu","deviceClassName":"gpu.nvidia.com","count":2}]}}`,
			[]Ask{{Request: "gpu", Class: "gpu.nvidia.com", Type: "gpu", Count: 2}}},
		{"gpu-test4 mig-devices", `{"devices":{"requests":[
			{"name":"mig-1g-5gb-0","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}]}},
			{"name":"mig-1g-5gb-1","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}]}},
			{"name":"mig-2g-10gb","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '2g.10gb'"}}]}},
			{"name":"mig-3g-20gb","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '3g.20gb'"}}]}}],
			"constraints":[{"requests":[],"matchAttribute":"gpu.nvidia.com/parentUUID"}]}}`,
			[]Ask{
				{Request: "mig-1g-5gb-0", Class: "mig.nvidia.com", Type: "mig", Count: 1, Profile: "1g.5gb"},
				{Request: "mig-1g-5gb-1", Class: "mig.nvidia.com", Type: "mig", Count: 1, Profile: "1g.5gb"},
				{Request: "mig-2g-10gb", Class: "mig.nvidia.com", Type: "mig", Count: 1, Profile: "2g.10gb"},
				{Request: "mig-3g-20gb", Class: "mig.nvidia.com", Type: "mig", Count: 1, Profile: "3g.20gb"},
			}},
		{"16 GPUs of a product", `{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":16,"selectors":[{"cel":{"expression":"device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA H100 80GB HBM3\""}}]}}]}}`,
			[]Ask{{Request: "gpus", Class: "gpu.nvidia.com", Type: "gpu", Count: 16, Products: []string{"NVIDIA H100 80GB HBM3"}}}},
		{"All", `{"devices":{"requests":[{"name":"all","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"All"}}]}}`,
			[]Ask{{Request: "all", Class: "gpu.nvidia.com", Type: "gpu", Count: 1, Notes: []string{"request all: allocationMode All counted as 1 device"}}}},
		{"firstAvailable", `{"devices":{"requests":[{"name":"big-or-small","firstAvailable":[
			{"name":"big","deviceClassName":"gpu.nvidia.com","count":4},{"name":"small","deviceClassName":"mig.nvidia.com"}]}]}}`,
			[]Ask{{Request: "big-or-small", Class: "gpu.nvidia.com", Type: "gpu", Count: 4, Notes: []string{"request big-or-small: firstAvailable read as its first alternative"}}}},
		{"admin access, share, other class, other CEL", `{"devices":{"requests":[
			{"name":"monitor","exactly":{"deviceClassName":"gpu.nvidia.com","adminAccess":true}},
			{"name":"half","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"milliGPU":"500"}}}},
			{"name":"nic","exactly":{"deviceClassName":"rdma.example.com"}},
			{"name":"big","exactly":{"deviceClassName":"gpu.nvidia.com","selectors":[{"cel":{"expression":"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}}]}}`,
			[]Ask{
				{Request: "monitor", Class: "gpu.nvidia.com", Type: "gpu", Count: 1, AdminAccess: true},
				{Request: "half", Class: "gpu.nvidia.com", Type: "gpu", Count: 1, MilliGPU: 500},
				{Request: "nic", Class: "rdma.example.com", Count: 1, Notes: []string{`request nic: device class "rdma.example.com" is not gpu.nvidia.com or mig.nvidia.com: not counted as GPUs`}},
				{Request: "big", Class: "gpu.nvidia.com", Type: "gpu", Count: 1, Notes: []string{`request big: selector "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0" not read (only gpu.nvidia.com attributes productName, profile and type compared with ==, joined by &&)`}},
			}},
		// NVIDIA's consumable-shares demo templates
		// (sigs.k8s.io/dra-driver-nvidia-gpu, commit 95932046,
		// demo/specs/consumable-shares): integer-sharing.yaml's and
		// unlimited-sharing.yaml's ask one plain device, counted as 1;
		// memory-sharing.yaml's asks memory 4Gi, a share counted whole;
		// a request of 2 shares (of the driver's N) is counted whole too,
		// with a Note.
		{"consumable-shares demos", `{"devices":{"requests":[
			{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}},
			{"name":"gpu4gi","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"memory":"4Gi"}}}},
			{"name":"two","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"shares":"2"}}}},
			{"name":"bad","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"shares":"0.5"}}}}]}}`,
			[]Ask{
				{Request: "gpu", Class: "gpu.nvidia.com", Type: "gpu", Count: 1},
				{Request: "gpu4gi", Class: "gpu.nvidia.com", Type: "gpu", Count: 1},
				{Request: "two", Class: "gpu.nvidia.com", Type: "gpu", Count: 1, Shares: 2, Notes: []string{"request two: capacity.requests.shares 2: its part of a GPU depends on the node's count of shares: counted as whole GPUs"}},
				{Request: "bad", Class: "gpu.nvidia.com", Type: "gpu", Count: 1, Notes: []string{`request bad: capacity.requests.shares "0.5" is not a positive integer: counted as whole GPUs`}},
			}},
	} {
		var spec ClaimSpec
		if err := json.Unmarshal([]byte(c.spec), &spec); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := Asks(spec); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	// GPUs: admin access and other classes count nothing.
	var spec ClaimSpec
	json.Unmarshal([]byte(`{"devices":{"requests":[{"name":"a","exactly":{"deviceClassName":"gpu.nvidia.com","adminAccess":true}},{"name":"b","exactly":{"deviceClassName":"x"}},{"name":"c","exactly":{"deviceClassName":"mig.nvidia.com","count":3}}]}}`), &spec)
	var n int64
	for _, a := range Asks(spec) {
		n += a.GPUs()
	}
	if n != 3 {
		t.Errorf("GPUs: %d, want 3 (the MIG request's)", n)
	}
}
