// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math"
	"testing"

	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func teamsFile(t *testing.T, yaml string) *quota.Teams {
	t.Helper()
	f, err := quota.ParseTeams("teams.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func replayTeams(t *testing.T, w *Workload, tm *Teams) Result {
	t.Helper()
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"bestfit"}, Seeds: 1, Seed: 1, Placements: true, Teams: tm})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Results[0]
}

// TestTeamOf: FNV-1a 64 of "pod-1" is 0x497809352ce618a6 (offset basis
// 0xcbf29ce484222325, prime 0x100000001b3, worked out apart), which is 2
// modulo 3. The pods of gang pod-1 hash "pod-1" too: "pod-1#1" itself is
// 0x3e21c72069a1890a, 1 modulo 3, which would split the gang.
func TestTeamOf(t *testing.T) {
	for _, name := range []string{"pod-1", "pod-1#0", "pod-1#1"} {
		if got := TeamOf(name, 3); got != 2 {
			t.Errorf("TeamOf(%s, 3) = %d, want 2", name, got)
		}
	}
	if GangOf("train#1") != "train" || GangOf("train") != "" || GangOf("#1") != "" {
		t.Error("GangOf")
	}
}

// TestTeamCappedAtTwo is the quota design's first case: team a may use 2 T4 GPUs
// (borrowingLimit 0, alone in its cohort) on a node of 8 free T4s. j1 runs
// 0..100, j2 0..200; j3 (created at 1) and j4 (at 2) run 50 s each and
// wait for quota. At 100 j1 ends and exactly one waiting job starts, the
// oldest, j3 (100..150); j4 starts when j3 ends, at 150. Never more than 2
// at once. GPU time 100+200+50+50 = 400 GPU·s; waits 0, 0, 99, 148: mean
// 61.75 s, p95 (the 4th of 4) 148 s.
func TestTeamCappedAtTwo(t *testing.T) {
	job := func(name string, created, run float64) trace.PodSpec {
		// Scheduled late in the trace, deleted long after: it runs run s
		// and never reaches its deletion time while waiting.
		return trace.PodSpec{Name: name, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, GPUSpec: "T4",
			Creation: created, Scheduled: 1000 + created, Deletion: 1000 + created + run}
	}
	w := prepare(t, []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 8, Model: "T4"}},
		[]trace.PodSpec{job("j1", 0, 100), job("j2", 0, 200), job("j3", 1, 50), job("j4", 2, 50)})
	f := teamsFile(t, "cohort: c\nteams:\n- name: a\n  namespaces: [a]\n  quotas:\n  - {model: T4, nominal: 2, borrowingLimit: 0}\n")
	r := replayTeams(t, w, &Teams{File: f})
	want := map[string]float64{"j1": 0, "j2": 0, "j3": 100, "j4": 150}
	for _, p := range r.Placements {
		if p.StartSeconds != want[p.Pod] {
			t.Errorf("%s started at %v, want %v", p.Pod, p.StartSeconds, want[p.Pod])
		}
	}
	// At most two at once: check every start against the others' runs.
	runs := map[string]float64{"j1": 100, "j2": 200, "j3": 50, "j4": 50}
	for _, p := range r.Placements {
		n := 0
		for _, q := range r.Placements {
			if q.StartSeconds <= p.StartSeconds && p.StartSeconds < q.StartSeconds+runs[q.Pod] {
				n++
			}
		}
		if n > 2 {
			t.Errorf("%d jobs run at %v", n, p.StartSeconds)
		}
	}
	if len(r.Teams) != 1 {
		t.Fatalf("teams %+v", r.Teams)
	}
	s := r.Teams[0]
	if s.Pods != 4 || math.Abs(s.GPUHours-400.0/3600) > 1e-12 || s.BorrowedGPUHours != 0 || s.WaitMeanSeconds != 61.75 || s.WaitP95Seconds != 148 || s.Preemptions != 0 || s.NeverStarted != 0 {
		t.Errorf("team stats %+v", s)
	}
}

// TestCohortReclaim is the quota design's second case on three nodes of 10 T4s:
// teams a (priority 100), b and c (0), each nominal 10. b runs a 6-GPU pod
// from 1, a 5-GPU pod from 2, a 2-GPU pod from 4; c a 7-GPU pod from 3; a
// ten 1-GPU pods from 5 (best fit packs them all: 6 | 5 | 7+2, then the
// ten singles fill 4+5+1): 30 of 30 GPUs, b borrowing 3. At 10 a's 2-GPU job
// arrives: Kueue's classic preemption
// (https://kueue.sigs.k8s.io/docs/concepts/preemption/#classic-preemption)
// takes b's newest job, the 2-GPU one, only: a 12, b 11, c 7. The run ends
// at 10. b: GPU time 6·9 + 5·8 + 2·6 = 106 GPU·s, borrowed 1 GPU over
// 2..4 and 3 over 4..10: 20 GPU·s; c: 7·7 = 49 GPU·s, nothing borrowed;
// a: 10·5 = 50 GPU·s.
func TestCohortReclaim(t *testing.T) {
	nan := math.NaN()
	pod := func(name string, gpus int8, created float64) trace.PodSpec {
		return trace.PodSpec{Name: name, CPUMilli: 100, MemoryMiB: 100, NumGPU: gpus, GPUMilli: 1000, GPUSpec: "T4",
			Creation: created, Scheduled: nan, Deletion: nan}
	}
	var pods []trace.PodSpec
	var team []int
	for i := range 10 {
		pods = append(pods, pod("a"+string(rune('0'+i)), 1, 5))
		team = append(team, 0)
	}
	pods = append(pods, pod("b6", 6, 1), pod("b5", 5, 2), pod("c7", 7, 3), pod("b2", 2, 4), pod("ahi", 2, 10))
	team = append(team, 1, 1, 2, 1, 0)
	var nodes []trace.NodeSpec
	for _, n := range []string{"x", "y", "z"} {
		nodes = append(nodes, trace.NodeSpec{Name: n, CPUMilli: 64000, MemoryMiB: 262144, GPUs: 10, Model: "T4"})
	}
	w := prepare(t, nodes, pods)
	f := teamsFile(t, `cohort: c
teams:
- {name: a, namespaces: [a], priority: 100, quotas: [{model: T4, nominal: 10}]}
- {name: b, namespaces: [b], quotas: [{model: T4, nominal: 10}]}
- {name: c, namespaces: [c], quotas: [{model: T4, nominal: 10}]}
`)
	r := replayTeams(t, w, &Teams{File: f, PodTeam: team})
	for _, p := range r.Placements {
		if p.Pod == "ahi" && (p.Node == "" || p.StartSeconds != 10) {
			t.Errorf("a's high-priority job: %+v", p)
		}
	}
	if r.AllocatedGPUMilli != 30_000 {
		t.Errorf("allocated %d milli-GPU at the end, want 30000", r.AllocatedGPUMilli)
	}
	want := []TeamStats{
		{Team: "a", Pods: 11, GPUHours: 50.0 / 3600},
		{Team: "b", Pods: 3, GPUHours: 106.0 / 3600, BorrowedGPUHours: 20.0 / 3600, WaitMeanSeconds: 0, Preemptions: 1},
		{Team: "c", Pods: 1, GPUHours: 49.0 / 3600},
	}
	for k, s := range r.Teams {
		g := want[k]
		if s.Team != g.Team || s.Pods != g.Pods || s.Preemptions != g.Preemptions || math.Abs(s.GPUHours-g.GPUHours) > 1e-12 ||
			math.Abs(s.BorrowedGPUHours-g.BorrowedGPUHours) > 1e-12 || s.WaitMeanSeconds != 0 || s.NeverStarted != 0 {
			t.Errorf("team %d: %+v, want %+v", k, s, g)
		}
	}
}

// TestGangBeyondQuotaNeverBinds is the quota design's third case: team a's quota
// is 8 T4 GPUs (borrowingLimit 0); gang g is two pods of 8 GPUs (g#0,
// g#1), 16 in all, on two free nodes of 8. It is never admitted and
// neither pod binds; both end waiting for quota. A lone 8-GPU pod of the
// same team arriving later is admitted at once (a gang that does not fit
// blocks no one: BestEffortFIFO).
func TestGangBeyondQuotaNeverBinds(t *testing.T) {
	nan := math.NaN()
	pod := func(name string, created float64) trace.PodSpec {
		return trace.PodSpec{Name: name, CPUMilli: 100, MemoryMiB: 100, NumGPU: 8, GPUMilli: 1000, GPUSpec: "T4",
			Creation: created, Scheduled: nan, Deletion: nan}
	}
	w := prepare(t, []trace.NodeSpec{
		{Name: "n1", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 8, Model: "T4"},
		{Name: "n2", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 8, Model: "T4"},
	}, []trace.PodSpec{pod("g#0", 0), pod("g#1", 0), pod("solo", 5)})
	f := teamsFile(t, "cohort: c\nteams:\n- name: a\n  namespaces: [a]\n  quotas:\n  - {model: T4, nominal: 8, borrowingLimit: 0}\n")
	r := replayTeams(t, w, &Teams{File: f})
	for _, p := range r.Placements {
		switch p.Pod {
		case "g#0", "g#1":
			if p.Node != "" || p.Reason != ReasonQuotaWait {
				t.Errorf("gang pod %+v bound or failed otherwise", p)
			}
		case "solo":
			if p.Node == "" || p.StartSeconds != 5 {
				t.Errorf("solo %+v", p)
			}
		}
	}
	if r.AllocatedGPUMilli != 8000 || r.FailedPods != 2 || r.Teams[0].NeverStarted != 2 {
		t.Errorf("allocated %d, failed %d, team %+v", r.AllocatedGPUMilli, r.FailedPods, r.Teams[0])
	}
}

// TestQuotaWaitEndsAtDeletion: team a may use 1 GPU. p1 runs 0..100; p2
// (created at 10, never scheduled in the trace, deleted at 50) waits for
// quota and leaves at 50 (deleted_waiting, after 40 s); p3 (created at
// 60, runs 100 s) waits until p1 ends and starts at 100. Waits of started
// pods: 0 and 40, mean 20 s.
func TestQuotaWaitEndsAtDeletion(t *testing.T) {
	nan := math.NaN()
	w := prepare(t, []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 4, Model: "T4"}}, []trace.PodSpec{
		{Name: "p1", CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Creation: 0, Scheduled: 0, Deletion: 100},
		{Name: "p2", CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Creation: 10, Scheduled: nan, Deletion: 50},
		{Name: "p3", CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Creation: 60, Scheduled: 200, Deletion: 300},
	})
	f := teamsFile(t, "cohort: c\nteams:\n- {name: a, namespaces: [a], quotas: [{model: T4, nominal: 1}]}\n")
	r := replayTeams(t, w, &Teams{File: f})
	for _, p := range r.Placements {
		switch p.Pod {
		case "p2":
			if p.Node != "" || p.Reason != ReasonDeleted || p.WaitSeconds != 40 {
				t.Errorf("p2 %+v", p)
			}
		case "p3":
			if p.StartSeconds != 100 {
				t.Errorf("p3 %+v", p)
			}
		}
	}
	if s := r.Teams[0]; s.NeverStarted != 1 || s.WaitMeanSeconds != 20 {
		t.Errorf("team %+v", s)
	}
}

// TestPreemptedRunsAgain: teams a (priority 100) and b, nominal 1 T4 each,
// one node of 2. b1 runs 0..1000; b2 from 1 borrows a's GPU; a1 arrives at
// 10 for its nominal GPU and reclaims it: b2 is preempted at 10, a1 runs
// 10..60, then b2 is admitted again and runs its whole 100 s, 60..160. b's
// GPU time 1000 + 9 + 100 = 1109 GPU·s, borrowed 9 + 100 = 109 GPU·s;
// its pods started at once the first time: waits 0.
func TestPreemptedRunsAgain(t *testing.T) {
	pod := func(name string, created, run float64) trace.PodSpec {
		return trace.PodSpec{Name: name, CPUMilli: 100, MemoryMiB: 100, NumGPU: 1, GPUMilli: 1000, Creation: created, Scheduled: created, Deletion: created + run}
	}
	w := prepare(t, []trace.NodeSpec{{Name: "n", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 2, Model: "T4"}},
		[]trace.PodSpec{pod("b1", 0, 1000), pod("b2", 1, 100), pod("a1", 10, 50)})
	f := teamsFile(t, "cohort: c\nteams:\n- {name: a, namespaces: [a], priority: 100, quotas: [{model: T4, nominal: 1}]}\n- {name: b, namespaces: [b], quotas: [{model: T4, nominal: 1}]}\n")
	r := replayTeams(t, w, &Teams{File: f, PodTeam: []int{1, 1, 0}})
	for _, p := range r.Placements {
		if want := map[string]float64{"b1": 0, "b2": 60, "a1": 10}[p.Pod]; p.StartSeconds != want {
			t.Errorf("%s last started at %v, want %v", p.Pod, p.StartSeconds, want)
		}
	}
	b := r.Teams[1]
	if b.Preemptions != 1 || math.Abs(b.GPUHours-1109.0/3600) > 1e-12 || math.Abs(b.BorrowedGPUHours-109.0/3600) > 1e-12 || b.WaitMeanSeconds != 0 || b.NeverStarted != 0 {
		t.Errorf("team b %+v", b)
	}
	if a := r.Teams[0]; a.Preemptions != 0 || math.Abs(a.GPUHours-50.0/3600) > 1e-12 {
		t.Errorf("team a %+v", a)
	}
	if r.Replay.Started != 3 || r.FailedPods != 0 {
		t.Errorf("started %d, failed %d", r.Replay.Started, r.FailedPods)
	}
}
