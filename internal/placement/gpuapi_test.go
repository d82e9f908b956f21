// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestDRAGPUs checks the DRA allocator's rule (DRAGPUs; upstream's
// k8s.io/dynamic-resource-allocation@v0.37.2/structured/internal/incubating
// allocator.allocateOne: first free matching devices in slice order) on
// hand-worked cases, and that it differs from the policies' own choice
// where the policies pack: an 8-GPU A100 node, GPU 1 and GPU 3 held by
// pods of one GPU, GPU 0 holding a share of 200 (800 free), GPU 2 a share
// of 600 (400 free).
func TestDRAGPUs(t *testing.T) {
	mk := func() *cluster.Node {
		one := cluster.Pod{Name: "w", NumGPU: 1, GPUMilli: 1000}
		return node(t, "A100-80GB", 64000, 1<<20, 8,
			binding{one, 1 << 1}, binding{one, 1 << 3},
			binding{cluster.Pod{Name: "s2", NumGPU: 1, GPUMilli: 200}, 1 << 0},
			binding{cluster.Pod{Name: "s6", NumGPU: 1, GPUMilli: 600}, 1 << 2})
	}
	n := mk()
	for _, tc := range []struct {
		name string
		pod  cluster.Pod
		dra  cluster.GPUSet
		best cluster.GPUSet // BestFit's own choice
	}{
		// Fully free: 4, 5, 6, 7.
		{"two whole GPUs", cluster.Pod{NumGPU: 2, GPUMilli: 1000}, 1<<4 | 1<<5, 1<<4 | 1<<5},
		// 300 fits GPU 0 (800 free) and GPU 2 (400 free) and 4..7: DRA
		// takes the first, BestFit the fullest.
		{"share of 300", cluster.Pod{NumGPU: 1, GPUMilli: 300}, 1 << 0, 1 << 2},
		// 500 fits GPU 0 first, then 4..7; BestFit: GPU 0 (800) too.
		{"share of 500", cluster.Pod{NumGPU: 1, GPUMilli: 500}, 1 << 0, 1 << 0},
		// 900 fits only the free GPUs.
		{"share of 900", cluster.Pod{NumGPU: 1, GPUMilli: 900}, 1 << 4, 1 << 4},
		{"no GPU", cluster.Pod{CPUMilli: 1}, 0, 0},
	} {
		if got := DRAGPUs(n, &tc.pod); got != tc.dra {
			t.Errorf("%s: DRAGPUs = %b, want %b", tc.name, uint64(got), uint64(tc.dra))
		}
		if got := WithGPUAPI(BestFit{}, DRA).SelectGPUs(nil, n, &tc.pod, nil); got != tc.dra {
			t.Errorf("%s: bestfit under dra = %b, want %b", tc.name, uint64(got), uint64(tc.dra))
		}
		if got := (BestFit{}).SelectGPUs(nil, n, &tc.pod, nil); got != tc.best {
			t.Errorf("%s: bestfit = %b, want %b", tc.name, uint64(got), uint64(tc.best))
		}
	}
	full := mk()
	for g := 4; g < 8; g++ {
		if err := full.Add(&cluster.Pod{Name: "f", NumGPU: 1, GPUMilli: 1000}, 1<<uint(g)); err != nil {
			t.Fatal(err)
		}
	}
	if got := DRAGPUs(full, &cluster.Pod{NumGPU: 1, GPUMilli: 900}); got != 0 {
		t.Errorf("no GPU has 900 free: DRAGPUs = %b, want 0", uint64(got))
	}
}

// TestWithGPUAPI: the device-plugin API keeps the policy; DRA keeps its
// name, scores, Normalizer and UniformRandom, which the Placers read.
func TestWithGPUAPI(t *testing.T) {
	if p := WithGPUAPI(BestFit{}, DevicePlugin); p != (BestFit{}) {
		t.Errorf("device-plugin changed the policy: %T", p)
	}
	b := WithGPUAPI(BestFit{}, DRA)
	if _, ok := b.(Normalizer); !ok || b.Name() != "bestfit" {
		t.Errorf("bestfit under dra: %T %q, want a Normalizer named bestfit", b, b.Name())
	}
	if _, ok := WithGPUAPI(Random{}, DRA).(UniformRandom); !ok {
		t.Error("random under dra is not UniformRandom")
	}
	if _, ok := WithGPUAPI(GPUPacking{}, DRA).(Normalizer); ok {
		t.Error("gpupacking under dra became a Normalizer")
	}
	n := handNode(t)
	if got, want := b.Score(nil, n, &sharePod), (BestFit{}).Score(nil, n, &sharePod); got != want {
		t.Errorf("bestfit under dra scores %d, want bestfit's %d", got, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if got := WithGPUAPI(Random{}, DRA).SelectGPUs(nil, n, &sharePod, rng); got != 1<<0 {
		t.Errorf("random under dra: share on %b, want GPU 0 (400 free, first that fits)", uint64(got))
	}
	for _, a := range []string{"device-plugin", "dra"} {
		if g, err := ParseGPUAPI(a); err != nil || g.String() != a {
			t.Errorf("ParseGPUAPI(%q) = %v, %v", a, g, err)
		}
	}
	if _, err := ParseGPUAPI("csi"); err == nil {
		t.Error("ParseGPUAPI accepted csi")
	}
}
