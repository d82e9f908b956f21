// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/testenv"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// BenchmarkPlace measures one placement decision (filter 1,213 nodes, score,
// choose) on a cluster of the openb trace's node types half filled, with the
// score cache warm as in a simulation: each op places a pod and releases it.
func BenchmarkPlace(b *testing.B) {
	for _, name := range []string{"fgd", "bestfit"} {
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			c := cluster.New()
			for i := 0; i < 1213; i++ {
				g := []int{8, 2, 2, 8, 4}[i%5]
				c.AddNode("n", int64(16000*g), int64(65536*g), g, []string{"G2", "T4", "P100", "G3", "V100M16"}[i%5])
			}
			shapes := []cluster.Pod{
				{CPUMilli: 3152, MemoryMiB: 5600, NumGPU: 1, GPUMilli: 810},
				{CPUMilli: 11300, MemoryMiB: 49152, NumGPU: 1, GPUMilli: 1000},
				{CPUMilli: 11908, MemoryMiB: 47104, NumGPU: 1, GPUMilli: 470},
				{CPUMilli: 12500, MemoryMiB: 57344},
				{CPUMilli: 64200, MemoryMiB: 263168, NumGPU: 8, GPUMilli: 1000},
			}
			tw := NewTargetWorkload(shapes, 1)
			pol, _ := New(name, tw)
			pl := NewPlacer(pol, TieFirst, rng)
			for free := c.FreeGPUMilli(); free > c.TotalGPUMilli()/2; free = c.FreeGPUMilli() {
				p := shapes[rng.IntN(4)]
				n, g, ok := pl.Place(c, &p)
				if !ok {
					break
				}
				c.Allocate(n, &p, g)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := shapes[i%len(shapes)]
				n, g, ok := pl.Place(c, &p)
				if ok {
					c.Allocate(n, &p, g)
					c.Release(n, &p, g)
				}
			}
		})
	}
}

// BenchmarkIndexedPlace is BenchmarkPlace's decision with the IndexedPlacer
// and with the per-node Placer on clusters of the openb node types at 1 and
// 40 times the trace's 1,213 nodes: the IndexedPlacer's time should barely
// grow with the node count, the Placer's about 40-fold.
func BenchmarkIndexedPlace(b *testing.B) {
	shapes := []cluster.Pod{
		{CPUMilli: 3152, MemoryMiB: 5600, NumGPU: 1, GPUMilli: 810},
		{CPUMilli: 11300, MemoryMiB: 49152, NumGPU: 1, GPUMilli: 1000},
		{CPUMilli: 11908, MemoryMiB: 47104, NumGPU: 1, GPUMilli: 470},
		{CPUMilli: 12500, MemoryMiB: 57344},
		{CPUMilli: 64200, MemoryMiB: 263168, NumGPU: 8, GPUMilli: 1000},
	}
	tw := NewTargetWorkload(shapes, 1)
	for _, nodes := range []int{1213, 48520} {
		for _, kind := range []string{"indexed", "pernode"} {
			b.Run(fmt.Sprintf("fgd/%d/%s", nodes, kind), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				c := cluster.New()
				for i := 0; i < nodes; i++ {
					g := []int{8, 2, 2, 8, 4}[i%5]
					c.AddNode("n", int64(16000*g), int64(65536*g), g, []string{"G2", "T4", "P100", "G3", "V100M16"}[i%5])
				}
				pol, _ := New("fgd", tw)
				var place func(p *cluster.Pod) (int, cluster.GPUSet, bool)
				var alloc, release func(n int, p *cluster.Pod, g cluster.GPUSet) error
				if kind == "indexed" {
					pl := NewIndexedPlacer(pol, TieFirst, rng)
					place = func(p *cluster.Pod) (int, cluster.GPUSet, bool) { return pl.Place(c, p) }
					alloc = func(n int, p *cluster.Pod, g cluster.GPUSet) error { return pl.Allocate(c, n, p, g) }
					release = func(n int, p *cluster.Pod, g cluster.GPUSet) error { return pl.Release(c, n, p, g) }
				} else {
					pl := NewPlacer(pol, TieFirst, rng)
					place = func(p *cluster.Pod) (int, cluster.GPUSet, bool) { return pl.Place(c, p) }
					alloc, release = c.Allocate, c.Release
				}
				// Half of each node's GPUs hold a shared-GPU pod, bound
				// before the placers first look at the cluster.
				for i := range c.Nodes {
					for g := 0; g < c.Nodes[i].GPUs()/2; g++ {
						c.Allocate(i, &shapes[(i+g)%3], 1<<uint(g))
					}
				}
				for i := range shapes {
					place(&shapes[i]) // warm: the IndexedPlacer builds its trees
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p := shapes[i%len(shapes)]
					n, g, ok := place(&p)
					if ok {
						alloc(n, &p, g)
						release(n, &p, g)
					}
				}
			})
		}
	}
}

// BenchmarkScore is one Score call on one node, what a kube-scheduler
// Score plugin pays per node and pod: the openb trace's 1,213 GPU nodes,
// filled by FGD with the default pod list's pods in a random order until
// half the GPU capacity is allocated, then scored by FGD and FGDCM for a
// GPU-sharing pod, a whole-GPU pod and a CPU-only pod (the list's most
// frequent shapes), with the default list's target workload (popularity
// 0.95). Each op scores the next fitting node.
func BenchmarkScore(b *testing.B) {
	nodes, err := trace.ReadNodesFile(testenv.Openb(b, "openb_node_list_gpu_node.csv"))
	if err != nil {
		b.Fatal(err)
	}
	specs, err := trace.ReadPodsFile(testenv.Openb(b, "openb_pod_list_default.csv"))
	if err != nil {
		b.Fatal(err)
	}
	pods := make([]cluster.Pod, len(specs))
	for i, s := range specs {
		pods[i] = cluster.Pod{CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, NumGPU: int(s.NumGPU), GPUMilli: int64(s.GPUMilli)}
	}
	tw := NewTargetWorkload(pods, 0.95)
	c := cluster.New()
	for _, n := range nodes {
		c.AddNode(n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	fgd, _ := New("fgd", tw)
	pl := NewPlacer(fgd, TieFirst, rng)
	for _, i := range rng.Perm(len(pods)) {
		if c.FreeGPUMilli() <= c.TotalGPUMilli()/2 {
			break
		}
		if n, g, ok := pl.Place(c, &pods[i]); ok {
			c.Allocate(n, &pods[i], g)
		}
	}
	for _, name := range []string{"fgd", "fgdcm"} {
		pol, _ := New(name, tw)
		for _, shape := range []struct {
			name string
			pod  cluster.Pod
		}{
			{"share810", cluster.Pod{CPUMilli: 3152, MemoryMiB: 5600, NumGPU: 1, GPUMilli: 810}},
			{"whole1", cluster.Pod{CPUMilli: 11300, MemoryMiB: 49152, NumGPU: 1, GPUMilli: 1000}},
			{"cpu", cluster.Pod{CPUMilli: 12500, MemoryMiB: 57344}},
		} {
			b.Run(name+"/"+shape.name, func(b *testing.B) {
				p := shape.pod
				var fit []*cluster.Node
				for i := range c.Nodes {
					if cluster.Feasible(&c.Nodes[i], &p) {
						fit = append(fit, &c.Nodes[i])
					}
				}
				if len(fit) == 0 {
					b.Fatal("no node fits")
				}
				s := pol.PreScore(&p)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					pol.Score(s, fit[i%len(fit)], &p)
				}
			})
		}
	}
}
