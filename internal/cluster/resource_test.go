// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import "testing"

// TestResourceKinds: a pod fits only GPUs that serve its resource, as in
// Kubernetes. Node a: 4 GPUs, GPU 0 MIG-enabled as 3g.40gb + 3g.40gb, GPU
// 1 MIGOnly (MIG-enabled in the snapshot, simulated whole); node s: 2
// time-sliced GPUs (Shared). Worked out by hand:
//   - nvidia.com/gpu (1 GPU): a's GPUs 2 and 3, none of s ("Insufficient
//     nvidia.com/gpu", as kube-scheduler says of a node without it; a
//     replica on a: "Insufficient nvidia.com/gpu.shared");
//   - a 3g.40gb device (MIGProfile 5, ResourceMIG): a's GPU 0 only,
//     never a whole GPU; as a share (MIGProfile 0, a sharing mode other
//     than mig): a's GPU 1 only, the MIGOnly one (GPUs 2 and 3 have no
//     MIG: a device plugin advertises no nvidia.com/mig-3g.40gb there);
//   - a replica of 125 milli-GPU (ResourceShared): s's GPUs only;
//   - a trace's pod (ResourceAny) of 1 GPU: a's GPUs 1, 2, 3 and s's.
func TestResourceKinds(t *testing.T) {
	a, err := NewNode("a", "A100-80GB", 64000, 1<<20, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnableMIG(0, []string{"3g.40gb", "3g.40gb"}); err != nil {
		t.Fatal(err)
	}
	a.MIGOnly = 1 << 1
	s, err := NewNode("s", "T4", 64000, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Shared = true
	for _, tc := range []struct {
		name  string
		p     Pod
		a, s  string // which GPUs fit, by index
		sWhy  string
		aFits bool
	}{
		{"gpu", Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGPU}, "0011", "00", "Insufficient nvidia.com/gpu", true},
		{"gpu x 3", Pod{NumGPU: 3, GPUMilli: 1000, Resource: ResourceGPU}, "0011", "00", "", false},
		{"mig", Pod{NumGPU: 1, GPUMilli: 429, MIGProfile: 5, Resource: ResourceMIG}, "1000", "00", "", true},
		{"mig share", Pod{NumGPU: 1, GPUMilli: 428, Resource: ResourceMIG}, "0100", "00", "", true},
		{"replica", Pod{NumGPU: 1, GPUMilli: 125, Resource: ResourceShared}, "0000", "11", "", false},
		{"any", Pod{NumGPU: 1, GPUMilli: 1000}, "0111", "11", "", true},
	} {
		for _, x := range []struct {
			n    *Node
			want string
		}{{&a, tc.a}, {&s, tc.s}} {
			got := ""
			for g := range x.n.GPUFree {
				if _, ok := x.n.FreeAfter(&tc.p, g); ok {
					got += "1"
				} else {
					got += "0"
				}
			}
			if got != x.want {
				t.Errorf("%s on %s: GPUs %s fit, want %s", tc.name, x.n.Name, got, x.want)
			}
		}
		if ok := Feasible(&a, &tc.p); ok != tc.aFits {
			t.Errorf("%s: Feasible on a = %v, want %v", tc.name, ok, tc.aFits)
		}
		if ok, why := Fits(&a, &Pod{NumGPU: 1, GPUMilli: 125, Resource: ResourceShared}); ok || why != "Insufficient nvidia.com/gpu.shared" {
			t.Errorf("replica on a: %v %q", ok, why)
		}
		if tc.sWhy != "" {
			if ok, why := Fits(&s, &tc.p); ok || why != tc.sWhy {
				t.Errorf("%s on s: %v %q, want %q", tc.name, ok, why, tc.sWhy)
			}
		}
	}
}

// TestMIGDeviceNeedsMIG: a pod of a MIG device (nvidia.com/mig-3g.40gb),
// by profile or by share, never fits a node without a MIG-enabled GPU
// (a T4 has no MIG), whatever is free: Fits says "Insufficient
// nvidia.com/mig-*", as kube-scheduler names a resource the node lacks,
// and ServesKind is false; the A100 node a, with GPU 0 MIG-enabled, serves
// it; nvidia.com/gpu fits no node whose GPUs are all MIGOnly.
func TestMIGDeviceNeedsMIG(t *testing.T) {
	t4, err := NewNode("t4", "T4", 64000, 1<<20, 4)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewNode("a", "A100-80GB", 64000, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnableMIG(0, []string{"3g.40gb", "3g.40gb"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Pod{
		{NumGPU: 1, GPUMilli: 428, Resource: ResourceMIG},
		{NumGPU: 1, GPUMilli: 429, MIGProfile: 5, Resource: ResourceMIG},
		{NumGPU: 1, GPUMilli: 1000, Resource: ResourceMIG},
	} {
		if ok, why := Fits(&t4, &p); ok || why != "Insufficient nvidia.com/mig-*" || t4.ServesKind(&p) {
			t.Errorf("%+v on the T4: %v %q, serves %v", p, ok, why, t4.ServesKind(&p))
		}
		if !a.ServesKind(&p) {
			t.Errorf("%+v: the A100 with a MIG-enabled GPU does not serve it", p)
		}
	}
	t4.MIGOnly = 1<<4 - 1
	if ok, why := Fits(&t4, &Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGPU}); ok || why != "Insufficient nvidia.com/gpu" {
		t.Errorf("nvidia.com/gpu on all-MIGOnly GPUs: %v %q", ok, why)
	}
}
