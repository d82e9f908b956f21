// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import "testing"

// fill adds copies of p to n, each on the first GPUs that fit it as n
// serves it, until p fits no more, removes them all again, and returns
// how many fitted and the GPUFree seen when full.
func fill(t *testing.T, n *Node, p Pod) (int, []int64) {
	t.Helper()
	var held []GPUSet
	for Feasible(n, &p) {
		var buf Pod
		s := n.Served(&p, &buf)
		var set GPUSet
		for g := range n.GPUFree {
			if set.Count() < s.NumGPU && n.FreeAfterOK(&p, g) {
				set |= 1 << uint(g)
			}
		}
		if err := n.Add(&p, set); err != nil {
			t.Fatalf("Add %d: %v", len(held), err)
		}
		held = append(held, set)
	}
	full := append([]int64(nil), n.GPUFree...)
	if ok, why := Fits(n, &p); ok || why != "Insufficient "+p.Resource.Name() {
		t.Errorf("full: Fits = %v, %q", ok, why)
	}
	for _, set := range held {
		if err := n.Remove(&p, set); err != nil {
			t.Fatalf("Remove: %v", err)
		}
	}
	for g, f := range n.GPUFree {
		if f != MilliGPU || n.Pods != 0 {
			t.Errorf("after Remove: GPU %d free %d, %d pods", g, f, n.Pods)
		}
	}
	return len(held), full
}

// TestServedReplicas: a pod asking for nvidia.com/gpu (ResourceGPU) on a
// node whose nvidia.com/gpu devices are replicas or MIG instances
// (ReplicaMilli) holds a share of one GPU, as kube-scheduler counts the
// devices. NVIDIA's k8s-device-plugin advertises each GPU replicas
// times under time-slicing or MPS (internal/rm: buildDeviceMap then
// updateDeviceMapWithReplicas makes "replicas" annotated devices
// <uuid>::<i> of each GPU), and each MIG instance as one nvidia.com/gpu
// device under the single strategy. By hand:
//   - L4 node, 4 GPUs × 4 replicas (16 devices, ReplicaMilli 1000/4 =
//     250): 16 one-device pods fit (each 250 of one GPU, 4 per GPU, all
//     GPUs then 0 free), the 17th does not;
//   - there a 2-device pod holds 2 × 250 = 500 of one GPU: 8 fit (2 per
//     GPU), GPUs 0 free; a 5-device pod holds min(1000, 1250) = 1000, a
//     whole GPU: 4 fit;
//   - H100 node, single MIG strategy, 8 GPUs × 7 1g.10gb instances (56
//     devices, ReplicaMilli = MIGShareMilli(1) = ⌊1000/7⌋ = 142): 56
//     one-device pods fit (7 per GPU, leaving 1000 − 7 × 142 = 6), the
//     57th does not; the same with its GPUs MIG-enabled as 7 × 1g.10gb
//     (--sharing mig): a device is a 1g.10gb instance (the smallest
//     profile holding 142), 56 fit (7 held slices leave 0); 2 devices,
//     284 milli-GPU, would be a 2g.20gb instance, which the layout
//     lacks: none fit (not modelled: the device plugin gives 2
//     instances);
//   - without ReplicaMilli (gpuplane-scheduler's nodes, and every node
//     but a snapshot's of replicas) nothing changes: a plain L4 node of 4
//     GPUs fits 4 one-device pods (whole GPUs), a Shared L4 node (its
//     replicas renamed nvidia.com/gpu.shared) none.
func TestServedReplicas(t *testing.T) {
	node := func(model string, gpus int, shared, migAsGPU bool, replica int64) *Node {
		n, err := NewNode("n", model, 1000000, 1<<30, gpus)
		if err != nil {
			t.Fatal(err)
		}
		n.Shared, n.MIGAsGPU, n.ReplicaMilli = shared, migAsGPU, replica
		return &n
	}
	migNode := func() *Node {
		n := node("H100-80GB", 8, false, true, 142)
		for g := range 8 {
			if err := n.EnableMIG(g, []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	gpuPod := func(k int) Pod {
		return Pod{Name: "p", CPUMilli: 100, MemoryMiB: 100, NumGPU: k, GPUMilli: MilliGPU, Resource: ResourceGPU}
	}
	for _, tc := range []struct {
		name string
		n    *Node
		p    Pod
		fit  int
		free int64 // each GPU's free milli-GPU when full
	}{
		{"L4 4x4 replicas, 1 device", node("L4", 4, true, false, 250), gpuPod(1), 16, 0},
		{"L4 4x4 replicas, 2 devices", node("L4", 4, true, false, 250), gpuPod(2), 8, 0},
		{"L4 4x4 replicas, 5 devices", node("L4", 4, true, false, 250), gpuPod(5), 4, 0},
		{"H100 8x7 1g.10gb, 1 device", node("H100-80GB", 8, false, true, 142), gpuPod(1), 56, 6},
		{"H100 8x7 1g.10gb MIG-enabled, 1 device", migNode(), gpuPod(1), 56, 0},
		{"H100 8x7 1g.10gb MIG-enabled, 2 devices", migNode(), gpuPod(2), 0, MilliGPU},
		{"L4 whole GPUs", node("L4", 4, false, false, 0), gpuPod(1), 4, 0},
		{"L4 renamed replicas", node("L4", 4, true, false, 0), gpuPod(1), 0, MilliGPU},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, full := fill(t, tc.n, tc.p)
			if got != tc.fit {
				t.Errorf("%d pods fit, want %d", got, tc.fit)
			}
			for g, f := range full {
				if f != tc.free {
					t.Errorf("full: GPU %d free %d, want %d", g, f, tc.free)
				}
			}
		})
	}
}

// TestServedShape: Served's shape by hand (ReplicaMilli 250: a 2-device
// pod is 500 of one GPU, a ResourceShared pod on a Shared node and on a
// MIGAsGPU node ResourceAny), and it is p itself for a pod it leaves
// alone: no ReplicaMilli, another resource, a claim.
func TestServedShape(t *testing.T) {
	shared := Node{Shared: true, ReplicaMilli: 250}
	single := Node{MIGAsGPU: true, ReplicaMilli: 142}
	p := Pod{NumGPU: 2, GPUMilli: MilliGPU, Resource: ResourceGPU}
	var buf Pod
	if s := shared.Served(&p, &buf); s.NumGPU != 1 || s.GPUMilli != 500 || s.Resource != ResourceShared || p.NumGPU != 2 {
		t.Errorf("shared: %+v (p %+v)", *s, p)
	}
	if s := single.Served(&p, &buf); s.NumGPU != 1 || s.GPUMilli != 284 || s.Resource != ResourceAny {
		t.Errorf("single: %+v", *s)
	}
	if s := shared.Served(&p, &buf); shared.Served(s, &Pod{}) != s {
		t.Error("a served pod is served again")
	}
	claim, share, plain := p, Pod{NumGPU: 1, GPUMilli: 300}, Node{}
	claim.Claim = true
	for _, c := range []struct {
		n *Node
		p *Pod
	}{{&plain, &p}, {&shared, &claim}, {&shared, &share}} {
		if c.n.Served(c.p, &buf) != c.p {
			t.Errorf("%+v on %+v: served as another pod", *c.p, *c.n)
		}
	}
}

// TestMIGServed: a mixed-strategy node's device plugin serves exactly the
// profiles of its layout as nvidia.com/mig-<profile> (NVIDIA's
// k8s-device-plugin internal/rm: one resource per profile present), so
// kube-scheduler's NodeResourcesFit finds no nvidia.com/mig-7g.80gb on an
// A100 laid out as 1g.10gb, 2g.20gb and 3g.40gb. The node serves MIG
// devices of 1, 2 and 3 slices (MIGServed 0b1110); a pod's slices come
// from its share (142: 1, 285: 2, 428: 3, 1000: 7) or its profile; by
// its share, a served device fits the node's GPU (simulated whole).
func TestMIGServed(t *testing.T) {
	n, err := NewNode("a100mix", "A100-80GB", 64000, 1<<18, 2)
	if err != nil {
		t.Fatal(err)
	}
	n.MIGOnly, n.MIGServed = 0b11, 1<<1|1<<2|1<<3
	mig := func(milli int64, profile int8) *Pod {
		return &Pod{Name: "p", NumGPU: 1, GPUMilli: milli, MIGProfile: profile, Resource: ResourceMIG}
	}
	for _, tc := range []struct {
		name   string
		p      *Pod
		slices int
		serves bool
	}{
		{"1g by share", mig(142, 0), 1, true},
		{"2g by share", mig(285, 0), 2, true},
		{"3g by share", mig(428, 0), 3, true},
		{"4g by share", mig(571, 0), 4, false},
		{"7g by share", mig(1000, 0), 7, false},
		{"7g.80gb by profile", mig(1000, 7), 7, false},
		{"1g.10gb by profile", mig(142, 1), 1, true},
	} {
		if got := tc.p.MIGSlices(); got != tc.slices {
			t.Errorf("%s: %d slices, want %d", tc.name, got, tc.slices)
		}
		if got := n.Serves(tc.p); got != tc.serves {
			t.Errorf("%s: Serves %v, want %v", tc.name, got, tc.serves)
		}
		if _, fits := n.FreeAfter(tc.p, 0); tc.p.MIGProfile == 0 && fits != tc.serves {
			t.Errorf("%s: fits GPU 0 %v, want %v", tc.name, fits, tc.serves)
		}
	}
	// --sharing exclusive makes a 3g device's share a whole GPU; the
	// device it asks for stays 3 slices, which the node serves.
	p := mig(428, 0)
	p.NoteMIGDevice()
	p.GPUMilli = MilliGPU
	if p.MIGSlices() != 3 || !n.Serves(p) {
		t.Errorf("3g device under exclusive: %d slices, served %v; want 3, true", p.MIGSlices(), n.Serves(p))
	}
	n.MIGServed = 0
	if !n.Serves(mig(1000, 0)) {
		t.Errorf("MIGServed 0 (any): a 7-slice device not served")
	}
}
