// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"reflect"
	"testing"
)

// TestWithinNominalBeforeBorrowing replays labCase (kueue_e2e_test.go) in
// the simulator alone. At step 5 a's gang leaves, freeing 2 GPUs: b2
// (priority 100, must borrow) and a3 (priority 0, within a's nominal)
// both wait and each fits alone. Kueue tries heads within nominal first
// (pkg/scheduler/scheduler.go makeClassicalIterator): a3 is admitted and
// b2 waits until b1 leaves at 6. Before, the simulator admitted b2 first
// (higher priority) and preempted it at once for a3 (an extra admission
// and preemption of b2 at 5). TestSimulatorAgreesWithKueue shows the
// running Kueue does the same.
func TestWithinNominalBeforeBorrowing(t *testing.T) {
	got := simulate(t, labCase)
	want := []event{
		{0, "admitted", "b1"}, {1, "admitted", "b2"}, {2, "admitted", "g"},
		{3, "preempted", "b2"}, {3, "admitted", "a2"},
		{5, "admitted", "a3"}, {6, "admitted", "b2"},
	}
	if !reflect.DeepEqual(got.events, want) {
		t.Errorf("events %v, want %v", got.events, want)
	}
	// fgd with tie-break first on two empty nodes of 4: b1 (4) n0; b2 (2)
	// n1; g (1+1) n1; a2 (2) where b2 was, n1; a3 (1) where g was, n1;
	// b2 again (2) on n0, empty since b1 left.
	wantNodes := map[string][]string{"b1": {"n0"}, "b2": {"n0"}, "g": {"n1", "n1"}, "a2": {"n1"}, "a3": {"n1"}}
	if !reflect.DeepEqual(got.nodes, wantNodes) {
		t.Errorf("nodes %v, want %v", got.nodes, wantNodes)
	}
}

// unplaceableCase: team a, nominal 8 T4s, alone in its cohort, on two
// nodes of 4. big, one pod of 8 GPUs, fits no node; small (1 GPU) comes
// at 1; big is deleted at 3.
var unplaceableCase = replayCase{
	teams: `cohort: lab
teams:
- {name: a, namespaces: [a], quotas: [{model: T4, product: T4, nominal: 8}]}
`,
	nodes: labCase.nodes,
	jobs: []replayJob{
		{name: "big", team: "a", pods: 1, gpus: 8, at: 0, end: 3},
		{name: "small", team: "a", pods: 1, gpus: 1, at: 1, end: -1},
	},
	steps: 4,
}

// TestUnplaceableHoldsQuota: Kueue admits big at 0 by quota alone (no
// topology-aware scheduling: it knows no nodes); its pod never binds, and
// it holds all 8 GPUs of a's quota, so small waits for quota until big is
// deleted at 3, then is admitted and runs on n0 (fgd, tie-break first).
// Before, the simulator failed big at its arrival (too_large) and
// admitted small at 1. The replay reports the admission
// (TeamStats.AdmittedUnplaceable); TestSimulatorAgreesWithKueue shows
// Kueue does the same.
func TestUnplaceableHoldsQuota(t *testing.T) {
	got := simulate(t, unplaceableCase)
	want := []event{{0, "admitted", "big"}, {3, "admitted", "small"}}
	if !reflect.DeepEqual(got.events, want) {
		t.Errorf("events %v, want %v", got.events, want)
	}
	if want := map[string][]string{"small": {"n0"}}; !reflect.DeepEqual(got.nodes, want) {
		t.Errorf("nodes %v, want %v", got.nodes, want)
	}
	if got.teams[0].AdmittedUnplaceable != 1 || got.teams[0].NeverStarted != 1 {
		t.Errorf("team stats %+v, want 1 admitted unplaceable, 1 never started", got.teams[0])
	}
}

// victimCase: teams a (priority 0) and b (priority 100), nominal 4 T4s
// each, on two nodes of 4. a's jobs of 3, 3 and 1 GPUs fill n0 with 3+1
// and n1 with 3 (a borrows 3); at 3, b1 asks 2, within b's nominal.
var victimCase = replayCase{
	teams: labCase.teams,
	nodes: labCase.nodes,
	jobs: []replayJob{
		{name: "a1", team: "a", pods: 1, gpus: 3, at: 0, end: -1},
		{name: "a2", team: "a", pods: 1, gpus: 3, at: 1, end: -1},
		{name: "a3", team: "a", pods: 1, gpus: 1, at: 2, end: -1},
		{name: "b1", team: "b", pods: 1, gpus: 2, at: 3, end: -1},
	},
	steps: 4,
}

// TestVictimByQuotaAlone: at 3 the cohort has 1 GPU of quota free and b1
// needs 2: classic preemption (pkg/scheduler/preemption) picks victims by
// quota alone, the newest borrowing workload first, and a3 (1 GPU) is
// enough. b1 is admitted, but a3 leaves 1 GPU free on n0 beside the 1 on
// n1: b1's 2-GPU pod fits no node and never binds, and 2 GPUs stay idle.
// Kueue without topology-aware scheduling does the same
// (TestSimulatorAgreesWithKueue); docs/quota.md says what to configure
// against it.
func TestVictimByQuotaAlone(t *testing.T) {
	got := simulate(t, victimCase)
	want := []event{{0, "admitted", "a1"}, {1, "admitted", "a2"}, {2, "admitted", "a3"},
		{3, "preempted", "a3"}, {3, "admitted", "b1"}}
	if !reflect.DeepEqual(got.events, want) {
		t.Errorf("events %v, want %v", got.events, want)
	}
	if n := got.nodes["b1"]; len(n) != 0 {
		t.Errorf("b1 placed on %v, want nowhere", n)
	}
	if n := got.nodes["a1"]; len(n) != 1 || n[0] != "n0" {
		t.Errorf("a1 on %v, want n0", n)
	}
}
