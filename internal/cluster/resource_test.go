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

// TestServing: a pod fits a node only as kube-scheduler serves it there
// (Node.Serving, Pod.Claim), worked out by hand. Nodes of 2 GPUs: dp
// (T4, device plugin), dra (H100, ResourceSlices only, GPU 1 in MIG mode:
// MIGOnly), ext (dra, and a DeviceClass maps nvidia.com/gpu), both (A100,
// device plugin and slices). Pods, and the nodes they fit:
//   - a claim of 1 whole GPU: dra (GPU 0 only), ext, both;
//   - a claim of 300 milli-GPU: the same, never dra's MIG-mode GPU 1;
//   - a claim of a MIG device by its share (142): dra and ext's GPU 1
//     only; both has no MIG-enabled GPU;
//   - nvidia.com/gpu: dp, ext (GPU 0), both; never dra;
//   - a trace's pod (ResourceAny, no claim): every node, every GPU.
//
// A claim that fits no node of dp says "cannot allocate all claims";
// nvidia.com/gpu on dra "Insufficient nvidia.com/gpu".
func TestServing(t *testing.T) {
	nodes := map[string]*Node{}
	for _, x := range []struct {
		name, model string
		s           GPUServing
		migOnly     GPUSet
	}{{"dp", "T4", ServedByDevicePlugin, 0}, {"dra", "H100-80GB", ServedByDRA, 0b10}, {"ext", "H100-80GB", ServedByDRAExtended, 0b10}, {"both", "A100-80GB", ServedByBoth, 0}} {
		n, err := NewNode(x.name, x.model, 64000, 1<<20, 2)
		if err != nil {
			t.Fatal(err)
		}
		n.Serving, n.MIGOnly = x.s, x.migOnly
		nodes[x.name] = &n
	}
	for _, tc := range []struct {
		name               string
		p                  Pod
		dp, dra, ext, both string // which GPUs fit, by index
	}{
		{"claim", Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGPU, Claim: true}, "00", "10", "10", "11"},
		{"claim share", Pod{NumGPU: 1, GPUMilli: 300, Claim: true}, "00", "10", "10", "11"},
		{"claim mig", Pod{NumGPU: 1, GPUMilli: 142, Resource: ResourceMIG, Claim: true}, "00", "01", "01", "00"},
		{"gpu", Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGPU}, "11", "00", "10", "11"},
		{"trace", Pod{NumGPU: 1, GPUMilli: 1000}, "11", "11", "11", "11"},
	} {
		for name, want := range map[string]string{"dp": tc.dp, "dra": tc.dra, "ext": tc.ext, "both": tc.both} {
			n := nodes[name]
			got := ""
			for g := range n.GPUFree {
				if _, ok := n.FreeAfter(&tc.p, g); ok {
					got += "1"
				} else {
					got += "0"
				}
			}
			if got != want || Feasible(n, &tc.p) != (want != "00") || n.ServesKind(&tc.p) != (want != "00") {
				t.Errorf("%s on %s: GPUs %s fit (feasible %v, serves %v), want %s", tc.name, name, got, Feasible(n, &tc.p), n.ServesKind(&tc.p), want)
			}
		}
	}
	if ok, why := Fits(nodes["dp"], &Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGPU, Claim: true}); ok || why != "cannot allocate all claims" {
		t.Errorf("claim on dp: %v %q", ok, why)
	}
	if ok, why := Fits(nodes["dra"], &Pod{NumGPU: 1, GPUMilli: 1000, Resource: ResourceGPU}); ok || why != "Insufficient nvidia.com/gpu" {
		t.Errorf("nvidia.com/gpu on dra: %v %q", ok, why)
	}
	if err := (&Pod{NumGPU: 1, GPUMilli: 500, Resource: ResourceShared, Claim: true}).Validate(); err == nil {
		t.Error("a claim of nvidia.com/gpu.shared is valid")
	}
	if k, c := (ResourceMIG | ResourceClaimed).SplitClaim(); k != ResourceMIG || !c {
		t.Errorf("SplitClaim: %d %v", k, c)
	}
}
