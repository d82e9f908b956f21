// Package placement is gpuplane's placement core: it decides which node and
// which GPUs a pod gets. The simulator and the kube-scheduler plugins both
// call it; it works on internal/cluster state and imports nothing from
// Kubernetes.
//
// A Policy scores every node that fits a pod; the Placer picks the highest
// score, breaking ties uniformly at random as kube-scheduler's selectHost
// does, then asks the policy which GPUs of that node to use. Scores are
// integers in kube-scheduler's range [0, 100], so that policies behave as
// they do inside a real scheduler, where rounding creates ties.
package placement

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// MaxNodeScore is kube-scheduler's highest node score.
const MaxNodeScore = 100

// Policy scores nodes for a pod and chooses GPUs on the chosen node.
type Policy interface {
	// Name is the policy's command-line name, e.g. "fgd".
	Name() string
	// Score rates node n for pod p; higher is better. It is called only for
	// nodes where cluster.Fits(n, p) holds, and must depend only on n's
	// free resources and p's request (the Placer caches it by both).
	Score(n *cluster.Node, p *cluster.Pod) int64
	// SelectGPUs picks NumGPU GPUs of n for p; n fits p.
	SelectGPUs(n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet
}

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

// uniform is implemented by policies that pick a fitting node uniformly at
// random whatever the tie-break (Random).
type uniform interface {
	uniform()
}

// normalizer is implemented by policies whose raw scores are rescaled over
// the feasible nodes, as a kube-scheduler ScoreExtensions.NormalizeScore.
type normalizer interface {
	normalize(scores []int64)
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
	pl.cand, pl.scores = pl.cand[:0], pl.scores[:0]
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if !cluster.Feasible(n, p) {
			continue
		}
		e := &row[i]
		if e.version != n.Version+1 {
			e.score = pl.policy.Score(n, p)
			e.version = n.Version + 1
		}
		pl.cand = append(pl.cand, i)
		pl.scores = append(pl.scores, e.score)
	}
	if len(pl.cand) == 0 {
		return -1, 0, false
	}
	var best int
	if _, ok := pl.policy.(uniform); ok {
		best = pl.rng.IntN(len(pl.cand))
	} else {
		if nz, ok := pl.policy.(normalizer); ok {
			nz.normalize(pl.scores)
		}
		best = selectHost(pl.scores, pl.tie, pl.rng)
	}
	node = pl.cand[best]
	return node, pl.policy.SelectGPUs(&c.Nodes[node], p, pl.rng), true
}

// selectHost returns the index of the highest score; among equal highest
// scores, the first (TieFirst) or one chosen uniformly at random
// (TieRandom, kube-scheduler's selectHost).
func selectHost(scores []int64, tie TieBreak, rng *rand.Rand) int {
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

// Names lists the policy names New accepts, in the order reports use.
var Names = []string{"random", "dotproduct", "gpupacking", "gpuclustering", "bestfit", "fgd", "leastallocated", "mostallocated"}

// New returns the named policy. FGD needs the target workload tw; the
// others ignore it.
func New(name string, tw *TargetWorkload) (Policy, error) {
	switch name {
	case "random":
		return Random{}, nil
	case "dotproduct":
		return DotProduct{}, nil
	case "gpupacking":
		return GPUPacking{}, nil
	case "gpuclustering":
		return GPUClustering{}, nil
	case "bestfit":
		return BestFit{}, nil
	case "fgd":
		if tw == nil {
			return nil, fmt.Errorf("policy fgd needs a target workload")
		}
		return &FGD{Target: tw}, nil
	case "leastallocated":
		return LeastAllocated{}, nil
	case "mostallocated":
		return MostAllocated{}, nil
	}
	return nil, fmt.Errorf("unknown policy %q (known: %s, or all)", name, strings.Join(Names, ", "))
}

// ParseNames parses a comma-separated policy list; "all" means every policy.
// Duplicates are dropped; order is kept.
func ParseNames(list string) ([]string, error) {
	if strings.TrimSpace(list) == "all" {
		return append([]string(nil), Names...), nil
	}
	known := map[string]bool{}
	for _, n := range Names {
		known[n] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if !known[f] {
			return nil, fmt.Errorf("unknown policy %q (known: %s, or all)", f, strings.Join(Names, ", "))
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policy given")
	}
	sort.SliceStable(out, func(i, j int) bool { return index(out[i]) < index(out[j]) })
	return out, nil
}

func index(name string) int {
	for i, n := range Names {
		if n == name {
			return i
		}
	}
	return len(Names)
}
