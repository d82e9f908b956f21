// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package sizing

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/gpuplane/gpuplane/internal/cluster"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Growable returns the node types of list that --size may add nodes of, one
// node of each (a type's first node that skip does not rule out), in order
// of first appearance: types with GPUs, as cluster-autoscaler only grows a
// node group that some pending pod fits. CPU-only types are never grown;
// nor is a type all of whose nodes skip rules out (a cordoned node: its
// node group is not one the cluster's owner schedules onto). skipped are
// the types left out, and why.
func Growable(list []trace.NodeSpec, skip func(trace.NodeSpec) bool) (grow []trace.NodeSpec, skipped []SkippedType) {
	for _, ty := range types(list) {
		if ty[0].GPUs == 0 {
			skipped = append(skipped, SkippedType{Type: TypeName(ty[0]), Nodes: len(ty), Why: "CPU-only: no GPUs to add"})
			continue
		}
		i := slices.IndexFunc(ty, func(s trace.NodeSpec) bool { return skip == nil || !skip(s) })
		if i < 0 {
			skipped = append(skipped, SkippedType{Type: TypeName(ty[0]), Nodes: len(ty), Why: "cordoned (spec.unschedulable): not a node group to grow"})
			continue
		}
		grow = append(grow, ty[i])
	}
	return grow, skipped
}

// hostnameLabel is the well-known node label kubernetes.io/hostname.
const hostnameLabel = "kubernetes.io/hostname"

// Grow returns list with k nodes of type ty added at its end, named
// "<ty.Name>+add<j>" for j = 1..k, with ty's labels and taints (a node
// group's new nodes carry its labels and taints) but their own
// kubernetes.io/hostname.
func Grow(list []trace.NodeSpec, ty trace.NodeSpec, k int) []trace.NodeSpec {
	out := make([]trace.NodeSpec, 0, len(list)+max(k, 0))
	out = append(out, list...)
	for j := 1; j <= k; j++ {
		s := ty
		s.Name = ty.Name + "+add" + strconv.Itoa(j)
		if _, ok := ty.Labels[hostnameLabel]; ok {
			s.Labels = maps.Clone(ty.Labels)
			s.Labels[hostnameLabel] = s.Name
		}
		out = append(out, s)
	}
	return out
}

// SearchAdd finds the smallest number K of nodes of type ty that, added
// to list (Grow), meets the target, assuming that more nodes never hurt:
// K = 0 first (the cluster as given), then K = 1, 2, 4, ... up to
// MaxNodes − len(list) until the target holds, then bisection. It gives
// up when two doublings of K bring no gain (plateau). Each
// step is one eval; its Added is K, its Nodes len(list) + K, and its
// USDPerHour the price of the whole cluster's GPUs.
func SearchAdd(ctx context.Context, list []trace.NodeSpec, ty trace.NodeSpec, t Target, prices *cost.Prices, eval Eval) (Result, error) {
	if len(list) == 0 {
		return Result{}, errors.New("no nodes to grow")
	}
	s := &search{ctx: ctx, list: list, t: t, prices: prices, eval: eval, memo: map[int]bool{}}
	s.nodes = func(k int) []trace.NodeSpec { return Grow(list, ty, k) }
	s.added = func(k int) int { return k }
	limit := MaxNodes - len(list)
	h, err := s.try(0)
	hi := 0
	if err == nil && !h {
		lo := 0
		for hi = 0; err == nil && lo < limit && !s.plateau(lo); {
			m := min(max(1, 2*lo), limit)
			if h, err = s.try(m); err == nil && h {
				hi = m
				break
			}
			lo = m
		}
		if err == nil && hi > 0 {
			hi, err = s.bisect(lo, hi)
		}
		if hi == 0 {
			hi = -1 // not reached
		}
	}
	r := s.r
	r.NodeType = TypeName(ty)
	r.Model, r.GPUsPerNode = ty.Model, ty.GPUs
	if err != nil {
		return r, err
	}
	sort.Slice(r.Curve, func(i, j int) bool { return r.Curve[i].Added < r.Curve[j].Added })
	for _, st := range r.Curve {
		if st.Added == hi {
			r.Reached, r.Answer = true, st
		}
	}
	return r, nil
}

// plateau reports that adding k nodes (k ≥ 4) did no better than adding
// k/2, nor k/2 better than k/4, or for placed % less than placedGain
// better than k/4: two doublings without gain, so the pods
// the target waits on do not fit this type and adding more never reaches
// it. No better: placed no more pods, or a p95 wait no shorter. An
// infinite wait (more than 5% of pods never started) at all three gives
// up only from k ≥ 16 × the list's nodes: those pods may be starting,
// a few more with each step, below the p95.
func (s *search) plateau(k int) bool {
	if k < 4 {
		return false
	}
	v := map[int]*float64{}
	seen := map[int]bool{}
	for _, st := range s.r.Curve {
		v[st.Added], seen[st.Added] = st.Value, true
	}
	if !seen[k] || !seen[k/2] || !seen[k/4] {
		return false
	}
	noBetter := func(a, b *float64) bool {
		switch {
		case a == nil || b == nil:
			return a == nil && b == nil
		case s.t.Metric == "placed":
			return *a <= *b
		}
		return *a >= *b
	}
	if v[k] == nil && v[k/2] == nil && v[k/4] == nil && k < 16*len(s.list) {
		return false
	}
	if s.t.Metric == "placed" && v[k] != nil && v[k/4] != nil && *v[k]-*v[k/4] < placedGain {
		// Four times the nodes placed under half a point more:
		// the seeds' order of pods moves the mean up and down by about
		// as much (90.75, 91.75, 90.62% of 400 pods), which the strict
		// rule below reads as gains.
		return true
	}
	return noBetter(v[k], v[k/2]) && noBetter(v[k/2], v[k/4])
}

// placedGain is the gain in placed (a fraction: 0.005 is half a point of
// placed %) that four times the added
// nodes must bring for the search to go on growing a type.
const placedGain = 0.005

// TypeName names a node type: "H100-80GB x8 (96 CPU, 1,024 GiB)", or
// "H100-80GB x8 DRA (...)" for a node that serves its GPUs by DRA
// (NodeSpec.Serving).
func TypeName(s trace.NodeSpec) string {
	name := s.Model + " x" + strconv.Itoa(s.GPUs)
	if s.GPUs == 0 {
		name = "CPU-only"
	} else if s.Serving != cluster.ServedByDevicePlugin {
		name += " DRA"
	}
	return name + " (" + strconv.FormatFloat(float64(s.CPUMilli)/1000, 'f', -1, 64) + " CPU, " +
		strconv.FormatFloat(math.Round(float64(s.MemoryMiB)/1024*10)/10, 'f', -1, 64) + " GiB)"
}
