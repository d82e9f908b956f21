// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

func newTestCluster(t *testing.T) *Cluster {
	t.Helper()
	c := New()
	for _, n := range []struct {
		cpu, mem int64
		gpus     int
		model    string
	}{{16000, 65536, 2, "T4"}, {64000, 262144, 8, "V100M32"}, {8000, 32768, 0, ""}, {32000, 131072, 4, "A10"}} {
		if _, err := c.AddNode("n", n.cpu, n.mem, n.gpus, n.model); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestAllocateRefusesOverCommit(t *testing.T) {
	c := newTestCluster(t)
	p := &Pod{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 600}
	if err := c.Allocate(0, p, 1<<0); err != nil {
		t.Fatal(err)
	}
	// 600 + 600 > 1000 on GPU 0.
	if err := c.Allocate(0, p, 1<<0); err == nil {
		t.Fatal("over-committed GPU 0")
	}
	if got := c.Nodes[0].GPUFree[0]; got != 400 {
		t.Fatalf("GPU 0 free = %d, want 400 (a refused allocation must change nothing)", got)
	}
	big := &Pod{Name: "b", CPUMilli: 15001, MemoryMiB: 1}
	if err := c.Allocate(0, big, 0); err == nil {
		t.Fatal("over-committed CPU: 1000 + 15001 > 16000")
	}
	if err := c.Allocate(0, &Pod{Name: "c", NumGPU: 2, GPUMilli: 1000}, 1<<0|1<<1); err == nil {
		t.Fatal("allocated a whole GPU that is 600 milli used")
	}
	if err := c.Allocate(0, &Pod{Name: "d", NumGPU: 1, GPUMilli: 1000}, 1<<5); err == nil {
		t.Fatal("allocated GPU 5 of a 2-GPU node")
	}
	if err := c.Allocate(2, &Pod{Name: "e", NumGPU: 1, GPUMilli: 1000}, 1<<0); err == nil {
		t.Fatal("allocated a GPU on a CPU-only node")
	}
	if err := c.Release(0, p, 1<<1); err == nil {
		t.Fatal("released 600 milli-GPU on a free GPU")
	}
}

func TestModelsRestrictNodes(t *testing.T) {
	c := newTestCluster(t)
	m, err := gpu.ParseModels("V100M32|A10")
	if err != nil {
		t.Fatal(err)
	}
	p := &Pod{NumGPU: 1, GPUMilli: 1000, Models: ModelSet(m)}
	want := []bool{false, true, false, true}
	for i := range c.Nodes {
		if got, _ := Fits(&c.Nodes[i], p); got != want[i] {
			t.Errorf("node %d (%s): Fits = %v, want %v", i, c.Nodes[i].Model, got, want[i])
		}
	}
	if err := c.Allocate(0, p, 1); err == nil {
		t.Fatal("allocated a T4 to a pod that allows V100M32|A10 only")
	}
}

// TestRandomAllocateReleaseKeepsInvariants allocates and releases at random
// and checks after every step that no resource is over-committed and that
// free + allocated = capacity.
func TestRandomAllocateReleaseKeepsInvariants(t *testing.T) {
	c := newTestCluster(t)
	rng := rand.New(rand.NewPCG(7, 7))
	type binding struct {
		node int
		pod  Pod
		gpus GPUSet
	}
	var live []binding
	for step := 0; step < 20000; step++ {
		if len(live) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(live))
			b := live[k]
			if err := c.Release(b.node, &b.pod, b.gpus); err != nil {
				t.Fatalf("step %d: release: %v", step, err)
			}
			live = append(live[:k], live[k+1:]...)
		} else {
			p := Pod{CPUMilli: int64(rng.IntN(9000)), MemoryMiB: int64(rng.IntN(40000))}
			switch rng.IntN(3) {
			case 1:
				p.NumGPU, p.GPUMilli = 1, int64(1+rng.IntN(1000))
			case 2:
				p.NumGPU, p.GPUMilli = 1<<rng.IntN(4), 1000
			}
			n := rng.IntN(len(c.Nodes))
			var g GPUSet
			for i := 0; i < c.Nodes[n].GPUs() && g.Count() < p.NumGPU; i++ {
				if rng.IntN(2) == 0 {
					g |= 1 << uint(i)
				}
			}
			before := c.Nodes[n]
			before.GPUFree = append([]int64(nil), before.GPUFree...)
			if err := c.Allocate(n, &p, g); err == nil {
				live = append(live, binding{n, p, g})
			} else {
				after := c.Nodes[n]
				if after.CPUFree != before.CPUFree || after.MemoryFree != before.MemoryFree || after.Pods != before.Pods {
					t.Fatalf("step %d: refused allocation changed the node", step)
				}
				for i := range after.GPUFree {
					if after.GPUFree[i] != before.GPUFree[i] {
						t.Fatalf("step %d: refused allocation changed GPU %d", step, i)
					}
				}
			}
		}
		checkInvariants(t, c, step)
	}
	for _, b := range live {
		if err := c.Release(b.node, &b.pod, b.gpus); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range c.Nodes {
		if n.CPUFree != n.CPUMilli || n.MemoryFree != n.MemoryMiB || n.FullyFreeGPUs() != n.GPUs() || n.Pods != 0 || n.AffinityKinds != 0 {
			t.Fatalf("node %d not empty after releasing everything: %+v", i, n)
		}
	}
}

func checkInvariants(t *testing.T, c *Cluster, step int) {
	t.Helper()
	for i, n := range c.Nodes {
		if n.CPUFree < 0 || n.CPUFree > n.CPUMilli || n.MemoryFree < 0 || n.MemoryFree > n.MemoryMiB {
			t.Fatalf("step %d: node %d CPU %d/%d memory %d/%d", step, i, n.CPUFree, n.CPUMilli, n.MemoryFree, n.MemoryMiB)
		}
		for g, f := range n.GPUFree {
			if f < 0 || f > MilliGPU {
				t.Fatalf("step %d: node %d GPU %d free %d", step, i, g, f)
			}
		}
	}
}

func TestPodValidate(t *testing.T) {
	bad := []Pod{
		{CPUMilli: -1},
		{MemoryMiB: -5},
		{NumGPU: 2, GPUMilli: 500},
		{NumGPU: 0, GPUMilli: 10},
		{NumGPU: 1, GPUMilli: 0},
		{NumGPU: 1, GPUMilli: 1001},
		{NumGPU: 65, GPUMilli: 1000},
	}
	for _, p := range bad {
		if p.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", p)
		}
	}
	if err := (&Pod{NumGPU: 8, GPUMilli: 1000}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestModelSetAllows: the zero set allows every model and no model; a set
// of models 1 and 3 (0b1010) allows those two only.
func TestModelSetAllows(t *testing.T) {
	for _, tc := range []struct {
		s    ModelSet
		id   int
		want bool
	}{{0, 5, true}, {0, -1, true}, {0b1010, 1, true}, {0b1010, 3, true}, {0b1010, 2, false}, {0b1010, -1, false}} {
		if got := tc.s.Allows(tc.id); got != tc.want {
			t.Errorf("%b.Allows(%d) = %v, want %v", uint64(tc.s), tc.id, got, tc.want)
		}
	}
}
