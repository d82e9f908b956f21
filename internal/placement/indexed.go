// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// IndexedPlacer makes exactly the choices of a Placer with the same policy,
// tie-break and rng, drawing the same random numbers in the same order, at
// a cost per placement that grows with the logarithm of the node count
// rather than the node count, for simulations of large clusters.
//
// For each pod shape it keeps every node's score (or "does not fit") in a
// segment tree over node order that holds, per range, the highest score
// and how many nodes have it. A node is scored again for a shape only when
// a pod of that shape is placed after the node changed, as Placer's cache
// does; the tree then finds the first node with the highest score (TieFirst),
// replays SelectHost's reservoir draws record by record (TieRandom), or
// finds the k-th fitting node (UniformRandom policies), each in O(log n).
//
// Every change to the cluster given to Place must go through Allocate or
// Release, which note the changed node (a Placer is the one to use when
// something else changes the cluster). A policy that is a Normalizer with
// TieRandom is placed by a Placer inside, node by node. Not safe for
// concurrent use.
type IndexedPlacer struct {
	policy  Policy
	tie     TieBreak
	rng     *rand.Rand
	uniform bool
	slow    *Placer // Normalizer with TieRandom

	c      *cluster.Cluster
	nodes  int     // len(c.Nodes) when the trees were built
	log    []int32 // nodes changed through Allocate and Release, in order
	shapes map[cluster.Pod]*shapeTree
	served cluster.Pod // scratch of score and selectGPUs
}

// noFit is the tree value of a node the shape does not fit.
const noFit = math.MinInt64

// shapeTree is one pod shape's scores of every node.
type shapeTree struct {
	synced  int      // prefix of IndexedPlacer.log applied
	version []uint64 // node version + 1 each leaf was computed at
	size    int      // leaves: a power of two at least the node count
	top     []int64  // per tree node: the highest value below it
	count   []int32  // per tree node: how many leaves have it (0 for noFit)
}

// NewIndexedPlacer returns an IndexedPlacer for policy that breaks ties by
// tie and draws randomness from rng.
func NewIndexedPlacer(policy Policy, tie TieBreak, rng *rand.Rand) *IndexedPlacer {
	pl := &IndexedPlacer{policy: policy, tie: tie, rng: rng}
	_, pl.uniform = policy.(UniformRandom)
	if _, nz := policy.(Normalizer); nz && tie == TieRandom && !pl.uniform {
		pl.slow = NewPlacer(policy, tie, rng)
	}
	return pl
}

// Policy returns the placer's policy.
func (pl *IndexedPlacer) Policy() Policy { return pl.policy }

// Allocate binds p to node i of c on gpus as the policy places it
// (Allocate: a MIG instance at the policy's start) and notes the change.
func (pl *IndexedPlacer) Allocate(c *cluster.Cluster, i int, p *cluster.Pod, gpus cluster.GPUSet) error {
	if err := Allocate(pl.policy, c, i, p, gpus); err != nil {
		return err
	}
	pl.log = append(pl.log, int32(i))
	return nil
}

// Release returns p's resources to node i of c (cluster.Cluster.Release)
// and notes the change.
func (pl *IndexedPlacer) Release(c *cluster.Cluster, i int, p *cluster.Pod, gpus cluster.GPUSet) error {
	if err := c.Release(i, p, gpus); err != nil {
		return err
	}
	pl.log = append(pl.log, int32(i))
	return nil
}

// Place chooses a node and GPUs for p on c, without allocating them: the
// choice Placer.Place makes. It returns ok=false when no node fits.
func (pl *IndexedPlacer) Place(c *cluster.Cluster, p *cluster.Pod) (node int, gpus cluster.GPUSet, ok bool) {
	if pl.slow != nil {
		return pl.slow.Place(c, p)
	}
	st := pl.policy.PreScore(p)
	t := pl.tree(c, p, st)
	if t.count[1] == 0 {
		return -1, 0, false
	}
	best := t.top[1]
	switch {
	case pl.uniform:
		node = t.nth(pl.rng.IntN(int(t.count[1])))
	case pl.tie != TieRandom:
		node = t.nth(0)
	default:
		node = t.nth(pl.reservoir(t, best))
	}
	return node, SelectGPUs(pl.policy, st, &c.Nodes[node], p, &pl.served, pl.rng), true
}

// tree returns p's shape tree over c, brought up to date with the changes
// noted since its last use.
func (pl *IndexedPlacer) tree(c *cluster.Cluster, p *cluster.Pod, st State) *shapeTree {
	if pl.c != c || pl.nodes != len(c.Nodes) {
		pl.c, pl.nodes, pl.log, pl.shapes = c, len(c.Nodes), pl.log[:0], map[cluster.Pod]*shapeTree{}
	}
	key := *p
	key.Name = ""
	t := pl.shapes[key]
	if t == nil {
		t = pl.build(c, p, st)
		pl.shapes[key] = t
	} else {
		for _, i := range pl.log[t.synced:] {
			if n := &c.Nodes[i]; t.version[i] != n.Version+1 {
				t.version[i] = n.Version + 1
				t.set(int(i), pl.value(st, n, p))
			}
		}
	}
	t.synced = len(pl.log)
	return t
}

// value is node n's tree value for p: its score, or noFit.
func (pl *IndexedPlacer) value(st State, n *cluster.Node, p *cluster.Pod) int64 {
	if !cluster.Feasible(n, p) {
		return noFit
	}
	if pl.uniform {
		return 0
	}
	return Score(pl.policy, st, n, p, &pl.served)
}

// reservoir makes SelectHost's TieRandom draws over every fitting node in
// node order and returns which of the nodes with the highest score (from
// 0, in node order) it chooses. SelectHost draws rng.IntN(cnt) at every
// node that ties the highest score seen so far, cnt counting those nodes;
// the highest score so far rises at record nodes, found one after another
// in the tree, and the nodes that tie a record before the next record are
// counted there.
func (pl *IndexedPlacer) reservoir(t *shapeTree, best int64) int {
	f := t.firstAbove(0, noFit)
	rec := t.top[t.size+f]
	for rec < best {
		g := t.firstAbove(f+1, rec)
		ties := t.countOf(rec, f, g)
		for n := 2; n <= ties; n++ {
			pl.rng.IntN(n)
		}
		f, rec = g, t.top[t.size+g]
	}
	pick := 0
	for n := 2; n <= int(t.count[1]); n++ {
		if pl.rng.IntN(n) == 0 {
			pick = n - 1
		}
	}
	return pick
}

// build scores every node of c for p into a new tree.
func (pl *IndexedPlacer) build(c *cluster.Cluster, p *cluster.Pod, st State) *shapeTree {
	size := 1
	for size < len(c.Nodes) {
		size *= 2
	}
	t := &shapeTree{version: make([]uint64, len(c.Nodes)), size: size, top: make([]int64, 2*size), count: make([]int32, 2*size)}
	for i := range t.top[size:] {
		t.top[size+i] = noFit
	}
	// Nodes in the same state score alike: score each state once. A pod
	// with Kubernetes' own filters (cluster.NodeFilter) also reads a
	// node's name, labels and taints, which stateKey leaves out: score
	// each node.
	memo := map[string]int64{}
	var key []byte
	for i := range c.Nodes {
		n := &c.Nodes[i]
		t.version[i] = n.Version + 1
		key = stateKey(key[:0], n)
		v, ok := memo[string(key)]
		if !ok || p.Filter != nil {
			v = pl.value(st, n, p)
			memo[string(key)] = v
		}
		if v != noFit {
			t.top[size+i], t.count[size+i] = v, 1
		}
	}
	for k := size - 1; k >= 1; k-- {
		t.pull(k)
	}
	return t
}

// pull recomputes tree node k from its children.
func (t *shapeTree) pull(k int) {
	l, r := 2*k, 2*k+1
	switch {
	case t.top[l] > t.top[r]:
		t.top[k], t.count[k] = t.top[l], t.count[l]
	case t.top[l] < t.top[r]:
		t.top[k], t.count[k] = t.top[r], t.count[r]
	default:
		t.top[k], t.count[k] = t.top[l], t.count[l]+t.count[r]
	}
}

// set sets leaf i to v.
func (t *shapeTree) set(i int, v int64) {
	k := t.size + i
	t.top[k], t.count[k] = v, 0
	if v != noFit {
		t.count[k] = 1
	}
	for k /= 2; k >= 1; k /= 2 {
		t.pull(k)
	}
}

// nth returns the k-th (from 0) leaf with the highest value.
func (t *shapeTree) nth(k int) int {
	best, x := t.top[1], 1
	for x < t.size {
		l := 2 * x
		if t.top[l] == best {
			if k < int(t.count[l]) {
				x = l
				continue
			}
			k -= int(t.count[l])
		}
		x = l + 1
	}
	return x - t.size
}

// firstAbove returns the first leaf at or after from whose value exceeds v,
// or t.size when there is none.
func (t *shapeTree) firstAbove(from int, v int64) int {
	return t.firstAboveIn(1, 0, t.size, from, v)
}

func (t *shapeTree) firstAboveIn(x, lo, hi, from int, v int64) int {
	if hi <= from || t.top[x] <= v {
		return t.size
	}
	if x >= t.size {
		return lo
	}
	mid := (lo + hi) / 2
	if i := t.firstAboveIn(2*x, lo, mid, from, v); i < t.size {
		return i
	}
	return t.firstAboveIn(2*x+1, mid, hi, from, v)
}

// countOf returns how many leaves in [from, to) have value v, where no leaf
// there exceeds v.
func (t *shapeTree) countOf(v int64, from, to int) int {
	n := 0
	for l, r := from+t.size, to+t.size; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			if t.top[l] == v {
				n += int(t.count[l])
			}
			l++
		}
		if r&1 == 1 {
			r--
			if t.top[r] == v {
				n += int(t.count[r])
			}
		}
	}
	return n
}

// stateKey appends to b what Feasible and a policy may read of n: all but
// its name, pod count and version, and its labels, taints and cordon,
// which only a pod's Filter reads (build scores such a pod node by node).
func stateKey(b []byte, n *cluster.Node) []byte {
	b = binary.AppendVarint(b, int64(n.ModelID))
	b = binary.AppendVarint(b, n.CPUMilli)
	b = binary.AppendVarint(b, n.MemoryMiB)
	b = binary.AppendVarint(b, n.CPUFree)
	b = binary.AppendVarint(b, n.MemoryFree)
	b = binary.AppendUvarint(b, uint64(len(n.GPUFree)))
	for _, f := range n.GPUFree {
		b = binary.AppendVarint(b, f)
	}
	b = binary.AppendUvarint(b, uint64(n.MIGGPUs))
	b = binary.AppendUvarint(b, uint64(n.MIGOnly))
	var serves byte
	if n.Shared {
		serves |= 1
	}
	if n.MIGAsGPU {
		serves |= 2
	}
	b = append(b, serves)
	b = binary.AppendVarint(b, n.ReplicaMilli)
	b = append(b, byte(n.Serving))
	for _, m := range n.MIG {
		for k := range m.Free {
			b = append(b, byte(m.Free[k]), byte(m.Held[k]))
		}
		b = append(b, m.Slots) // MIG on demand (cluster.MIGGPU.Dynamic)
	}
	for _, a := range n.Affinity {
		b = binary.AppendVarint(b, int64(a))
	}
	return binary.AppendVarint(b, int64(n.AffinityKinds))
}
