// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package kueue is Kueue's quota admission for the simulator: one
// ClusterQueue per team in one Cohort, a quota per team and GPU model
// (ResourceFlavor), and Kueue's classic preemption. It decides which
// workloads may hold quota; where their pods run is the placement core's
// job. It is pure and imports no Kubernetes package.
//
// Semantics, from Kueue's documentation and source (sigs.k8s.io/kueue
// v0.17.0 pkg/scheduler, pkg/scheduler/preemption), checked against a
// running Kueue (internal/sim/engine TestSimulatorAgreesWithKueue):
//   - https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/ ("Resources",
//     "Cohort", "BorrowingLimit", "LendingLimit"): a ClusterQueue may use
//     its nominal quota plus what it borrows from the unused quota of the
//     Cohort, at most borrowingLimit beyond nominal; a ClusterQueue lends
//     at most lendingLimit of its nominal quota, the rest (nominal −
//     lendingLimit) is only its own.
//   - https://kueue.sigs.k8s.io/docs/concepts/preemption/ ("Classic
//     Preemption"): candidates are the preemptor's ClusterQueue's
//     workloads of lower priority (withinClusterQueue: LowerPriority) and
//     workloads of other ClusterQueues of the Cohort that are borrowing
//     (usage above nominal): any of them when the preemptor stays within
//     its nominal quota (reclaimWithinCohort: Any), else only those of
//     lower priority (borrowWithinCohort: LowerPriority). They are sorted:
//     other ClusterQueues' first, lowest priority first, most recently
//     admitted first; taken greedily until the preemptor fits, skipping a
//     workload whose ClusterQueue no longer borrows; then the targets are
//     walked in reverse and each is kept running if the preemptor still
//     fits with it (minimal set). Kueue breaks a tie of admission time
//     (whole seconds) by UID; here admission order decides.
//   - pkg/scheduler/scheduler.go (makeClassicalIterator): one cycle's
//     heads are tried within-nominal first, then by priority, then oldest
//     (OrderHeads).
//
// Quantities are milli-GPU (1000 = one whole GPU): a pod of n GPUs of m
// milli-GPU each uses n·m of its team's quota of its model.
package kueue

import (
	"fmt"
	"sort"
)

// Quota is one ClusterQueue's quota of one flavor, in milli-GPU.
// BorrowingLimit and LendingLimit are nil when unlimited.
type Quota struct {
	Nominal                      int64
	BorrowingLimit, LendingLimit *int64
}

// Queue is one ClusterQueue: a team, its workloads' priority and its
// quota of each flavor (Quotas[f] for flavor f; a zero Quota for a flavor
// it has none of).
type Queue struct {
	Name     string
	Priority int
	Quotas   []Quota
}

// Workload is what is admitted or preempted as a whole: one pod, or every
// pod of a gang. Milli is its total request in milli-GPU of Flavor.
type Workload struct {
	ID       int
	Queue    int
	Flavor   int
	Milli    int64
	Priority int
}

type admitted struct {
	w   Workload
	seq uint64
}

// Cohort is the quota state of every ClusterQueue of one Cohort.
type Cohort struct {
	queues  []Queue
	flavors int
	// usage[f][q] is queue q's admitted milli-GPU of flavor f.
	usage [][]int64
	// running[f] holds the admitted workloads of flavor f by ID.
	running []map[int]admitted
	seq     uint64
}

// New returns an empty Cohort of queues over flavors flavors. A quota's
// limits must be non-negative and LendingLimit at most Nominal.
func New(queues []Queue, flavors int) (*Cohort, error) {
	c := &Cohort{queues: queues, flavors: flavors, usage: make([][]int64, flavors), running: make([]map[int]admitted, flavors)}
	for f := range flavors {
		c.usage[f] = make([]int64, len(queues))
		c.running[f] = map[int]admitted{}
	}
	for _, q := range queues {
		if len(q.Quotas) != flavors {
			return nil, fmt.Errorf("queue %s: %d quotas for %d flavors", q.Name, len(q.Quotas), flavors)
		}
		for _, qu := range q.Quotas {
			if qu.Nominal < 0 || (qu.BorrowingLimit != nil && *qu.BorrowingLimit < 0) || (qu.LendingLimit != nil && (*qu.LendingLimit < 0 || *qu.LendingLimit > qu.Nominal)) {
				return nil, fmt.Errorf("queue %s: bad quota %+v", q.Name, qu)
			}
		}
	}
	return c, nil
}

// Usage returns queue q's admitted milli-GPU of flavor f.
func (c *Cohort) Usage(q, f int) int64 { return c.usage[f][q] }

// Borrowing reports whether queue q uses more of flavor f than its
// nominal quota.
func (c *Cohort) Borrowing(q, f int) bool { return c.usage[f][q] > c.queues[q].Quotas[f].Nominal }

// guaranteed is the part of queue q's nominal quota of f that it does not
// lend.
func (c *Cohort) guaranteed(q, f int) int64 {
	qu := c.queues[q].Quotas[f]
	if qu.LendingLimit == nil {
		return 0
	}
	return qu.Nominal - *qu.LendingLimit
}

// fits reports whether queue q may use use[q]+milli of flavor f, the other
// queues using use.
func (c *Cohort) fits(use []int64, q, f int, milli int64) bool {
	qu := c.queues[q].Quotas[f]
	after := use[q] + milli
	if qu.BorrowingLimit != nil && after > qu.Nominal+*qu.BorrowingLimit {
		return false
	}
	// The cohort's shared pool is what each queue lends; each queue draws
	// from it what it uses beyond its guaranteed part.
	var pool, drawn int64
	for i := range c.queues {
		g := c.guaranteed(i, f)
		pool += c.queues[i].Quotas[f].Nominal - g
		u := use[i]
		if i == q {
			u = after
		}
		drawn += max(0, u-g)
	}
	return drawn <= pool
}

// Fits reports whether w can be admitted now without preemption.
func (c *Cohort) Fits(w Workload) bool { return c.fits(c.usage[w.Flavor], w.Queue, w.Flavor, w.Milli) }

// Admit records w as admitted; the caller has checked Fits (or preempted
// Targets first).
func (c *Cohort) Admit(w Workload) {
	c.seq++
	c.usage[w.Flavor][w.Queue] += w.Milli
	c.running[w.Flavor][w.ID] = admitted{w: w, seq: c.seq}
}

// Release frees the quota of admitted workload id of flavor f (it finished
// or was preempted); false if it was not admitted.
func (c *Cohort) Release(id, f int) bool {
	a, ok := c.running[f][id]
	if !ok {
		return false
	}
	delete(c.running[f], id)
	c.usage[f][a.w.Queue] -= a.w.Milli
	return true
}

// Targets returns the admitted workloads whose preemption lets w be
// admitted, by Kueue's classic preemption (see the package comment), in
// the order they were chosen; ok is false when no set of candidates
// does. It changes nothing: the caller releases the targets, then admits w.
func (c *Cohort) Targets(w Workload) (ids []int, ok bool) {
	f, q := w.Flavor, w.Queue
	nominal := c.queues[q].Quotas[f].Nominal
	withinNominal := c.usage[f][q]+w.Milli <= nominal
	var cands []admitted
	for _, a := range c.running[f] {
		switch {
		case a.w.Queue == q:
			if a.w.Priority < w.Priority {
				cands = append(cands, a)
			}
		case c.Borrowing(a.w.Queue, f) && (withinNominal || a.w.Priority < w.Priority):
			cands = append(cands, a)
		}
	}
	if len(cands) == 0 {
		return nil, false
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if ao, bo := a.w.Queue != q, b.w.Queue != q; ao != bo {
			return ao
		}
		if a.w.Priority != b.w.Priority {
			return a.w.Priority < b.w.Priority
		}
		return a.seq > b.seq
	})
	use := append([]int64(nil), c.usage[f]...)
	var targets []admitted
	fit := false
	for _, a := range cands {
		if a.w.Queue != q && use[a.w.Queue] <= c.queues[a.w.Queue].Quotas[f].Nominal {
			continue // its queue no longer borrows
		}
		use[a.w.Queue] -= a.w.Milli
		targets = append(targets, a)
		if c.fits(use, q, f, w.Milli) {
			fit = true
			break
		}
	}
	if !fit {
		return nil, false
	}
	// Minimal set: walk back and keep each target that need not go.
	kept := targets[:0:0]
	for i := len(targets) - 1; i >= 0; i-- {
		a := targets[i]
		use[a.w.Queue] += a.w.Milli
		if c.fits(use, q, f, w.Milli) {
			continue
		}
		use[a.w.Queue] -= a.w.Milli
		kept = append(kept, a)
	}
	for i := len(kept) - 1; i >= 0; i-- {
		ids = append(ids, kept[i].w.ID)
	}
	return ids, true
}

// Borrows reports whether admitting w would take its queue's usage of its
// flavor above its nominal quota (Kueue's flavorassigner
// Assignment.Borrows).
func (c *Cohort) Borrows(w Workload) bool {
	return c.usage[w.Flavor][w.Queue]+w.Milli > c.queues[w.Queue].Quotas[w.Flavor].Nominal
}

// Head is a queue's head workload in one scheduling cycle: Borrows
// whether its admission would borrow, its priority, and Order its place
// in arrival order (creation, then arrival).
type Head struct {
	ID       int
	Borrows  bool
	Priority int
	Order    int
}

// OrderHeads sorts one cycle's heads in the order Kueue's scheduler tries
// them (sigs.k8s.io/kueue v0.17.0 pkg/scheduler/scheduler.go
// makeClassicalIterator, without fair sharing): heads that fit within
// nominal quota before heads that must borrow, then higher priority
// (PrioritySortingWithinCohort, on by default), then the older first.
func OrderHeads(heads []Head) {
	sort.SliceStable(heads, func(i, j int) bool {
		a, b := heads[i], heads[j]
		if a.Borrows != b.Borrows {
			return !a.Borrows
		}
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		return a.Order < b.Order
	})
}
