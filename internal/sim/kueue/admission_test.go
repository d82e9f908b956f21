// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kueue

import (
	"slices"
	"testing"
)

func lim(v int64) *int64 { return &v }

// three returns the cohort of the quota design: teams A, B, C, each with a nominal
// quota of 10 GPUs of one flavor and no limits; A's priority is high.
func three(t *testing.T) *Cohort {
	t.Helper()
	q := func(name string, prio int) Queue {
		return Queue{Name: name, Priority: prio, Quotas: []Quota{{Nominal: 10_000}}}
	}
	c, err := New([]Queue{q("a", 100), q("b", 0), q("c", 0)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReclaimPreemptsOnlyBorrowersNewestFirst is the quota design's cohort: 30
// GPUs, all in use: A 10 (its nominal), B 13 as three low-priority jobs of
// 6, 5 and 2 GPUs (admitted in that order, so the 2-GPU job is the newest),
// C 7. A high-priority A job of 2 GPUs would take A to 12, above nominal:
// by Kueue's classic preemption
// (https://kueue.sigs.k8s.io/docs/concepts/preemption/#candidates) only
// workloads of borrowing ClusterQueues of lower priority are candidates,
// so B's three jobs (B uses 13 > 10) and nothing of C (7 ≤ 10); newest
// first, the 2-GPU job is taken first and A fits: 12 + 11 + 7 = 30. B stays
// at 11, above its nominal.
func TestReclaimPreemptsOnlyBorrowersNewestFirst(t *testing.T) {
	c := three(t)
	id := 0
	admit := func(q int, gpus int64, prio int) int {
		id++
		w := Workload{ID: id, Queue: q, Milli: gpus * 1000, Priority: prio}
		if !c.Fits(w) {
			t.Fatalf("workload %d of %d GPUs does not fit", id, gpus)
		}
		c.Admit(w)
		return id
	}
	for range 10 {
		admit(0, 1, 100)
	}
	b6, b5 := admit(1, 6, 0), admit(1, 5, 0)
	c7 := admit(2, 7, 0)
	b2 := admit(1, 2, 0)
	hi := Workload{ID: 99, Queue: 0, Milli: 2000, Priority: 100}
	if c.Fits(hi) {
		t.Fatal("the A job fits a full cohort")
	}
	got, ok := c.Targets(hi)
	if !ok || !slices.Equal(got, []int{b2}) {
		t.Fatalf("targets %v, %v; want [%d] (B's 2-GPU job), not %d, %d or C's %d", got, ok, b2, b6, b5, c7)
	}
	c.Release(b2, 0)
	if !c.Fits(hi) {
		t.Fatal("the A job does not fit after the preemption")
	}
	c.Admit(hi)
	if u := c.Usage(1, 0); u != 11_000 {
		t.Errorf("B uses %d milli-GPU, want 11000", u)
	}
	if u := c.Usage(2, 0); u != 7_000 {
		t.Errorf("C uses %d milli-GPU, want 7000", u)
	}
}

// TestReclaimNewestFirstEvenBelowNominal is the same cohort with B's 6-GPU
// job admitted last. Kueue's documentation orders candidates "admitted
// the most recently" first and only skips a ClusterQueue that no longer
// borrows before a removal, so the 6-GPU job goes alone (12 + 7 + 7 = 26 ≤
// 30) and B drops to 7, below its nominal 10: where the quota design hoped B would
// stay at its nominal, the documentation wins.
func TestReclaimNewestFirstEvenBelowNominal(t *testing.T) {
	c := three(t)
	for i := range 10 {
		c.Admit(Workload{ID: i + 1, Queue: 0, Milli: 1000, Priority: 100})
	}
	c.Admit(Workload{ID: 20, Queue: 1, Milli: 2000})
	c.Admit(Workload{ID: 21, Queue: 1, Milli: 5000})
	c.Admit(Workload{ID: 30, Queue: 2, Milli: 7000})
	c.Admit(Workload{ID: 22, Queue: 1, Milli: 6000})
	got, ok := c.Targets(Workload{ID: 99, Queue: 0, Milli: 2000, Priority: 100})
	if !ok || !slices.Equal(got, []int{22}) {
		t.Fatalf("targets %v, %v; want [22]", got, ok)
	}
}

// TestNoPreemptionOfEqualPriorityWhenBorrowing: a B job that would take B
// above nominal may preempt only lower-priority workloads of borrowers
// (borrowWithinCohort: LowerPriority); C at equal priority is safe.
func TestNoPreemptionOfEqualPriorityWhenBorrowing(t *testing.T) {
	c := three(t)
	c.Admit(Workload{ID: 1, Queue: 0, Milli: 10_000, Priority: 100})
	c.Admit(Workload{ID: 2, Queue: 2, Milli: 15_000})
	c.Admit(Workload{ID: 3, Queue: 1, Milli: 5_000})
	// B at 5 asks 6 more: 11 > 10, so it borrows; C (15, borrowing) has
	// B's priority: no candidate.
	if got, ok := c.Targets(Workload{ID: 4, Queue: 1, Milli: 6000}); ok {
		t.Fatalf("targets %v; want none", got)
	}
	// B asks 5: 10 ≤ nominal, a reclaim: C's job may go whatever its
	// priority (reclaimWithinCohort: Any).
	if got, ok := c.Targets(Workload{ID: 5, Queue: 1, Milli: 5000}); !ok || !slices.Equal(got, []int{2}) {
		t.Fatalf("targets %v, %v; want [2]", got, ok)
	}
}

// TestLimits: nominal 8 with no borrowing: a gang of 16 GPUs never fits
// and no preemption can make it fit; a lending limit keeps the rest of a
// queue's nominal quota its own.
func TestLimits(t *testing.T) {
	c, err := New([]Queue{
		{Name: "a", Quotas: []Quota{{Nominal: 8000, BorrowingLimit: lim(0)}}},
		{Name: "b", Quotas: []Quota{{Nominal: 8000, LendingLimit: lim(3000)}}},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	gang := Workload{ID: 1, Queue: 0, Milli: 16_000, Priority: 10}
	if c.Fits(gang) {
		t.Fatal("a 16-GPU gang fits a quota of 8 without borrowing")
	}
	if got, ok := c.Targets(gang); ok {
		t.Fatalf("targets %v for a gang beyond nominal + borrowingLimit", got)
	}
	// b may use its 8 and borrow a's 8 (a lends all): 16.
	if w := (Workload{ID: 2, Queue: 1, Milli: 16_000}); !c.Fits(w) {
		t.Fatal("b cannot borrow a's unused 8 GPUs")
	}
	// a may borrow nothing, and uses its 8.
	if !c.Fits(Workload{ID: 3, Queue: 0, Milli: 8000}) || c.Fits(Workload{ID: 3, Queue: 0, Milli: 8001}) {
		t.Fatal("a's borrowingLimit 0 not kept")
	}
	// a lends all its 8; b lends 3 and keeps 5: a third queue with no
	// quota of its own may use at most 8 + 3 = 11.
	c2, err := New([]Queue{
		{Name: "a", Quotas: []Quota{{Nominal: 8000}}},
		{Name: "b", Quotas: []Quota{{Nominal: 8000, LendingLimit: lim(3000)}}},
		{Name: "z", Quotas: []Quota{{}}},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !c2.Fits(Workload{Queue: 2, Milli: 11_000}) || c2.Fits(Workload{Queue: 2, Milli: 11_001}) {
		t.Fatal("lendingLimit 3 of b: z should reach exactly 11 GPUs")
	}
}

func TestNewRefusesBadQuota(t *testing.T) {
	if _, err := New([]Queue{{Name: "a", Quotas: []Quota{{Nominal: 1000, LendingLimit: lim(2000)}}}}, 1); err == nil {
		t.Fatal("lendingLimit above nominal accepted")
	}
	if _, err := New([]Queue{{Name: "a"}}, 1); err == nil {
		t.Fatal("missing flavor quota accepted")
	}
}

// TestOrderHeads: Kueue's classical iterator order (pkg/scheduler
// scheduler.go makeClassicalIterator): within nominal first whatever the
// priority, then priority, then the older.
func TestOrderHeads(t *testing.T) {
	heads := []Head{
		{ID: 1, Borrows: true, Priority: 100, Order: 0},
		{ID: 2, Borrows: false, Priority: 0, Order: 5},
		{ID: 3, Borrows: false, Priority: 0, Order: 2},
		{ID: 4, Borrows: false, Priority: 10, Order: 9},
		{ID: 5, Borrows: true, Priority: 100, Order: 1},
	}
	OrderHeads(heads)
	var got []int
	for _, h := range heads {
		got = append(got, h.ID)
	}
	if want := []int{4, 3, 2, 1, 5}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
