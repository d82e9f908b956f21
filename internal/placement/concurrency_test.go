// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// decision is what a policy says about one pod on one node.
type decision struct {
	score int64
	gpus  cluster.GPUSet
}

// decide scores every fitting node of c for each pod, normalises, and asks
// for the GPUs, as a scheduler does for one pod per cycle: one PreScore,
// then Score and SelectGPUs per node. Random's GPU choice draws from an rng
// seeded by pod and node, so that every caller draws the same.
func decide(pol Policy, c *cluster.Cluster, pods []cluster.Pod) [][]decision {
	out := make([][]decision, len(pods))
	for i := range pods {
		p := &pods[i]
		s := pol.PreScore(p)
		var fit []int
		var scores []int64
		for j := range c.Nodes {
			if ok, _ := cluster.Fits(&c.Nodes[j], p); ok {
				fit = append(fit, j)
				scores = append(scores, pol.Score(s, &c.Nodes[j], p))
			}
		}
		if nz, ok := pol.(Normalizer); ok && len(scores) > 0 {
			nz.NormalizeScores(scores)
		}
		out[i] = make([]decision, len(c.Nodes))
		for k, j := range fit {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(j)))
			out[i][j] = decision{scores[k], pol.SelectGPUs(s, &c.Nodes[j], p, rng)}
		}
	}
	return out
}

// TestPoliciesConcurrent runs every policy on all nodes of a small, partly
// filled cluster from 16 goroutines at once, as kube-scheduler runs Score
// for many nodes in parallel, and checks that each goroutine gets the
// sequential result. Under -race it also shows that no policy writes shared
// state.
func TestPoliciesConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var pods []cluster.Pod
	for i := 0; i < 24; i++ {
		p := cluster.Pod{CPUMilli: int64(1+rng.IntN(8)) * 1000, MemoryMiB: int64(1+rng.IntN(8)) * 2048}
		switch rng.IntN(3) {
		case 1:
			p.NumGPU, p.GPUMilli = 1, int64(50*(1+rng.IntN(19)))
		case 2:
			p.NumGPU, p.GPUMilli = 1<<rng.IntN(3), 1000
		}
		pods = append(pods, p)
	}
	tw := NewTargetWorkload(pods, 0.95)
	c := cluster.New()
	for i := 0; i < 16; i++ {
		if _, err := c.AddNode("n", 32000, 131072, []int{0, 1, 2, 4, 8}[i%5], []string{"T4", "A10", "V100M32"}[i%3]); err != nil {
			t.Fatal(err)
		}
	}
	fill := NewPlacer(BestFit{}, TieRandom, rng)
	for i := 0; i < 40; i++ {
		p := pods[rng.IntN(len(pods))]
		if n, g, ok := fill.Place(c, &p); ok {
			if err := c.Allocate(n, &p, g); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			pol, err := New(name, tw)
			if err != nil {
				t.Fatal(err)
			}
			want := decide(pol, c, pods)
			fitting := 0
			for _, row := range want {
				for _, d := range row {
					if d.score != 0 || d.gpus != 0 {
						fitting++
					}
				}
			}
			if fitting == 0 && name != "random" {
				t.Fatal("test cluster gives no non-zero decision")
			}
			got := make([][][]decision, 16)
			var wg sync.WaitGroup
			for g := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[g] = decide(pol, c, pods)
				}()
			}
			wg.Wait()
			for g := range got {
				for i := range pods {
					if !slices.Equal(got[g][i], want[i]) {
						t.Fatalf("goroutine %d, pod %d: %v, sequential %v", g, i, got[g][i], want[i])
					}
				}
			}
		})
	}
}
