// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func TestSelectHost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []int64
		want   int
	}{
		{"first of three tied", []int64{3, 9, 1, 9, 9}, 1},
		{"single node", []int64{0}, 0},
		{"highest last", []int64{1, 2, 3}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SelectHost(tc.scores, TieFirst, nil); got != tc.want {
				t.Errorf("TieFirst = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("random among the tied", func(t *testing.T) {
		s := []int64{3, 9, 1, 9, 9}
		rng := rand.New(rand.NewPCG(1, 1))
		seen := map[int]int{}
		for i := 0; i < 3000; i++ {
			seen[SelectHost(s, TieRandom, rng)]++
		}
		for _, i := range []int{1, 3, 4} {
			// Each of the three tied nodes is expected 1000 times; 800 is over
			// 7 standard deviations below.
			if seen[i] < 800 {
				t.Errorf("TieRandom chose node %d %d times of 3000, want about 1000: %v", i, seen[i], seen)
			}
		}
		if len(seen) != 3 {
			t.Errorf("TieRandom chose a node without the highest score: %v", seen)
		}
	})
}

func TestParseTieBreak(t *testing.T) {
	for s, want := range map[string]TieBreak{"first": TieFirst, "random": TieRandom} {
		if got, err := ParseTieBreak(s); err != nil || got != want {
			t.Errorf("ParseTieBreak(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseTieBreak("last"); err == nil || err.Error() != `unknown tie-break "last" (first or random)` {
		t.Errorf("err = %v", err)
	}
}

// TestPlacerMemoMatchesDirectScoring places random pods on a changing
// cluster and checks that the cached scores give the same choice as scoring
// every node afresh.
func TestPlacerMemoMatchesDirectScoring(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var shapes []cluster.Pod
	for i := 0; i < 12; i++ {
		p := cluster.Pod{CPUMilli: int64(1+rng.IntN(8)) * 1000, MemoryMiB: int64(1+rng.IntN(8)) * 4096}
		switch rng.IntN(3) {
		case 1:
			p.NumGPU, p.GPUMilli = 1, int64(100*(1+rng.IntN(9)))
		case 2:
			p.NumGPU, p.GPUMilli = 1<<rng.IntN(3), 1000
		}
		shapes = append(shapes, p)
	}
	tw := NewTargetWorkload(shapes, 0.95)
	for _, name := range Names {
		if name == "random" {
			continue
		}
		pol, _ := New(name, tw)
		c := cluster.New()
		for i := 0; i < 20; i++ {
			c.AddNode("n", 32000, 131072, []int{1, 2, 4, 8}[i%4], "T4")
		}
		pl := NewPlacer(pol, TieFirst, rng)
		for step := 0; step < 300; step++ {
			p := shapes[rng.IntN(len(shapes))]
			node, gpus, ok := pl.Place(c, &p)
			// Direct: score every fitting node, normalise, take the first max.
			var cand []int
			var scores []int64
			for i := range c.Nodes {
				if ok, _ := cluster.Fits(&c.Nodes[i], &p); ok {
					cand = append(cand, i)
					scores = append(scores, pol.Score(pol.PreScore(&p), &c.Nodes[i], &p))
				}
			}
			if !ok {
				if len(cand) != 0 {
					t.Fatalf("%s step %d: Place failed with %d fitting nodes", name, step, len(cand))
				}
				continue
			}
			if nz, ok := pol.(Normalizer); ok {
				nz.NormalizeScores(scores)
			}
			if want := cand[SelectHost(scores, TieFirst, nil)]; want != node {
				t.Fatalf("%s step %d: Place chose node %d, direct scoring node %d", name, step, node, want)
			}
			if err := c.Allocate(node, &p, gpus); err != nil {
				t.Fatalf("%s step %d: %v", name, step, err)
			}
		}
	}
}

// TestPlacerRandomIsUniform: Random's node is drawn uniformly among the
// fitting nodes, whatever the tie-break.
func TestPlacerRandomIsUniform(t *testing.T) {
	c := cluster.New()
	for _, g := range []int{2, 0, 2, 2} { // node 1 has no GPUs
		if _, err := c.AddNode("n", 8000, 8192, g, "T4"); err != nil {
			t.Fatal(err)
		}
	}
	pl := NewPlacer(Random{}, TieFirst, rand.New(rand.NewPCG(9, 9)))
	seen := map[int]int{}
	for i := 0; i < 3000; i++ {
		n, _, ok := pl.Place(c, &sharePod)
		if !ok {
			t.Fatal("no node fits")
		}
		seen[n]++
	}
	// Nodes 0, 2 and 3 are expected 1000 times each; 800 is over 7 standard
	// deviations below.
	for _, i := range []int{0, 2, 3} {
		if seen[i] < 800 {
			t.Errorf("node %d chosen %d times of 3000: %v", i, seen[i], seen)
		}
	}
	if seen[1] != 0 {
		t.Errorf("chose the node without GPUs: %v", seen)
	}
}
