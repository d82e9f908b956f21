// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// curvePoints is how many samples a fill curve holds at most.
const curvePoints = 200

// maxFillPods bounds a fill run's pod count (the paper's runs submit about
// 11,000).
const maxFillPods = 20_000_000

// fill runs the fill experiment (the package doc); with placements it
// records what became of each pod. Arrived demand counts the pods as the
// trace asks for them, under any sharing mode. inflate 0 submits the
// trace's pods once each (Config.Once). The workload has passed
// check("fill").
func fill(ctx context.Context, w *Workload, pl placer, rng *rand.Rand, inflate float64, placements bool) (Result, error) {
	c := w.newCluster(rng)
	capacity := c.TotalGPUMilli()
	asked := w.askedPods()
	order, target, err := fillOrder(w, rng, inflate, capacity)
	if err != nil {
		return Result{}, err
	}
	frag := newFragTracker(w.target, c)
	var use *useTracker
	if w.sharing.Mode != "" {
		use = newUseTracker(w, c)
	}
	var r Result
	failed := failures{}
	var arrived int64
	step := float64(target) / curvePoints
	next := 0.0
	free := c.FreeGPUMilli() // less than capacity after Bind
	for k, i := range order {
		if k&1023 == 0 && ctx.Err() != nil {
			return r, ctx.Err()
		}
		p := &w.pods[i]
		arrived += asked[i].TotalGPUMilli()
		node, gpus, ok := pl.Place(c, p)
		if ok {
			took, err := allocate(pl, c, node, p, gpus)
			if err != nil {
				return r, fmt.Errorf("placement chose an infeasible node: %w", err)
			}
			free -= took
			got := served(c, node, &asked[i])
			r.ServedGPUMilli += got
			r.PaddingGPUMilli += held(c, node, p) - got
			frag.update(c, node)
			if use != nil {
				use.add(c, node, gpus, k, i)
			}
		} else {
			r.FailedPods++
			failed.add(w.failReason(i, ReasonNoRoom), &w.specs[i])
		}
		if placements {
			r.Placements = append(r.Placements, w.placement(k+1, i, c, node, gpus, ok, math.NaN(), math.NaN(), ReasonNoRoom))
		}
		if float64(arrived) >= next || k == len(order)-1 {
			pt := Point{ArrivedRatio: float64(arrived) / float64(capacity), AllocationRatio: float64(capacity-free) / float64(capacity)}
			if free > 0 {
				pt.FragmentationRatio = frag.sum / float64(free)
			}
			r.Curve = append(r.Curve, pt)
			next = (math.Floor(float64(arrived)/step) + 1) * step
		}
	}
	r.Pods = len(order)
	r.ArrivedGPUMilli = arrived
	r.Failed = failed.groups()
	w.finish(&r, c, frag.exact())
	if use != nil {
		use.result(&r, false)
	}
	return r, nil
}

// fillOrder returns the pods fill submits, in order, and the arrived GPU
// demand at which it stops: the trace's pods in random order (trimmed to
// the target), then samples with replacement until the next would pass
// inflate × capacity; with inflate 0, the trace's pods once each.
func fillOrder(w *Workload, rng *rand.Rand, inflate float64, capacity int64) ([]int, int64, error) {
	target := int64(math.Floor(inflate * float64(capacity)))
	order := rng.Perm(len(w.pods))
	asked := w.askedPods()
	var demand int64
	for _, i := range order {
		demand += asked[i].TotalGPUMilli()
	}
	if inflate == 0 {
		target = demand
	}
	order, demand = trim(order, demand, target, asked, rng)
	for inflate > 0 {
		if len(order) > maxFillPods {
			return nil, 0, fmt.Errorf("fill would submit more than %d pods before the GPU demand reaches %.2f × capacity: too few pods request GPUs", maxFillPods, inflate)
		}
		i := rng.IntN(len(w.pods))
		if demand+asked[i].TotalGPUMilli() > target {
			break
		}
		demand += asked[i].TotalGPUMilli()
		order = append(order, i)
	}
	return order, target, nil
}

// trim drops pods from order at random until their GPU demand is at most
// target, and returns the rest in their order and their demand. Each step
// draws k = rng.IntN(remaining) and drops the k-th remaining pod, as
// deleting order[k] from the slice would; a Fenwick tree over the
// positions still present finds it in O(log n).
func trim(order []int, demand, target int64, pods []cluster.Pod, rng *rand.Rand) ([]int, int64) {
	if demand <= target {
		return order, demand
	}
	n := len(order)
	tree := make([]int32, n+1) // 1-based; all positions present
	for i := 1; i <= n; i++ {
		tree[i] = int32(i & -i)
	}
	top := 1
	for top*2 <= n {
		top *= 2
	}
	dropped := make([]bool, n)
	for left := n; demand > target && left > 0; left-- {
		// The position (0-based) of the k-th present entry, k from 0.
		k := int32(rng.IntN(left))
		pos := 0
		for step := top; step > 0; step /= 2 {
			if next := pos + step; next <= n && tree[next] <= k {
				pos = next
				k -= tree[next]
			}
		}
		dropped[pos] = true
		demand -= pods[order[pos]].TotalGPUMilli()
		for i := pos + 1; i <= n; i += i & -i {
			tree[i]--
		}
	}
	kept := order[:0]
	for i, o := range order {
		if !dropped[i] {
			kept = append(kept, o)
		}
	}
	return kept, demand
}
