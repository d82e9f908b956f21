// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TieBreak says how the Placer chooses among nodes with the highest score.
type TieBreak int

const (
	// TieFirst takes the first such node in cluster order. The openb
	// simulator (Weng et al., USENIX ATC 2023) runs a kube-scheduler v1.20.5
	// modified this way (github.com/mental2008/kubernetes, selectHost: "for
	// reproducibility, choose the smallest lexicographical order"), over
	// nodes named in a random order; its published results depend on it,
	// since integer scores tie often.
	TieFirst TieBreak = iota
	// TieRandom chooses uniformly at random, as upstream kube-scheduler's
	// selectHost does.
	TieRandom
)

// ParseTieBreak parses "first" or "random".
func ParseTieBreak(s string) (TieBreak, error) {
	switch s {
	case "first":
		return TieFirst, nil
	case "random":
		return TieRandom, nil
	}
	return 0, fmt.Errorf("unknown tie-break %q (first or random)", s)
}

// SelectHost returns the index of the highest of scores (one per fitting
// node, in node order; at least one); among equal highest scores, the first
// (TieFirst) or one chosen uniformly at random by reservoir sampling
// (TieRandom, as kube-scheduler's selectHost). rng is used only by
// TieRandom.
func SelectHost(scores []int64, tie TieBreak, rng *rand.Rand) int {
	best, cnt := 0, 1
	for i := 1; i < len(scores); i++ {
		switch {
		case scores[i] > scores[best]:
			best, cnt = i, 1
		case scores[i] == scores[best] && tie == TieRandom:
			cnt++
			if rng.IntN(cnt) == 0 {
				best = i
			}
		}
	}
	return best
}

// Placer places pods on one cluster with one policy. It caches each node's
// score per pod shape until the node changes. Not safe for concurrent use.
type Placer struct {
	policy Policy
	tie    TieBreak
	rng    *rand.Rand
	c      *cluster.Cluster
	shapes map[cluster.Pod]int
	memo   [][]memoEntry
	cand   []int
	scores []int64
	served cluster.Pod // scratch of score and selectGPUs
}

type memoEntry struct {
	version uint64 // node version + 1; 0 means empty
	score   int64
}

// NewPlacer returns a Placer for policy that breaks ties by tie and draws
// randomness from rng.
func NewPlacer(policy Policy, tie TieBreak, rng *rand.Rand) *Placer {
	return &Placer{policy: policy, tie: tie, rng: rng, shapes: map[cluster.Pod]int{}}
}

// Policy returns the placer's policy.
func (pl *Placer) Policy() Policy { return pl.policy }

// Place chooses a node and GPUs for p on c, without allocating them. It
// returns ok=false when no node fits.
func (pl *Placer) Place(c *cluster.Cluster, p *cluster.Pod) (node int, gpus cluster.GPUSet, ok bool) {
	if pl.c != c {
		pl.c = c
		pl.shapes = map[cluster.Pod]int{}
		pl.memo = pl.memo[:0]
	}
	key := *p
	key.Name = ""
	sid, seen := pl.shapes[key]
	if !seen {
		sid = len(pl.memo)
		pl.shapes[key] = sid
		pl.memo = append(pl.memo, nil)
	}
	row := pl.memo[sid]
	if len(row) < len(c.Nodes) {
		row = append(row, make([]memoEntry, len(c.Nodes)-len(row))...)
		pl.memo[sid] = row
	}
	st := pl.policy.PreScore(p)
	_, uniform := pl.policy.(UniformRandom)
	pl.cand, pl.scores = pl.cand[:0], pl.scores[:0]
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if !cluster.Feasible(n, p) {
			continue
		}
		pl.cand = append(pl.cand, i)
		if uniform {
			continue
		}
		e := &row[i]
		if e.version != n.Version+1 {
			e.score = Score(pl.policy, st, n, p, &pl.served)
			e.version = n.Version + 1
		}
		pl.scores = append(pl.scores, e.score)
	}
	if len(pl.cand) == 0 {
		return -1, 0, false
	}
	var best int
	if uniform {
		best = pl.rng.IntN(len(pl.cand))
	} else {
		if nz, ok := pl.policy.(Normalizer); ok {
			nz.NormalizeScores(pl.scores)
		}
		best = SelectHost(pl.scores, pl.tie, pl.rng)
	}
	node = pl.cand[best]
	return node, SelectGPUs(pl.policy, st, &c.Nodes[node], p, &pl.served, pl.rng), true
}

// Score is policy's score of n for p as n serves it (cluster.Node.Served:
// nvidia.com/gpu replicas are a share of one GPU), so that every policy
// scores, and fragmentation sees, the share the pod holds there.
// buf holds the served pod (the placer's scratch: a pod on the stack
// would escape through the interface call).
// The simulator's placers and gpuplane-scheduler's Score both call it.
func Score(policy Policy, st State, n *cluster.Node, p, buf *cluster.Pod) int64 {
	return policy.Score(st, n, n.Served(p, buf))
}

// SelectGPUs is policy's choice of GPUs of n for p as n serves it
// (cluster.Node.Served): one GPU for a pod of replicas.
// The simulator's placers and gpuplane-scheduler's Reserve both call it.
func SelectGPUs(policy Policy, st State, n *cluster.Node, p, buf *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	return policy.SelectGPUs(st, n, n.Served(p, buf), rng)
}
