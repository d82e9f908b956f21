// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/sim/kueue"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Teams makes a replay admit GPU pods by their team's Kueue quota
// (internal/sim/kueue) before the placement core places them.
type Teams struct {
	File *quota.Teams
	// PodTeam[i], when not nil, is the index in File.Teams of the team of
	// pod i (the pod list's order); nil: TeamOf each pod's name.
	PodTeam []int
}

// TeamOf returns the team of a pod the pod list gives none: FNV-1a 64 of
// its gang's name (GangOf) when it is in one, else of its name, modulo the
// number of teams, as an index in the teams file's order. Hashing the gang
// keeps a gang's pods in one team, so that they stay one gang.
func TeamOf(name string, teams int) int {
	if g := GangOf(name); g != "" {
		name = g
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(teams))
}

// GangOf returns the gang of a pod by the name convention of the pod list:
// the pods named "NAME#0", "NAME#1", ... form gang NAME; "" for a pod
// whose name has no '#'. A gang is admitted whole or not at all.
func GangOf(name string) string {
	if k := strings.LastIndexByte(name, '#'); k > 0 {
		return name[:k]
	}
	return ""
}

// ReasonNoQuota: replay with teams; the pod's team has no quota of any GPU
// model the pod allows. ReasonQuotaWait: the pod was still waiting for its
// team's quota at the end.
const (
	ReasonNoQuota   = "no_quota"
	ReasonQuotaWait = "waiting_quota"
)

// TeamStats is one team's share of a replay with teams. Times in seconds.
type TeamStats struct {
	Team string `json:"team"`
	Pods int    `json:"pods"`
	// GPUHours is the GPU time its running pods held; BorrowedGPUHours the
	// time integral of its admitted quota above its nominal quota, summed
	// over GPU models.
	GPUHours         float64 `json:"gpu_hours"`
	BorrowedGPUHours float64 `json:"borrowed_gpu_hours"`
	// Waiting time, first start − creation_time: the mean of its started
	// pods; the p95 of all its pods, one never started waiting without end
	// (P95Wait; +Inf, null in JSON, when over 5% never started).
	WaitMeanSeconds float64 `json:"wait_mean_seconds" round:"ms"`
	WaitP95Seconds  float64 `json:"wait_p95_seconds" round:"ms"`
	// Preemptions counts its workloads (a pod, or a whole gang) preempted
	// to give their quota back; NeverStarted its pods that never ran.
	Preemptions  int `json:"preemptions"`
	NeverStarted int `json:"never_started_pods"`
	// AdmittedUnplaceable counts its pods admitted by quota that fit no
	// node of the cluster even empty (Kueue admits by quota alone): each
	// holds its quota while it waits for a node, to its deletion or the end.
	AdmittedUnplaceable int `json:"admitted_unplaceable_pods,omitempty"`
}

// QuotaEvent is one admission or preemption of a team workload (a pod, or
// a whole gang) in a replay with teams, in the order they happened.
type QuotaEvent struct {
	Seconds float64 `json:"seconds" round:"ms"`
	// Workload is the gang's name, or the pod's.
	Workload string `json:"workload"`
	Team     string `json:"team"`
	// Kind is "admitted" or "preempted".
	Kind string `json:"kind"`
	// Model is the GPU model of the flavor it was admitted to or held.
	Model string `json:"model"`
}

// Workload states in the team queue.
const (
	wlQueued = iota
	wlAdmitted
	wlGone // finished, or deleted while queued
)

// teamWorkload is a pod, or every pod of one gang, as Kueue admits it.
type teamWorkload struct {
	team     int
	members  []int
	milli    int64
	models   cluster.ModelSet // 0: any, unless disjoint
	disjoint bool
	creation float64
	state    int
	flavor   int
	// ms[m] is member m's state (ms* constants); done counts the members
	// finished or failed.
	ms   []int8
	done int
}

// Member states of a team workload.
const (
	msAbsent   = iota // not arrived yet
	msLive            // arrived: queued, waiting for a node or running
	msFinished        // ran to its end
	msFailed          // failed or deleted without finishing
)

// teamQueue is the quota side of a replay with teams.
type teamQueue struct {
	co       *kueue.Cohort
	file     *quota.Teams
	flavorID []int    // model ID of each flavor, -1 when unknown
	models   []string // model of each flavor
	nominal  [][]int64
	has      [][]bool // has[team][flavor]: the team has a quota of it
	wls      []teamWorkload
	wlOf     []int // workload of each pod, -1 for a pod without GPUs
	queue    []int // queued workloads, by priority then creation
	// place starts an admitted pod (placement or waiting); evict takes a
	// running or placement-waiting pod back.
	place func(i int) error
	evict func(i int) error

	stats   []TeamStats
	alloc   []int64   // running milli-GPU per team
	allocMS []float64 // ∫ alloc dt, milli-GPU·s
	borMS   []float64 // ∫ borrowed dt, milli-GPU·s
	waits   [][]float64
	now     float64
	// events logs admissions and preemptions (QuotaEvent) when set.
	events *[]quotaEvent
}

// quotaEvent is a QuotaEvent before names: workload k, flavor f.
type quotaEvent struct {
	at        float64
	k, f      int
	preempted bool
}

func newTeamQueue(w *Workload, pods []cluster.Pod, tm *Teams, t0 float64) (*teamQueue, error) {
	f := tm.File
	flavors, at := teamFlavors(f)
	tq := &teamQueue{file: f, flavorID: make([]int, len(flavors)), models: flavors, now: t0, wlOf: make([]int, len(pods))}
	for k, m := range flavors {
		id, err := gpu.ModelID(m)
		if err != nil {
			id = -1
		}
		tq.flavorID[k] = id
	}
	co, err := kueue.New(tq.queues(at), len(flavors))
	if err != nil {
		return nil, err
	}
	tq.co = co
	n := len(f.Teams)
	tq.alloc, tq.allocMS, tq.borMS, tq.waits = make([]int64, n), make([]float64, n), make([]float64, n), make([][]float64, n)
	tq.addWorkloads(w, pods, tm)
	return tq, nil
}

// teamFlavors returns the GPU models the teams' quotas name, in the order
// first named (Kueue's flavors), and each one's index.
func teamFlavors(f *quota.Teams) ([]string, map[string]int) {
	var flavors []string
	at := map[string]int{}
	for _, t := range f.Teams {
		for _, q := range t.Quotas {
			if _, ok := at[q.Model]; !ok {
				at[q.Model] = len(flavors)
				flavors = append(flavors, q.Model)
			}
		}
	}
	return flavors, at
}

// queues returns each team's Kueue queue, its quotas in milli-GPU by
// flavor (at), and notes each team's nominal quotas and stats.
func (tq *teamQueue) queues(at map[string]int) []kueue.Queue {
	var queues []kueue.Queue
	milli := func(v *int) *int64 {
		if v == nil {
			return nil
		}
		m := int64(*v) * cluster.MilliGPU
		return &m
	}
	flavors := len(tq.models)
	for _, t := range tq.file.Teams {
		q := kueue.Queue{Name: t.Name, Priority: t.Priority, Quotas: make([]kueue.Quota, flavors)}
		nom, has := make([]int64, flavors), make([]bool, flavors)
		for _, mq := range t.Quotas {
			k := at[mq.Model]
			has[k] = true
			q.Quotas[k] = kueue.Quota{Nominal: *milli(mq.Nominal), BorrowingLimit: milli(mq.BorrowingLimit), LendingLimit: milli(mq.LendingLimit)}
			nom[k] = q.Quotas[k].Nominal
		}
		queues = append(queues, q)
		tq.nominal, tq.has = append(tq.nominal, nom), append(tq.has, has)
		tq.stats = append(tq.stats, TeamStats{Team: t.Name})
	}
	return queues
}

// addWorkloads makes the Kueue workloads of the GPU pods: one per pod, or
// per gang of a team; a pod without GPUs is in none (wlOf -1).
func (tq *teamQueue) addWorkloads(w *Workload, pods []cluster.Pod, tm *Teams) {
	f, n := tq.file, len(tq.file.Teams)
	gangs := map[[2]string]int{}
	for i := range pods {
		tq.wlOf[i] = -1
		if pods[i].NumGPU == 0 {
			continue
		}
		team := 0
		if tm.PodTeam != nil {
			team = tm.PodTeam[i]
		} else {
			team = TeamOf(w.specs[i].Name, n)
		}
		tq.stats[team].Pods++
		k := len(tq.wls)
		if g := GangOf(w.specs[i].Name); g != "" {
			key := [2]string{f.Teams[team].Name, g}
			if j, ok := gangs[key]; ok {
				k = j
			} else {
				gangs[key] = k
			}
		}
		if k == len(tq.wls) {
			tq.wls = append(tq.wls, teamWorkload{team: team, flavor: -1, creation: math.Inf(1), state: -1})
		}
		wl := &tq.wls[k]
		wl.members = append(wl.members, i)
		wl.ms = append(wl.ms, msAbsent)
		if pods[i].Models != 0 {
			if wl.models == 0 {
				wl.models = pods[i].Models
			} else if wl.models &= pods[i].Models; wl.models == 0 {
				wl.disjoint = true // its pods allow no model in common
			}
		}
		wl.milli += pods[i].TotalGPUMilli()
		tq.wlOf[i] = k
	}
}

// advance integrates the per-team GPU time up to t.
func (tq *teamQueue) advance(t float64) {
	dt := t - tq.now
	if dt <= 0 {
		return
	}
	for q := range tq.alloc {
		tq.allocMS[q] += float64(tq.alloc[q]) * dt
		for f := range tq.flavorID {
			if b := tq.co.Usage(q, f) - tq.nominal[q][f]; b > 0 {
				tq.borMS[q] += float64(b) * dt
			}
		}
	}
	tq.now = t
}

// flavors returns the flavors a workload may take: its team's quotas in
// file order whose model the workload allows.
func (tq *teamQueue) flavors(wl *teamWorkload) []int {
	if wl.disjoint {
		return nil
	}
	var out []int
	for k, id := range tq.flavorID {
		if !tq.has[wl.team][k] {
			continue
		}
		if wl.models == 0 || (id >= 0 && wl.models&(1<<uint(id)) != 0) {
			out = append(out, k)
		}
	}
	return out
}

// arrive is pod i's arrival: it joins its workload, which is queued at its
// first member's arrival with every member's request (a Kueue Workload is
// created with its whole job). It returns false with a reason when the
// pod fails at once.
func (tq *teamQueue) arrive(i int, now float64, pods []cluster.Pod) (reason string, err error) {
	k := tq.wlOf[i]
	wl := &tq.wls[k]
	m := tq.member(wl, i)
	wl.ms[m] = msLive
	switch wl.state {
	case wlGone:
		wl.ms[m] = msFailed
		wl.done++
		return ReasonDeleted, nil
	case wlAdmitted:
		tq.restrict(wl, i, pods)
		return "", tq.place(i)
	case wlQueued:
		return "", nil
	}
	if len(tq.flavors(wl)) == 0 {
		wl.state = wlGone
		wl.ms[m] = msFailed
		wl.done++
		return ReasonNoQuota, nil
	}
	wl.state, wl.creation = wlQueued, now
	tq.enqueue(k)
	return "", tq.try(k, pods)
}

func (tq *teamQueue) enqueue(k int) {
	pr := func(j int) int { return tq.file.Teams[tq.wls[j].team].Priority }
	at := sort.Search(len(tq.queue), func(x int) bool {
		j := tq.queue[x]
		return pr(j) < pr(k) || (pr(j) == pr(k) && tq.wls[j].creation > tq.wls[k].creation)
	})
	tq.queue = append(tq.queue, 0)
	copy(tq.queue[at+1:], tq.queue[at:])
	tq.queue[at] = k
}

func (tq *teamQueue) dequeue(k int) {
	for x, j := range tq.queue {
		if j == k {
			tq.queue = append(tq.queue[:x], tq.queue[x+1:]...)
			return
		}
	}
}

// restrict keeps an admitted pod on its flavor's GPU model.
func (tq *teamQueue) restrict(wl *teamWorkload, i int, pods []cluster.Pod) {
	if id := tq.flavorID[wl.flavor]; id >= 0 {
		pods[i].Models = cluster.ModelSet(1) << uint(id)
	}
}

// try admits queued workload k if its team's quota allows, preempting
// by Kueue's classic preemption if it must: the first flavor (team quota
// order) where it fits, else the first where preemption makes it fit
// (Kueue's default flavorFungibility, whenCanPreempt: TryNextFlavor,
// https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#flavorfungibility).
func (tq *teamQueue) try(k int, pods []cluster.Pod) error {
	wl := &tq.wls[k]
	aw := kueue.Workload{ID: k, Queue: wl.team, Milli: wl.milli, Priority: tq.file.Teams[wl.team].Priority}
	fls := tq.flavors(wl)
	chosen := -1
	for _, f := range fls {
		aw.Flavor = f
		if tq.co.Fits(aw) {
			chosen = f
			break
		}
	}
	if chosen < 0 {
		for _, f := range fls {
			aw.Flavor = f
			ids, ok := tq.co.Targets(aw)
			if !ok {
				continue
			}
			for _, id := range ids {
				if err := tq.preempt(id); err != nil {
					return err
				}
			}
			chosen = f
			break
		}
	}
	if chosen < 0 {
		return nil
	}
	aw.Flavor = chosen
	tq.co.Admit(aw)
	tq.logEvent(k, chosen, false)
	tq.dequeue(k)
	wl.state, wl.flavor = wlAdmitted, chosen
	for m, i := range wl.members {
		if wl.ms[m] == msLive {
			tq.restrict(wl, i, pods)
			if err := tq.place(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// preempt gives admitted workload id's quota back: its pods leave their
// GPUs (or the placement queue) and it is queued again, to run its whole
// time again once admitted.
func (tq *teamQueue) preempt(id int) error {
	wl := &tq.wls[id]
	tq.co.Release(id, wl.flavor)
	tq.logEvent(id, wl.flavor, true)
	tq.stats[wl.team].Preemptions++
	wl.done = 0
	for m, i := range wl.members {
		switch wl.ms[m] {
		case msLive:
			if err := tq.evict(i); err != nil {
				return err
			}
		case msFinished:
			wl.ms[m] = msLive // the job runs again whole
		case msFailed:
			wl.done++
		}
	}
	wl.state, wl.flavor = wlQueued, -1
	tq.enqueue(id)
	return nil
}

// retry admits queued workloads in Kueue's scheduling cycles
// (sigs.k8s.io/kueue v0.17.0 pkg/scheduler/scheduler.go schedule): each
// cycle takes the head of each team's queue (its highest priority,
// oldest workload not yet tried: BestEffortFIFO, a workload that does not
// fit blocks no one) and tries them in kueue.OrderHeads' order, heads
// within nominal quota before heads that must borrow; cycles repeat until
// every queued workload has been tried once.
func (tq *teamQueue) retry(pods []cluster.Pod) error {
	tried := map[int]bool{}
	for {
		heads := tq.heads(tried)
		if len(heads) == 0 {
			return nil
		}
		kueue.OrderHeads(heads)
		for _, h := range heads {
			tried[h.ID] = true
			if tq.wls[h.ID].state != wlQueued {
				continue
			}
			if err := tq.try(h.ID, pods); err != nil {
				return err
			}
		}
	}
}

// heads returns each team's first queued workload not in tried, with
// whether it would borrow on the flavor try would give it (the first
// where it fits, else its first).
func (tq *teamQueue) heads(tried map[int]bool) []kueue.Head {
	var out []kueue.Head
	seen := make([]bool, len(tq.file.Teams))
	for x, k := range tq.queue {
		wl := &tq.wls[k]
		if seen[wl.team] || tried[k] || wl.state != wlQueued {
			continue
		}
		seen[wl.team] = true
		aw := kueue.Workload{ID: k, Queue: wl.team, Milli: wl.milli, Priority: tq.file.Teams[wl.team].Priority}
		fls := tq.flavors(wl)
		borrows := false
		for i, f := range fls {
			aw.Flavor = f
			if i == 0 || tq.co.Fits(aw) {
				borrows = tq.co.Borrows(aw)
			}
			if tq.co.Fits(aw) {
				break
			}
		}
		out = append(out, kueue.Head{ID: k, Borrows: borrows, Priority: aw.Priority, Order: x})
	}
	return out
}

// finished is pod i's end: it ran to its end (ok), or failed or left
// while admitted or queued. A workload deleted while queued leaves whole:
// gone lists its other arrived pods, which fail too. When an admitted
// workload has no member left its quota is released and the queue
// retried.
func (tq *teamQueue) finished(i int, ok bool, pods []cluster.Pod) (gone []int, err error) {
	k := tq.wlOf[i]
	wl := &tq.wls[k]
	m := tq.member(wl, i)
	wl.ms[m] = msFailed
	if ok {
		wl.ms[m] = msFinished
	}
	wl.done++
	if wl.state == wlQueued {
		tq.dequeue(k)
		wl.state = wlGone
		for o, j := range wl.members {
			if wl.ms[o] == msLive {
				wl.ms[o] = msFailed
				wl.done++
				gone = append(gone, j)
			}
		}
		return gone, nil
	}
	if wl.state != wlAdmitted || wl.done < len(wl.members) {
		return nil, nil
	}
	tq.co.Release(k, wl.flavor)
	wl.state = wlGone
	return nil, tq.retry(pods)
}

// member returns the index of pod i among wl's members.
func (tq *teamQueue) member(wl *teamWorkload, i int) int {
	for m, p := range wl.members {
		if p == i {
			return m
		}
	}
	return -1
}

// quotaWaiting reports whether pod i has arrived and waits for its team's
// quota.
func (tq *teamQueue) quotaWaiting(i int) bool {
	k := tq.wlOf[i]
	return k >= 0 && tq.wls[k].state == wlQueued && tq.wls[k].ms[tq.member(&tq.wls[k], i)] == msLive
}

// queuedPods returns the arrived pods still waiting for quota.
func (tq *teamQueue) queuedPods() []int {
	var out []int
	for _, k := range tq.queue {
		wl := &tq.wls[k]
		for m, i := range wl.members {
			if wl.ms[m] == msLive {
				out = append(out, i)
			}
		}
	}
	return out
}

// logEvent logs an admission or preemption of workload k on flavor f.
func (tq *teamQueue) logEvent(k, f int, preempted bool) {
	if tq.events != nil {
		*tq.events = append(*tq.events, quotaEvent{at: tq.now, k: k, f: f, preempted: preempted})
	}
}

// quotaEvents returns the logged events with names, times from t0.
func (tq *teamQueue) quotaEvents(specs []trace.PodSpec, t0 float64) []QuotaEvent {
	if tq.events == nil {
		return nil
	}
	out := make([]QuotaEvent, 0, len(*tq.events))
	for _, e := range *tq.events {
		wl := &tq.wls[e.k]
		name := specs[wl.members[0]].Name
		if g := GangOf(name); g != "" {
			name = g
		}
		kind := "admitted"
		if e.preempted {
			kind = "preempted"
		}
		out = append(out, QuotaEvent{Seconds: e.at - t0, Workload: name, Team: tq.file.Teams[wl.team].Name, Kind: kind, Model: tq.models[e.f]})
	}
	return out
}

// results returns the per-team stats.
func (tq *teamQueue) results() []TeamStats {
	out := make([]TeamStats, len(tq.stats))
	for q, s := range tq.stats {
		s.GPUHours = tq.allocMS[q] / cluster.MilliGPU / 3600
		s.BorrowedGPUHours = tq.borMS[q] / cluster.MilliGPU / 3600
		d := tq.waits[q]
		sort.Float64s(d)
		if len(d) > 0 {
			sum := 0.0
			for _, v := range d {
				sum += v
			}
			s.WaitMeanSeconds = sum / float64(len(d))
		}
		s.WaitP95Seconds = P95Wait(d, s.NeverStarted)
		out[q] = s
	}
	return out
}
