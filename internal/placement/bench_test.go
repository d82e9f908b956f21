package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
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
