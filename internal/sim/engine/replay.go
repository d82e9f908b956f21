// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// ReplayStats are the metrics of a replay run. Times are seconds of trace
// time.
type ReplayStats struct {
	// Started pods got a node; NeverStarted did not: they fit no node of
	// the empty cluster, left the queue at their deletion time, or were
	// still waiting at the end (Result.Failed says which).
	Started      int `json:"started_pods"`
	NeverStarted int `json:"never_started_pods"`
	// Queueing delay, start − creation_time. Mean and max are of the
	// started pods. P95 is of every pod, nearest rank, a pod never started
	// counting as waiting without end (as --size p95wait counts it): +Inf
	// when more than 5% of pods never started (null in JSON, with
	// queue_delay_p95_unbounded true).
	QueueDelayMeanSeconds float64 `json:"queue_delay_mean_seconds" round:"ms"`
	QueueDelayP95Seconds  float64 `json:"queue_delay_p95_seconds" round:"ms"`
	QueueDelayMaxSeconds  float64 `json:"queue_delay_max_seconds" round:"ms"`
	// TimeWeightedAllocationRatio is ∫ allocated dt / (capacity · span),
	// over the span from the first arrival to the last event.
	TimeWeightedAllocationRatio float64 `json:"time_weighted_gpu_allocation_ratio"`
	SpanSeconds                 float64 `json:"span_seconds" round:"ms"`
	// GPU-hours allocated and idle over the span, and what they cost.
	AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
	IdleGPUHours      float64 `json:"idle_gpu_hours"`
	AllocatedCostUSD  float64 `json:"allocated_cost_usd" round:"cent"`
	IdleCostUSD       float64 `json:"idle_cost_usd" round:"cent"`
	// Timeline samples allocation ratio and queue length over time.
	Timeline []TimePoint `json:"timeline,omitempty"`
	// DelayPercentiles[i] is the i-th percentile (0..100) of queueing delay.
	DelayPercentiles []float64 `json:"delay_percentiles_seconds,omitempty" round:"ms"`
}

// TimePoint is one timeline sample.
type TimePoint struct {
	Seconds         float64 `json:"t" round:"ms"`
	AllocationRatio float64 `json:"gpu_allocation_ratio"`
	Waiting         int     `json:"waiting_pods"`
}

type departure struct {
	at   float64
	pod  int
	node int
	gpus cluster.GPUSet
	gen  uint32 // with teams: the pod's run, stale once it is preempted
}

type departures []departure

func (d departures) Len() int { return len(d) }
func (d departures) Less(i, j int) bool {
	return d[i].at < d[j].at || (d[i].at == d[j].at && d[i].pod < d[j].pod)
}
func (d departures) Swap(i, j int) { d[i], d[j] = d[j], d[i] }
func (d *departures) Push(x any)   { *d = append(*d, x.(departure)) }
func (d *departures) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}

// timelinePoints is how many samples a replay timeline holds at most.
const timelinePoints = 400

// replay runs the pods in trace time. A pod arrives at creation_time and,
// once placed, runs for as long as it ran in the trace: deletion_time −
// scheduled_time. A pod the trace never scheduled (no scheduled_time:
// pending, or failed before it was placed) runs for deletion_time −
// creation_time, the time it held its place in the trace's queue. A pod
// without deletion_time runs to the end. A pod that fits nowhere waits;
// waiting pods are retried, oldest first, whenever resources are freed, and
// a new arrival is placed at once if it fits (no head-of-line blocking, as
// in kube-scheduler). A pod still waiting at its deletion_time leaves the
// queue without starting (ReasonDeleted), as its deletion in the trace
// would remove it; a pod that fits no node of the empty cluster fails on
// arrival. With placements it records what became of each pod. With tm,
// a GPU pod is first admitted by its team's quota (teams.go): it waits
// for quota, then for a node; a preempted pod leaves its GPUs, waits for
// quota again and then runs its whole time again; a pod that has started
// once does not leave at its deletion time. The workload has passed
// check("replay").
func replay(ctx context.Context, w *Workload, pl placer, rng *rand.Rand, placements bool, tm *Teams, gangs bool) (Result, error) {
	rp, err := newReplayer(ctx, w, pl, rng, placements, tm)
	if err != nil {
		return Result{}, err
	}
	if gangs {
		rp.gq = newGangQueue(w)
	}
	if err := rp.run(); err != nil {
		return rp.r, err
	}
	rp.finish()
	return rp.r, nil
}

// replayer is the state of one replay run: the cluster, the event queues
// and what the run has measured so far. Its methods are the steps of the
// run: arrive, depart, expire, start, fail, sample and, with teams, admitted
// and evict.
type replayer struct {
	ctx        context.Context
	w          *Workload
	pl         placer
	c          *cluster.Cluster
	pods       []cluster.Pod // with teams: a copy, as admission restricts their models
	placements bool
	r          Result

	arrivals []int // pods in creation order
	ai       int   // how many have arrived
	seq      []int // arrival number of pod i, from 1

	gq      *gangQueue // with gangs: pods that start together
	tq      *teamQueue // with teams: the quota side
	gen     []uint32   // with teams: each pod's run, counting preemptions
	started []bool     // with teams: the pod has started once
	running []bool     // with teams: the pod runs now
	runNode []int
	runGPUs []cluster.GPUSet

	frag   *fragTracker
	use    *useTracker
	meter  *prices.Meter // GPU-hours and USD, allocated and idle
	failed failures
	recs   []Placement

	deps      departures
	expiries  departures // deletion times of waiting pods
	isWaiting []bool
	waiting   []int
	delays    []float64

	t0, now     float64
	sampleEvery float64
	nextSample  float64
}

// newReplayer sets up a replay of w: the empty cluster, the pods in
// arrival order, the meter and, with tm, the team queue.
func newReplayer(ctx context.Context, w *Workload, pl placer, rng *rand.Rand, placements bool, tm *Teams) (*replayer, error) {
	c := w.newCluster(rng)
	rp := &replayer{
		ctx:        ctx,
		w:          w,
		pl:         pl,
		c:          c,
		pods:       w.pods,
		placements: placements,
		arrivals:   arrivalOrder(w.specs),
		seq:        make([]int, len(w.specs)),
		frag:       newFragTracker(w.target, c),
		failed:     failures{},
		isWaiting:  make([]bool, len(w.specs)),
	}
	if w.sharing.Mode != "" {
		rp.use = newUseTracker(w, c)
	}
	if placements {
		rp.recs = make([]Placement, len(rp.arrivals))
	}
	rp.t0 = w.specs[rp.arrivals[0]].Creation
	rp.now = rp.t0
	rp.meter = prices.NewMeter(rp.t0)
	for i := range c.Nodes {
		rp.meter.AddCapacity(c.Nodes[i].DeviceMilli(int64(c.Nodes[i].GPUs())*cluster.MilliGPU), w.devicePrice(&c.Nodes[i]))
	}
	if tm != nil {
		if err := rp.withTeams(tm); err != nil {
			return nil, err
		}
	}
	// The timeline spans the trace's times, from the first creation to the
	// last creation or deletion.
	end := w.specs[rp.arrivals[len(rp.arrivals)-1]].Creation
	for _, s := range w.specs {
		if !math.IsNaN(s.Deletion) {
			end = math.Max(end, s.Deletion)
		}
	}
	rp.sampleEvery = math.Max((end-rp.t0)/timelinePoints, 1)
	rp.nextSample = rp.t0
	rp.r.Replay = &ReplayStats{}
	return rp, nil
}

// arrivalOrder returns the pods' indices by creation time, stable.
func arrivalOrder(specs []trace.PodSpec) []int {
	arrivals := make([]int, len(specs))
	for i := range arrivals {
		arrivals[i] = i
	}
	sort.SliceStable(arrivals, func(a, b int) bool { return specs[arrivals[a]].Creation < specs[arrivals[b]].Creation })
	return arrivals
}

// runFor is how long pod s runs once placed: as long as it ran in the
// trace, or held its place in the trace's queue; to the end without
// deletion_time.
func runFor(s *trace.PodSpec) float64 {
	switch {
	case math.IsNaN(s.Deletion):
		return math.Inf(1)
	case !math.IsNaN(s.Scheduled):
		return math.Max(0, s.Deletion-s.Scheduled)
	}
	return math.Max(0, s.Deletion-s.Creation)
}

// withTeams sets up the quota side: the team queue, which places the pods
// it admits and evicts those it preempts.
func (rp *replayer) withTeams(tm *Teams) error {
	w := rp.w
	rp.pods = append([]cluster.Pod(nil), w.pods...) // admission restricts their models
	tq, err := newTeamQueue(w, rp.pods, tm, rp.t0)
	if err != nil {
		return err
	}
	rp.tq = tq
	if rp.placements {
		tq.events = new([]quotaEvent)
	}
	n := len(rp.pods)
	rp.gen, rp.started, rp.running = make([]uint32, n), make([]bool, n), make([]bool, n)
	rp.runNode, rp.runGPUs = make([]int, n), make([]cluster.GPUSet, n)
	tq.place = rp.admitted
	tq.evict = rp.evict
	return nil
}

// teamPod reports whether pod i is a GPU pod under a team's quota.
func (rp *replayer) teamPod(i int) bool { return rp.tq != nil && rp.tq.wlOf[i] >= 0 }

// team is the team of teamPod i.
func (rp *replayer) team(i int) int { return rp.tq.wls[rp.tq.wlOf[i]].team }

// advance moves the clock to t, if t is later.
func (rp *replayer) advance(t float64) {
	if t > rp.now {
		if rp.tq != nil {
			rp.tq.advance(t)
		}
		rp.meter.Advance(t)
		rp.now = t
	}
}

// run handles the events in time order until none is left.
func (rp *replayer) run() error {
	steps := 0
	for rp.ai < len(rp.arrivals) || len(rp.deps) > 0 || len(rp.expiries) > 0 {
		steps++
		if steps&1023 == 0 && rp.ctx.Err() != nil {
			return rp.ctx.Err()
		}
		if err := rp.step(); err != nil {
			return err
		}
	}
	return nil
}

// step handles the next event. A waiting pod leaves at its deletion time,
// before a departure or arrival at the same instant: it was deleted then in
// the trace. Departures at or before the next arrival go first, so that an
// arrival at the same instant sees the freed resources.
func (rp *replayer) step() error {
	next := math.Inf(1) // the next arrival's time
	if rp.ai < len(rp.arrivals) {
		next = rp.w.specs[rp.arrivals[rp.ai]].Creation
	}
	exp, deps := rp.expiries, rp.deps
	switch {
	case len(exp) > 0 && exp[0].at <= next && (len(deps) == 0 || exp[0].at <= deps[0].at):
		return rp.expire(heap.Pop(&rp.expiries).(departure))
	case len(deps) > 0 && deps[0].at <= next:
		return rp.depart(heap.Pop(&rp.deps).(departure))
	}
	return rp.arrive()
}

// arrive handles the next arrival: the pod is placed at once if it fits,
// fails if it fits no node of the empty cluster, else waits. With teams a
// GPU pod goes to its team's quota first.
func (rp *replayer) arrive() error {
	i := rp.arrivals[rp.ai]
	rp.ai++
	rp.seq[i] = rp.ai
	rp.advance(rp.w.specs[i].Creation)
	rp.r.Pods++
	rp.r.ArrivedGPUMilli += rp.w.askedPods()[i].TotalGPUMilli() // as asked, under any sharing mode
	if rp.teamPod(i) {
		if err := rp.teamArrival(i); err != nil {
			return err
		}
		rp.sample()
		return nil
	}
	if rp.inGang(i) {
		if err := rp.gangArrival(i); err != nil {
			return err
		}
		rp.sample()
		return nil
	}
	switch node, gpus, ok := rp.pl.Place(rp.c, &rp.pods[i]); {
	case ok:
		if err := rp.start(i, node, gpus); err != nil {
			return err
		}
	case rp.w.unfit[i] != "":
		rp.fail(i, rp.w.unfit[i])
	default:
		rp.wait(i)
		if del := rp.w.specs[i].Deletion; !math.IsNaN(del) {
			heap.Push(&rp.expiries, departure{at: del, pod: i})
		}
	}
	rp.sample()
	return nil
}

// teamArrival is a GPU pod's arrival with teams: it waits for its team's
// quota, which may admit it at once. A pod that fits no node of the empty
// cluster is no exception: Kueue admits by quota alone (without
// topology-aware scheduling it knows no nodes), so such a pod is admitted,
// waits for a node to its deletion or the end, and holds its team's quota
// meanwhile (TeamStats.AdmittedUnplaceable counts it).
func (rp *replayer) teamArrival(i int) error {
	if del := rp.w.specs[i].Deletion; !math.IsNaN(del) {
		heap.Push(&rp.expiries, departure{at: del, pod: i})
	}
	reason, err := rp.tq.arrive(i, rp.now, rp.pods)
	if reason != "" {
		rp.fail(i, reason)
	}
	return err
}

// finishUnstarted tells the team queue that pod i left without running;
// the pods of its workload that leave with it fail as deleted.
func (rp *replayer) finishUnstarted(i int) error {
	gone, err := rp.tq.finished(i, false, rp.pods)
	for _, j := range gone {
		rp.fail(j, ReasonDeleted)
	}
	return err
}

// admitted places a pod its team's quota admitted, or has it wait for a
// node.
func (rp *replayer) admitted(i int) error {
	if rp.w.unfit[i] != "" {
		rp.tq.stats[rp.team(i)].AdmittedUnplaceable++
	}
	if node, gpus, ok := rp.pl.Place(rp.c, &rp.pods[i]); ok {
		return rp.start(i, node, gpus)
	}
	rp.wait(i)
	return nil
}

// evict takes a preempted pod off its GPUs, or out of the wait for a
// node, and gives it back its models.
func (rp *replayer) evict(i int) error {
	switch {
	case rp.running[i]:
		if err := rp.free(i, rp.runNode[i], rp.runGPUs[i]); err != nil {
			return err
		}
		rp.tq.alloc[rp.team(i)] -= held(rp.c, rp.runNode[i], &rp.pods[i])
		rp.running[i] = false
		rp.gen[i]++
	case rp.isWaiting[i]:
		rp.unwait(i)
	}
	rp.pods[i].Models = rp.w.pods[i].Models
	return nil
}

// expire handles the deletion time of a pod that may still wait: for
// quota, or for a node. A pod that started before stays.
func (rp *replayer) expire(e departure) error {
	if rp.inGang(e.pod) {
		if rp.gq.waits[e.pod] {
			rp.gangExpire(e)
		}
		return nil
	}
	if rp.tq != nil && !rp.started[e.pod] && rp.tq.quotaWaiting(e.pod) {
		rp.advance(e.at)
		rp.fail(e.pod, ReasonDeleted)
		if err := rp.finishUnstarted(e.pod); err != nil {
			return err
		}
		rp.sample()
		return nil
	}
	if !rp.isWaiting[e.pod] || (rp.tq != nil && rp.started[e.pod]) {
		return nil // it started before
	}
	rp.advance(e.at)
	rp.unwait(e.pod)
	rp.fail(e.pod, ReasonDeleted)
	if rp.teamPod(e.pod) {
		if _, err := rp.tq.finished(e.pod, false, rp.pods); err != nil {
			return err
		}
	}
	rp.sample()
	return nil
}

// depart handles a pod's end: it leaves its GPUs, and waiting pods that now
// fit start. A departure from a run that was preempted is stale.
func (rp *replayer) depart(d departure) error {
	if rp.teamPod(d.pod) && d.gen != rp.gen[d.pod] {
		return nil // preempted before its end
	}
	rp.advance(d.at)
	if err := rp.free(d.pod, d.node, d.gpus); err != nil {
		return err
	}
	if err := rp.retryOn(d.node); err != nil {
		return err
	}
	if rp.gq != nil {
		if err := rp.retryGangs(); err != nil {
			return err
		}
	}
	if rp.teamPod(d.pod) {
		rp.running[d.pod] = false
		rp.tq.alloc[rp.team(d.pod)] -= held(rp.c, d.node, &rp.pods[d.pod])
		if _, err := rp.tq.finished(d.pod, true, rp.pods); err != nil {
			return err
		}
	}
	rp.sample()
	return nil
}

// retryOn starts the waiting pods, oldest first, that can be placed now
// that node freed resources. Only that node changed: a waiting pod can
// start now only if it fits there.
func (rp *replayer) retryOn(freed int) error {
	kept := rp.waiting[:0]
	for _, wi := range rp.waiting {
		if cluster.Feasible(&rp.c.Nodes[freed], &rp.pods[wi]) {
			if node, gpus, ok := rp.pl.Place(rp.c, &rp.pods[wi]); ok {
				rp.isWaiting[wi] = false
				if err := rp.start(wi, node, gpus); err != nil {
					return err
				}
				continue
			}
		}
		kept = append(kept, wi)
	}
	rp.waiting = kept
	return nil
}

// start runs pod i on gpus of node: it allocates them, records the pod's
// queueing delay and schedules its departure.
func (rp *replayer) start(i int, node int, gpus cluster.GPUSet) error {
	w, c, p := rp.w, rp.c, &rp.pods[i]
	took, err := allocate(rp.pl, c, node, p, gpus)
	if err != nil {
		return fmt.Errorf("placement chose an infeasible node: %w", err)
	}
	rp.frag.update(c, node)
	rp.meter.Allocate(took, w.devicePrice(&c.Nodes[node]))
	asked := served(c, node, &w.askedPods()[i])
	rp.r.ServedGPUMilli += asked
	rp.r.PaddingGPUMilli += held(c, node, p) - asked
	if rp.use != nil {
		rp.use.add(c, node, gpus, i, i)
	}
	wait := rp.now - w.specs[i].Creation
	var g uint32
	switch {
	case !rp.teamPod(i):
		rp.delays = append(rp.delays, wait)
	default:
		if !rp.started[i] {
			rp.delays = append(rp.delays, wait)
			team := rp.team(i)
			rp.tq.waits[team] = append(rp.tq.waits[team], wait)
		}
		rp.started[i], rp.running[i], rp.runNode[i], rp.runGPUs[i], g = true, true, node, gpus, rp.gen[i]
		rp.tq.alloc[rp.team(i)] += held(c, node, p)
	}
	if d := runFor(&w.specs[i]); !math.IsInf(d, 1) {
		heap.Push(&rp.deps, departure{at: rp.now + d, pod: i, node: node, gpus: gpus, gen: g})
	}
	if rp.placements {
		rp.recs[rp.seq[i]-1] = w.placement(rp.seq[i], i, c, node, gpus, true, rp.now, wait, "")
	}
	return nil
}

// free releases the gpus of node that pod i held.
func (rp *replayer) free(i, node int, gpus cluster.GPUSet) error {
	c := rp.c
	freed, err := release(rp.pl, c, node, &rp.pods[i], gpus)
	if err != nil {
		return err
	}
	rp.frag.update(c, node)
	rp.meter.Release(freed, rp.w.devicePrice(&c.Nodes[node]))
	if rp.use != nil {
		rp.use.remove(c, node, gpus, i)
	}
	return nil
}

// wait puts pod i in the queue for a node.
func (rp *replayer) wait(i int) {
	rp.waiting = append(rp.waiting, i)
	rp.isWaiting[i] = true
}

// unwait takes pod i out of the queue for a node.
func (rp *replayer) unwait(i int) {
	rp.isWaiting[i] = false
	for k, wi := range rp.waiting {
		if wi == i {
			rp.waiting = append(rp.waiting[:k], rp.waiting[k+1:]...)
			break
		}
	}
}

// fail records that pod i never started, for reason.
func (rp *replayer) fail(i int, reason string) {
	w := rp.w
	if rp.teamPod(i) {
		rp.tq.stats[rp.team(i)].NeverStarted++
	}
	rp.failed.add(reason, &w.specs[i])
	rp.r.FailedPods++
	if rp.placements {
		rp.recs[rp.seq[i]-1] = w.placement(rp.seq[i], i, rp.c, 0, 0, false, math.NaN(), rp.now-w.specs[i].Creation, reason)
	}
}

// sample adds a timeline point at the first event of each interval.
func (rp *replayer) sample() {
	if rp.now >= rp.nextSample {
		rp.r.Replay.Timeline = append(rp.r.Replay.Timeline, rp.timePoint())
		rp.nextSample = rp.t0 + (math.Floor((rp.now-rp.t0)/rp.sampleEvery)+1)*rp.sampleEvery
	}
}

// timePoint is the state now.
func (rp *replayer) timePoint() TimePoint {
	return TimePoint{Seconds: rp.now - rp.t0, AllocationRatio: rp.meter.AllocationRatio(), Waiting: len(rp.waiting)}
}

// finish closes the timeline, fails the pods still waiting and fills in
// the result.
func (rp *replayer) finish() {
	// The last point is the state at the end: a sample is taken at the
	// first event of its interval, so events later in the same interval
	// (pods leaving at the trace's last instant) would otherwise be lost.
	last := rp.timePoint()
	if tl := rp.r.Replay.Timeline; len(tl) > 0 && tl[len(tl)-1].Seconds == last.Seconds {
		tl[len(tl)-1] = last
	} else {
		rp.r.Replay.Timeline = append(tl, last)
	}
	for _, i := range rp.waiting {
		rp.fail(i, ReasonNoRoom)
	}
	if rp.gq != nil {
		rp.failGangsWaiting()
	}
	if tq := rp.tq; tq != nil {
		tq.advance(rp.now)
		for _, i := range tq.queuedPods() {
			if !rp.started[i] { // a preempted pod has started: not a failure
				rp.fail(i, ReasonQuotaWait)
			}
		}
		rp.r.Teams = tq.results()
		rp.r.QuotaEvents = tq.quotaEvents(rp.w.specs, rp.t0)
	}
	rp.r.Placements = rp.recs
	rp.r.Failed = rp.failed.groups()
	rp.stats()
	rp.w.finish(&rp.r, rp.c, rp.frag.exact())
	if rp.use != nil {
		rp.use.result(&rp.r, true)
	}
}

// P95Wait is the 95th percentile, nearest rank, of the waiting times of
// every pod: the sorted waits of the started pods and never pods that never
// started, each counting as waiting without end. It is +Inf when the rank
// falls on a pod never started (more than 5% of pods), 0 with no pods. This
// is the one p95 wait of gpuplane simulate: the replay tables and --size
// p95wait (sizing.Target.Measure) both use it.
func P95Wait(sorted []float64, never int) float64 {
	n := len(sorted) + never
	if n == 0 {
		return 0
	}
	k := max(0, int(math.Ceil(0.95*float64(n)))-1)
	if k >= len(sorted) {
		return math.Inf(1)
	}
	return sorted[k]
}

// stats fills in the replay's queueing delays, allocation and cost.
func (rp *replayer) stats() {
	st, delays, meter := rp.r.Replay, rp.delays, rp.meter
	st.Started = len(delays)
	st.NeverStarted = rp.r.FailedPods
	sort.Float64s(delays)
	if len(delays) > 0 {
		sum := 0.0
		for _, d := range delays {
			sum += d
		}
		st.QueueDelayMeanSeconds = sum / float64(len(delays))
		st.QueueDelayMaxSeconds = delays[len(delays)-1]
		for q := 0; q <= 100; q++ {
			st.DelayPercentiles = append(st.DelayPercentiles, percentile(delays, float64(q)/100))
		}
	}
	st.QueueDelayP95Seconds = P95Wait(delays, st.NeverStarted)
	st.SpanSeconds = rp.now - rp.t0
	st.TimeWeightedAllocationRatio = meter.TimeWeightedAllocationRatio()
	st.AllocatedGPUHours = meter.AllocatedGPUHours()
	st.IdleGPUHours = meter.IdleGPUHours()
	st.AllocatedCostUSD = meter.AllocatedUSD()
	st.IdleCostUSD = meter.IdleUSD()
}
