// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"container/heap"
	"iter"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// Changed notes that node i of the cluster the placer last worked on
// changed other than through Allocate or Release: the caller replaced or
// edited c.Nodes[i], and gave it a Version it did not have before the
// change (the trees rescore a noted node only when its Version moved).
func (pl *IndexedPlacer) Changed(i int) { pl.log = append(pl.log, int32(i)) }

// Ranked yields the nodes of c that fit p, best first, each in O(log n):
// highest score first, ties in node order (TieFirst), so that the first is
// the node Place chooses. Under TieRandom, and for UniformRandom policies
// (every fitting node ties at 0), the nodes tied at the highest score come
// first in a uniformly random order drawn from the placer's rng, so that
// the first has Place's distribution (not its random numbers); the nodes
// below follow in score order, ties in node order. Scores are raw: a
// Normalizer's rescaling keeps their order (ties may merge), and its
// highest nodes are the raw highest.
//
// Like Place, Ranked sees changes made through Allocate, Release and
// Changed; the sequence is valid until the cluster next changes.
func (pl *IndexedPlacer) Ranked(c *cluster.Cluster, p *cluster.Pod) iter.Seq[int] {
	return func(yield func(int) bool) {
		t := pl.tree(c, p, pl.policy.PreScore(p))
		if t.count[1] == 0 {
			return
		}
		best := t.top[1]
		shuffled := pl.uniform || pl.tie == TieRandom
		if shuffled && !pl.shuffleTop(t, yield) {
			return
		}
		h := &rankHeap{t: t, e: []rankEntry{{x: 1, lo: 0, span: t.size}}}
		for h.Len() > 0 {
			e := heap.Pop(h).(rankEntry)
			if e.span == 1 {
				if shuffled && t.top[e.x] == best {
					continue // yielded by shuffleTop
				}
				if !yield(e.lo) {
					return
				}
				continue
			}
			half := e.span / 2
			for _, ch := range []rankEntry{{x: 2 * e.x, lo: e.lo, span: half}, {x: 2*e.x + 1, lo: e.lo + half, span: half}} {
				if t.top[ch.x] != noFit {
					heap.Push(h, ch)
				}
			}
		}
	}
}

// shuffleTop yields the nodes tied at t's highest value in a uniformly
// random order: a Fisher-Yates shuffle of their ranks, kept sparse, each
// rank found with nth. It returns false when yield asked to stop.
func (pl *IndexedPlacer) shuffleTop(t *shapeTree, yield func(int) bool) bool {
	n := int(t.count[1])
	moved := map[int]int{} // rank position -> rank it holds, where moved
	at := func(i int) int {
		if v, ok := moved[i]; ok {
			return v
		}
		return i
	}
	for i := range n {
		j := i + pl.rng.IntN(n-i)
		vi, vj := at(i), at(j)
		moved[j] = vi
		if !yield(t.nth(vj)) {
			return false
		}
	}
	return true
}

// rankEntry is a range of the tree's leaves: tree node x, covering leaves
// [lo, lo+span).
type rankEntry struct{ x, lo, span int }

// rankHeap orders ranges by their highest value, then by first leaf: a
// range comes before every range below it, so leaves pop best first, ties
// in node order.
type rankHeap struct {
	t *shapeTree
	e []rankEntry
}

func (h *rankHeap) Len() int { return len(h.e) }
func (h *rankHeap) Less(i, j int) bool {
	a, b := h.t.top[h.e[i].x], h.t.top[h.e[j].x]
	return a > b || a == b && h.e[i].lo < h.e[j].lo
}
func (h *rankHeap) Swap(i, j int) { h.e[i], h.e[j] = h.e[j], h.e[i] }
func (h *rankHeap) Push(x any)    { h.e = append(h.e, x.(rankEntry)) }
func (h *rankHeap) Pop() any {
	x := h.e[len(h.e)-1]
	h.e = h.e[:len(h.e)-1]
	return x
}
