// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// bruteRank ranks c's fitting nodes for p as a Placer scores them: every
// feasible node scored by the policy, sorted by score (highest first), ties
// in node order. It returns the order and how many nodes tie at the top.
func bruteRank(pol Policy, c *cluster.Cluster, p *cluster.Pod) (order []int, top int) {
	_, uniform := pol.(UniformRandom)
	st := pol.PreScore(p)
	score := map[int]int64{}
	for i := range c.Nodes {
		if !cluster.Feasible(&c.Nodes[i], p) {
			continue
		}
		order = append(order, i)
		if !uniform {
			score[i] = pol.Score(st, &c.Nodes[i], p)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	for top < len(order) && score[order[top]] == score[order[0]] {
		top++
	}
	return order, top
}

// TestRankedMatchesScores checks Ranked's whole order, for every policy and
// both tie-breaks, against every fitting node scored one by one, while
// pods are placed (Allocate), released (Release) and nodes replaced behind
// the placer's back (Changed): under TieFirst the same order; under
// TieRandom (and Random) the nodes tied at the top in some order, then the
// same order. Under TieFirst the first node is the one a Placer chooses.
func TestRankedMatchesScores(t *testing.T) {
	shapes := []cluster.Pod{
		{CPUMilli: 1000, MemoryMiB: 4096, NumGPU: 1, GPUMilli: 300},
		{CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 1000},
		{CPUMilli: 8000, MemoryMiB: 32768, NumGPU: 2, GPUMilli: 1000},
		{CPUMilli: 3000, MemoryMiB: 8192},
	}
	tw := NewTargetWorkload(shapes, 1)
	for _, name := range Names {
		for _, tie := range []TieBreak{TieFirst, TieRandom} {
			t.Run(fmt.Sprintf("%s/%d", name, tie), func(t *testing.T) {
				pol, err := New(name, tw)
				if err != nil {
					t.Fatal(err)
				}
				_, uniform := pol.(UniformRandom)
				shuffled := uniform || tie == TieRandom
				fast := NewIndexedPlacer(pol, tie, rand.New(rand.NewPCG(1, 2)))
				ref := NewPlacer(pol, TieFirst, rand.New(rand.NewPCG(1, 2)))
				c := indexedCluster(t, 37)
				pick := rand.New(rand.NewPCG(3, 4))
				for step := range 300 {
					p := shapes[pick.IntN(len(shapes))]
					got := slices.Collect(fast.Ranked(c, &p))
					want, top := bruteRank(pol, c, &p)
					if len(got) != len(want) {
						t.Fatalf("step %d: %d nodes ranked, want %d", step, len(got), len(want))
					}
					if shuffled {
						slices.Sort(got[:top])
						slices.Sort(want[:top])
					}
					if !slices.Equal(got, want) {
						t.Fatalf("step %d: ranked %v, want %v (%d tied at the top)", step, got, want, top)
					}
					if len(want) == 0 {
						continue
					}
					if n, _, _ := ref.Place(c, &p); !shuffled && n != got[0] {
						t.Fatalf("step %d: ranked first %d, Placer chose %d", step, got[0], n)
					}
					i := want[pick.IntN(len(want))]
					switch pick.IntN(4) {
					case 0: // replace node i by an empty copy of itself
						old := c.Nodes[i]
						n, err := cluster.NewNode(old.Name, "V100M16", old.CPUMilli, old.MemoryMiB, len(old.GPUFree))
						if err != nil {
							t.Fatal(err)
						}
						n.Version = old.Version + 1
						c.Nodes[i] = n
						fast.Changed(i)
						ref = NewPlacer(pol, TieFirst, rand.New(rand.NewPCG(1, 2)))
					default:
						gpus := pol.SelectGPUs(pol.PreScore(&p), &c.Nodes[i], &p, pick)
						if err := fast.Allocate(c, i, &p, gpus); err != nil {
							t.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// TestRankedTopUniform: under TieRandom each of four identical empty nodes
// comes first about a quarter of the time (4,000 draws: 1,000 each, with a
// standard deviation of 27), and every draw yields all four once.
func TestRankedTopUniform(t *testing.T) {
	c := cluster.New()
	for i := range 4 {
		if _, err := c.AddNode(fmt.Sprint("n", i), 8000, 32768, 4, "T4"); err != nil {
			t.Fatal(err)
		}
	}
	pl := NewIndexedPlacer(BestFit{}, TieRandom, rand.New(rand.NewPCG(9, 9)))
	p := cluster.Pod{CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 500}
	first := make([]int, 4)
	for range 4000 {
		got := slices.Collect(pl.Ranked(c, &p))
		first[got[0]]++
		slices.Sort(got)
		if !slices.Equal(got, []int{0, 1, 2, 3}) {
			t.Fatalf("ranked %v, want each of 0..3 once", got)
		}
	}
	for i, n := range first {
		if n < 850 || n > 1150 {
			t.Errorf("node %d first %d times of 4000, want about 1000", i, n)
		}
	}
}
