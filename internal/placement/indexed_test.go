// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// indexedCluster is a small cluster of few node types, so that scores tie
// often; GPU counts 0 to 8 and two models.
func indexedCluster(t *testing.T, nodes int) *cluster.Cluster {
	t.Helper()
	c := cluster.New()
	for i := 0; i < nodes; i++ {
		g := []int{8, 2, 0, 4, 1}[i%5]
		if _, err := c.AddNode(fmt.Sprint("n", i), int64(8000*(g+1)), int64(32768*(g+1)), g, []string{"T4", "V100M16"}[i/5%2]); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestIndexedPlacerMatchesPlacer places and releases random pods with
// every policy and both tie-breaks through an IndexedPlacer and, on a copy
// of the cluster, through a Placer (which scores every fitting node and
// calls SelectHost): the same node, the same GPUs and the same random
// numbers drawn, decision for decision; then both move to a new cluster.
func TestIndexedPlacerMatchesPlacer(t *testing.T) {
	shapes := []cluster.Pod{
		{CPUMilli: 1000, MemoryMiB: 4096, NumGPU: 1, GPUMilli: 300},
		{CPUMilli: 2000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 1000},
		{CPUMilli: 8000, MemoryMiB: 32768, NumGPU: 2, GPUMilli: 1000},
		{CPUMilli: 3000, MemoryMiB: 8192},
		{CPUMilli: 1000, MemoryMiB: 2048, NumGPU: 1, GPUMilli: 200}, // T4 only
	}
	t4, err := gpu.ModelID("T4")
	if err != nil {
		t.Fatal(err)
	}
	shapes[5].Models = 1 << uint(t4)
	tw := NewTargetWorkload(shapes, 1)
	for _, name := range Names {
		for _, tie := range []TieBreak{TieFirst, TieRandom} {
			t.Run(fmt.Sprintf("%s/%d", name, tie), func(t *testing.T) {
				pol, err := New(name, tw)
				if err != nil {
					t.Fatal(err)
				}
				r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
				fast, ref := NewIndexedPlacer(pol, tie, r1), NewPlacer(pol, tie, r2)
				pick := rand.New(rand.NewPCG(7, 8))
				for round := 0; round < 2; round++ {
					c1, c2 := indexedCluster(t, 37), indexedCluster(t, 37)
					type bound struct {
						node int
						pod  cluster.Pod
						gpus cluster.GPUSet
					}
					var running []bound
					for step := 0; step < 400; step++ {
						if len(running) > 0 && pick.IntN(3) == 0 {
							k := pick.IntN(len(running))
							b := running[k]
							running = append(running[:k], running[k+1:]...)
							if err := fast.Release(c1, b.node, &b.pod, b.gpus); err != nil {
								t.Fatal(err)
							}
							if err := c2.Release(b.node, &b.pod, b.gpus); err != nil {
								t.Fatal(err)
							}
							continue
						}
						p := shapes[pick.IntN(len(shapes))]
						n1, g1, ok1 := fast.Place(c1, &p)
						n2, g2, ok2 := ref.Place(c2, &p)
						if n1 != n2 || g1 != g2 || ok1 != ok2 {
							t.Fatalf("round %d step %d: indexed %d %b %v, per node %d %b %v", round, step, n1, g1, ok1, n2, g2, ok2)
						}
						if !ok1 {
							continue
						}
						if err := fast.Allocate(c1, n1, &p, g1); err != nil {
							t.Fatal(err)
						}
						if err := c2.Allocate(n2, &p, g2); err != nil {
							t.Fatal(err)
						}
						running = append(running, bound{n1, p, g1})
					}
				}
				if a, b := r1.Uint64(), r2.Uint64(); a != b {
					t.Errorf("the placers drew different random numbers: next %d, %d", a, b)
				}
			})
		}
	}
}
