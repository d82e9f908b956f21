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
)

// ReplayStats are the metrics of a replay run. Times are seconds of trace
// time.
type ReplayStats struct {
	// Started pods got a node; NeverStarted did not: they fit no node of
	// the empty cluster, left the queue at their deletion time, or were
	// still waiting at the end (Result.Failed says which).
	Started      int `json:"started_pods"`
	NeverStarted int `json:"never_started_pods"`
	// Queueing delay of started pods: start − creation_time.
	QueueDelayMeanSeconds float64 `json:"queue_delay_mean_seconds"`
	QueueDelayP95Seconds  float64 `json:"queue_delay_p95_seconds"`
	QueueDelayMaxSeconds  float64 `json:"queue_delay_max_seconds"`
	// TimeWeightedAllocationRatio is ∫ allocated dt / (capacity · span),
	// over the span from the first arrival to the last event.
	TimeWeightedAllocationRatio float64 `json:"time_weighted_gpu_allocation_ratio"`
	SpanSeconds                 float64 `json:"span_seconds"`
	// GPU-hours allocated and idle over the span, and what they cost.
	AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
	IdleGPUHours      float64 `json:"idle_gpu_hours"`
	AllocatedCostUSD  float64 `json:"allocated_cost_usd"`
	IdleCostUSD       float64 `json:"idle_cost_usd"`
	// Timeline samples allocation ratio and queue length over time.
	Timeline []TimePoint `json:"timeline,omitempty"`
	// DelayPercentiles[i] is the i-th percentile (0..100) of queueing delay.
	DelayPercentiles []float64 `json:"delay_percentiles_seconds,omitempty"`
}

// TimePoint is one timeline sample.
type TimePoint struct {
	Seconds         float64 `json:"t"`
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
func replay(ctx context.Context, w *Workload, pl placer, rng *rand.Rand, placements bool, tm *Teams) (Result, error) {
	c := w.newCluster(rng)
	pods := w.pods
	var r Result
	arrivals := make([]int, len(w.specs))
	for i := range arrivals {
		arrivals[i] = i
	}
	sort.SliceStable(arrivals, func(a, b int) bool { return w.specs[arrivals[a]].Creation < w.specs[arrivals[b]].Creation })
	runFor := func(i int) float64 {
		s := w.specs[i]
		switch {
		case math.IsNaN(s.Deletion):
			return math.Inf(1)
		case !math.IsNaN(s.Scheduled):
			return math.Max(0, s.Deletion-s.Scheduled)
		}
		return math.Max(0, s.Deletion-s.Creation)
	}

	var tq *teamQueue // with teams: the quota side
	var gen []uint32  // with teams: each pod's run, counting preemptions
	var started, running []bool
	var runNode []int
	var runGPUs []cluster.GPUSet
	frag := newFragTracker(w.target, c)
	var use *useTracker
	if w.sharing.Mode != "" {
		use = newUseTracker(w, c)
	}
	failed := failures{}
	var recs []Placement
	seq := make([]int, len(w.specs)) // arrival number of pod i, from 1
	if placements {
		recs = make([]Placement, len(arrivals))
	}
	var deps departures
	var expiries departures // deletion times of waiting pods
	isWaiting := make([]bool, len(w.specs))
	var waiting []int
	var delays []float64
	t0 := w.specs[arrivals[0]].Creation
	now := t0
	meter := prices.NewMeter(t0) // GPU-hours and USD, allocated and idle
	for i := range c.Nodes {
		meter.AddCapacity(int64(c.Nodes[i].GPUs())*cluster.MilliGPU, w.price(c.Nodes[i].ModelID))
	}
	advance := func(t float64) {
		if t > now {
			if tq != nil {
				tq.advance(t)
			}
			meter.Advance(t)
			now = t
		}
	}
	if tm != nil {
		pods = append([]cluster.Pod(nil), w.pods...) // admission restricts their models
		var err error
		if tq, err = newTeamQueue(w, pods, tm, t0); err != nil {
			return r, err
		}
		gen, started, running = make([]uint32, len(pods)), make([]bool, len(pods)), make([]bool, len(pods))
		runNode, runGPUs = make([]int, len(pods)), make([]cluster.GPUSet, len(pods))
	}
	start := func(i int, node int, gpus cluster.GPUSet) error {
		p := &pods[i]
		took, err := allocate(pl, c, node, p, gpus)
		if err != nil {
			return fmt.Errorf("placement chose an infeasible node: %w", err)
		}
		frag.update(c, node)
		meter.Allocate(took, w.price(c.Nodes[node].ModelID))
		if use != nil {
			use.add(c, node, gpus, i, i)
		}
		wait := now - w.specs[i].Creation
		var g uint32
		switch {
		case tq == nil || tq.wlOf[i] < 0:
			delays = append(delays, wait)
		default:
			if !started[i] {
				delays = append(delays, wait)
				team := tq.wls[tq.wlOf[i]].team
				tq.waits[team] = append(tq.waits[team], wait)
			}
			started[i], running[i], runNode[i], runGPUs[i], g = true, true, node, gpus, gen[i]
			tq.alloc[tq.wls[tq.wlOf[i]].team] += p.TotalGPUMilli()
		}
		if d := runFor(i); !math.IsInf(d, 1) {
			heap.Push(&deps, departure{at: now + d, pod: i, node: node, gpus: gpus, gen: g})
		}
		if placements {
			recs[seq[i]-1] = w.placement(seq[i], i, c, node, gpus, true, now, wait, "")
		}
		return nil
	}
	fail := func(i int, reason string) {
		if tq != nil && tq.wlOf[i] >= 0 {
			tq.stats[tq.wls[tq.wlOf[i]].team].NeverStarted++
		}
		failed.add(reason, &w.specs[i])
		r.FailedPods++
		if placements {
			recs[seq[i]-1] = w.placement(seq[i], i, c, 0, 0, false, math.NaN(), now-w.specs[i].Creation, reason)
		}
	}
	var span float64
	// The timeline spans the trace's times, from the first creation to the
	// last creation or deletion.
	end := w.specs[arrivals[len(arrivals)-1]].Creation
	for _, s := range w.specs {
		if !math.IsNaN(s.Deletion) {
			end = math.Max(end, s.Deletion)
		}
	}
	sampleEvery := math.Max((end-t0)/timelinePoints, 1)
	nextSample := t0
	sample := func() {
		if now >= nextSample {
			r.Replay.Timeline = append(r.Replay.Timeline, TimePoint{Seconds: now - t0, AllocationRatio: meter.AllocationRatio(), Waiting: len(waiting)})
			nextSample = t0 + (math.Floor((now-t0)/sampleEvery)+1)*sampleEvery
		}
	}
	if tq != nil {
		// An admitted pod is placed, or waits for a node.
		tq.place = func(i int) error {
			if node, gpus, ok := pl.Place(c, &pods[i]); ok {
				return start(i, node, gpus)
			}
			waiting = append(waiting, i)
			isWaiting[i] = true
			return nil
		}
		// A preempted pod leaves its GPUs, or the wait for a node.
		tq.evict = func(i int) error {
			switch {
			case running[i]:
				p := &pods[i]
				freed, err := release(pl, c, runNode[i], p, runGPUs[i])
				if err != nil {
					return err
				}
				frag.update(c, runNode[i])
				meter.Release(freed, w.price(c.Nodes[runNode[i]].ModelID))
				if use != nil {
					use.remove(c, runNode[i], runGPUs[i], i)
				}
				tq.alloc[tq.wls[tq.wlOf[i]].team] -= p.TotalGPUMilli()
				running[i] = false
				gen[i]++
			case isWaiting[i]:
				isWaiting[i] = false
				for k, wi := range waiting {
					if wi == i {
						waiting = append(waiting[:k], waiting[k+1:]...)
						break
					}
				}
			}
			pods[i].Models = w.pods[i].Models
			return nil
		}
	}
	// teamArrival is a GPU pod's arrival with teams: a pod that fits no
	// node of the empty cluster fails (and so does its workload); else it
	// waits for its team's quota, which may admit it at once.
	teamArrival := func(i int) error {
		if del := w.specs[i].Deletion; !math.IsNaN(del) {
			heap.Push(&expiries, departure{at: del, pod: i})
		}
		if w.unfit[i] != "" {
			fail(i, w.unfit[i])
			gone, err := tq.finished(i, false, pods)
			for _, j := range gone {
				fail(j, ReasonDeleted)
			}
			return err
		}
		reason, err := tq.arrive(i, now, pods)
		if reason != "" {
			fail(i, reason)
		}
		return err
	}
	r.Replay = &ReplayStats{}
	ai := 0
	steps := 0
	for ai < len(arrivals) || len(deps) > 0 || len(expiries) > 0 {
		steps++
		if steps&1023 == 0 && ctx.Err() != nil {
			return r, ctx.Err()
		}
		next := math.Inf(1) // the next arrival's time
		if ai < len(arrivals) {
			next = w.specs[arrivals[ai]].Creation
		}
		// A waiting pod leaves at its deletion time, before a departure or
		// arrival at the same instant: it was deleted then in the trace.
		if len(expiries) > 0 && expiries[0].at <= next && (len(deps) == 0 || expiries[0].at <= deps[0].at) {
			e := heap.Pop(&expiries).(departure)
			if tq != nil && !started[e.pod] && tq.quotaWaiting(e.pod) {
				advance(e.at)
				fail(e.pod, ReasonDeleted)
				gone, err := tq.finished(e.pod, false, pods)
				if err != nil {
					return r, err
				}
				for _, j := range gone {
					fail(j, ReasonDeleted)
				}
				sample()
				continue
			}
			if !isWaiting[e.pod] || (tq != nil && started[e.pod]) {
				continue // it started before
			}
			advance(e.at)
			isWaiting[e.pod] = false
			for k, wi := range waiting {
				if wi == e.pod {
					waiting = append(waiting[:k], waiting[k+1:]...)
					break
				}
			}
			fail(e.pod, ReasonDeleted)
			if tq != nil && tq.wlOf[e.pod] >= 0 {
				if _, err := tq.finished(e.pod, false, pods); err != nil {
					return r, err
				}
			}
			sample()
			continue
		}
		// Departures at or before the next arrival go first, so that an
		// arrival at the same instant sees the freed resources.
		if len(deps) > 0 && deps[0].at <= next {
			d := heap.Pop(&deps).(departure)
			if tq != nil && tq.wlOf[d.pod] >= 0 && d.gen != gen[d.pod] {
				continue // preempted before its end
			}
			advance(d.at)
			p := &pods[d.pod]
			freed, err := release(pl, c, d.node, p, d.gpus)
			if err != nil {
				return r, err
			}
			frag.update(c, d.node)
			meter.Release(freed, w.price(c.Nodes[d.node].ModelID))
			if use != nil {
				use.remove(c, d.node, d.gpus, d.pod)
			}
			// Only the freed node changed: a waiting pod can start now only
			// if it fits there.
			kept := waiting[:0]
			for _, wi := range waiting {
				if cluster.Feasible(&c.Nodes[d.node], &pods[wi]) {
					if node, gpus, ok := pl.Place(c, &pods[wi]); ok {
						isWaiting[wi] = false
						if err := start(wi, node, gpus); err != nil {
							return r, err
						}
						continue
					}
				}
				kept = append(kept, wi)
			}
			waiting = kept
			if tq != nil && tq.wlOf[d.pod] >= 0 {
				running[d.pod] = false
				tq.alloc[tq.wls[tq.wlOf[d.pod]].team] -= p.TotalGPUMilli()
				if _, err := tq.finished(d.pod, true, pods); err != nil {
					return r, err
				}
			}
			sample()
			continue
		}
		i := arrivals[ai]
		ai++
		seq[i] = ai
		advance(w.specs[i].Creation)
		r.Pods++
		r.ArrivedGPUMilli += pods[i].TotalGPUMilli()
		if tq != nil && tq.wlOf[i] >= 0 {
			if err := teamArrival(i); err != nil {
				return r, err
			}
			sample()
			continue
		}
		switch node, gpus, ok := pl.Place(c, &pods[i]); {
		case ok:
			if err := start(i, node, gpus); err != nil {
				return r, err
			}
		case w.unfit[i] != "":
			fail(i, w.unfit[i])
		default:
			waiting = append(waiting, i)
			isWaiting[i] = true
			if del := w.specs[i].Deletion; !math.IsNaN(del) {
				heap.Push(&expiries, departure{at: del, pod: i})
			}
		}
		sample()
	}
	// The last point is the state at the end: a sample is taken at the
	// first event of its interval, so events later in the same interval
	// (pods leaving at the trace's last instant) would otherwise be lost.
	last := TimePoint{Seconds: now - t0, AllocationRatio: meter.AllocationRatio(), Waiting: len(waiting)}
	if tl := r.Replay.Timeline; len(tl) > 0 && tl[len(tl)-1].Seconds == last.Seconds {
		tl[len(tl)-1] = last
	} else {
		r.Replay.Timeline = append(tl, last)
	}
	for _, i := range waiting {
		fail(i, ReasonNoRoom)
	}
	if tq != nil {
		tq.advance(now)
		for _, i := range tq.queuedPods() {
			if !started[i] { // a preempted pod has started: not a failure
				fail(i, ReasonQuotaWait)
			}
		}
		r.Teams = tq.results()
	}
	r.Placements = recs
	r.Failed = failed.groups()
	span = now - t0
	st := r.Replay
	st.Started = len(delays)
	st.NeverStarted = r.FailedPods
	sort.Float64s(delays)
	if len(delays) > 0 {
		sum := 0.0
		for _, d := range delays {
			sum += d
		}
		st.QueueDelayMeanSeconds = sum / float64(len(delays))
		st.QueueDelayP95Seconds = percentile(delays, 0.95)
		st.QueueDelayMaxSeconds = delays[len(delays)-1]
		for q := 0; q <= 100; q++ {
			st.DelayPercentiles = append(st.DelayPercentiles, percentile(delays, float64(q)/100))
		}
	}
	st.SpanSeconds = span
	st.TimeWeightedAllocationRatio = meter.TimeWeightedAllocationRatio()
	st.AllocatedGPUHours = meter.AllocatedGPUHours()
	st.IdleGPUHours = meter.IdleGPUHours()
	st.AllocatedCostUSD = meter.AllocatedUSD()
	st.IdleCostUSD = meter.IdleUSD()
	w.finish(&r, c, frag.exact())
	if use != nil {
		use.result(&r, true)
	}
	return r, nil
}
