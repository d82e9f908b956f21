package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/cost"
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
// arrival. With placements it records what became of each pod. The
// workload has passed check("replay").
func replay(ctx context.Context, w *Workload, pl placer, rng *rand.Rand, placements bool) (Result, error) {
	c := w.newCluster(rng)
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

	frag := newFragTracker(w.target, c)
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
	meter := cost.NewMeter(t0) // GPU-hours and USD, allocated and idle
	for i := range c.Nodes {
		meter.AddCapacity(int64(c.Nodes[i].GPUs())*cluster.MilliGPU, w.price(c.Nodes[i].ModelID))
	}
	advance := func(t float64) {
		if t > now {
			meter.Advance(t)
			now = t
		}
	}
	start := func(i int, node int, gpus cluster.GPUSet) error {
		p := &w.pods[i]
		if err := pl.Allocate(c, node, p, gpus); err != nil {
			return fmt.Errorf("placement chose an infeasible node: %w", err)
		}
		frag.update(c, node)
		meter.Allocate(p.TotalGPUMilli(), w.price(c.Nodes[node].ModelID))
		wait := now - w.specs[i].Creation
		delays = append(delays, wait)
		if d := runFor(i); !math.IsInf(d, 1) {
			heap.Push(&deps, departure{at: now + d, pod: i, node: node, gpus: gpus})
		}
		if placements {
			recs[seq[i]-1] = w.placement(seq[i], i, c, node, gpus, true, now, wait, "")
		}
		return nil
	}
	fail := func(i int, reason string) {
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
			if !isWaiting[e.pod] {
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
			sample()
			continue
		}
		// Departures at or before the next arrival go first, so that an
		// arrival at the same instant sees the freed resources.
		if len(deps) > 0 && deps[0].at <= next {
			d := heap.Pop(&deps).(departure)
			advance(d.at)
			p := &w.pods[d.pod]
			if err := pl.Release(c, d.node, p, d.gpus); err != nil {
				return r, err
			}
			frag.update(c, d.node)
			meter.Release(p.TotalGPUMilli(), w.price(c.Nodes[d.node].ModelID))
			// Only the freed node changed: a waiting pod can start now only
			// if it fits there.
			kept := waiting[:0]
			for _, wi := range waiting {
				if cluster.Feasible(&c.Nodes[d.node], &w.pods[wi]) {
					if node, gpus, ok := pl.Place(c, &w.pods[wi]); ok {
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
			sample()
			continue
		}
		i := arrivals[ai]
		ai++
		seq[i] = ai
		advance(w.specs[i].Creation)
		r.Pods++
		r.ArrivedGPUMilli += w.pods[i].TotalGPUMilli()
		switch node, gpus, ok := pl.Place(c, &w.pods[i]); {
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
	return r, nil
}
