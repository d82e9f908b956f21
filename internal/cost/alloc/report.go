// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package alloc

import (
	"fmt"
	"math"
	"math/big"
	"sort"
)

// By is the dimension rows are grouped by.
type By string

// Dimensions.
const (
	ByPod       By = "pod"       // namespace/pod
	ByJob       By = "job"       // namespace/job, the pod when no job
	ByNamespace By = "namespace" // namespace
	ByTeam      By = "team"      // team, "(none)" when none
	ByNode      By = "node"      // the GPU's node
	ByModel     By = "model"     // the GPU's model
)

// ParseBy returns the dimension named s.
func ParseBy(s string) (By, error) {
	switch b := By(s); b {
	case ByPod, ByJob, ByNamespace, ByTeam, ByNode, ByModel:
		return b, nil
	}
	return "", fmt.Errorf("by %q: want pod, job, namespace, team, node or model", s)
}

// Row is the cost of one group of holdings over the window.
type Row struct {
	// Key names the group, e.g. "ns/pod" by pod.
	Key string
	// GPUHoursAllocated is the GPU-hours held, shares priced as shares.
	GPUHoursAllocated float64
	// GPUHoursUsed is the GPU-hours held times the GPU's utilisation.
	GPUHoursUsed float64
	// Efficiency is GPUHoursUsed / GPUHoursAllocated (0 when nothing held).
	Efficiency float64
	// CostCents is the cost of the GPU-hours held, in US cents.
	CostCents int64
	// UnusedCents is the part of CostCents not used: CostCents's exact
	// value times (1 - Efficiency), rounded half up, in US cents.
	UnusedCents int64
	// Models are the GPU models held, sorted.
	Models []string
}

// IdleRow is the GPU capacity of one node and model that no pod held.
type IdleRow struct {
	Node, Model string
	// GPUHours is the GPU-hours no pod held.
	GPUHours float64
	// CostCents is their cost, in US cents.
	CostCents int64
}

// Report is a ledger's rows by one dimension, rounded to cents.
type Report struct {
	By   By
	Rows []Row     // sorted by Key
	Idle []IdleRow // sorted by node, model
	// AssetCents is the GPUs' cost over the window, rounded half up to the
	// cent: the sum of every row's and idle row's CostCents.
	AssetCents int64
	// GPUHours is the GPUs' capacity over the window, in GPU-hours.
	GPUHours float64
}

// key returns x's group under by.
func (x held) key(by By) string {
	h := x.h
	switch by {
	case ByPod:
		return h.name()
	case ByJob:
		return h.JobKey()
	case ByNamespace:
		if h.Namespace == "" {
			return "(unattributed)"
		}
		return h.Namespace
	case ByTeam:
		if h.Team == "" {
			return "(none)"
		}
		return h.Team
	case ByNode:
		return x.node
	}
	return x.model
}

// JobKey is the holding's row key by job: "namespace/job", the pod's
// "namespace/pod" when it has no job, "(unattributed)" without either.
func (h Holding) JobKey() string {
	if h.Pod == "" && h.Job == "" {
		return "(unattributed)"
	}
	if h.Job == "" {
		return h.Namespace + "/" + h.Pod
	}
	return h.Namespace + "/" + h.Job
}

func msToHours(r *big.Rat) float64 {
	f, _ := new(big.Rat).Quo(r, big.NewRat(msPerHour, 1)).Float64()
	return f
}

// Report groups the ledger's holdings by one dimension and rounds every
// row to cents by the largest remainder method: each row gets the floor of
// its exact cents, and the cents left to reach AssetCents go one each to the
// rows with the largest fractional parts (ties: holding rows before idle
// rows, then in sort order).
func (l *Ledger) Report(by By) Report {
	type acc struct {
		ms, cents *big.Rat
		usedMs    float64
		models    map[string]bool
	}
	groups := map[string]*acc{}
	for _, x := range l.holdings {
		k := x.key(by)
		a := groups[k]
		if a == nil {
			a = &acc{ms: new(big.Rat), cents: new(big.Rat), models: map[string]bool{}}
			groups[k] = a
		}
		a.ms.Add(a.ms, x.shareMs)
		a.cents.Add(a.cents, x.cents)
		a.usedMs += x.usedMs
		a.models[x.model] = true
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	idleKeys := make([]idleKey, 0, len(l.idle))
	for k := range l.idle {
		idleKeys = append(idleKeys, k)
	}
	sort.Slice(idleKeys, func(i, j int) bool {
		if idleKeys[i].node != idleKeys[j].node {
			return idleKeys[i].node < idleKeys[j].node
		}
		return idleKeys[i].model < idleKeys[j].model
	})

	exact := make([]*big.Rat, 0, len(keys)+len(idleKeys))
	for _, k := range keys {
		exact = append(exact, groups[k].cents)
	}
	for _, k := range idleKeys {
		exact = append(exact, l.idle[k].cents)
	}
	asset := roundHalfUp(l.asset)
	cents := largestRemainder(exact, asset)

	r := Report{By: by, AssetCents: asset}
	for i, k := range keys {
		a := groups[k]
		row := Row{Key: k, GPUHoursAllocated: msToHours(a.ms), GPUHoursUsed: a.usedMs / msPerHour, CostCents: cents[i]}
		if a.ms.Sign() > 0 {
			allocMs, _ := a.ms.Float64()
			row.Efficiency = a.usedMs / allocMs
			exactCents, _ := a.cents.Float64()
			row.UnusedCents = min(max(int64(math.Floor(exactCents*(1-row.Efficiency)+0.5)), 0), row.CostCents)
		}
		for m := range a.models {
			row.Models = append(row.Models, m)
		}
		sort.Strings(row.Models)
		r.Rows = append(r.Rows, row)
	}
	for j, k := range idleKeys {
		r.Idle = append(r.Idle, IdleRow{Node: k.node, Model: k.model, GPUHours: msToHours(l.idle[k].ms), CostCents: cents[len(keys)+j]})
	}
	total := new(big.Rat)
	for _, a := range groups {
		total.Add(total, a.ms)
	}
	for _, a := range l.idle {
		total.Add(total, a.ms)
	}
	r.GPUHours = msToHours(total)
	return r
}

// roundHalfUp returns the non-negative x rounded to the nearest integer,
// halves up.
func roundHalfUp(x *big.Rat) int64 {
	y := new(big.Rat).Add(x, big.NewRat(1, 2))
	return new(big.Int).Quo(y.Num(), y.Denom()).Int64()
}

// largestRemainder rounds the non-negative exact values to integers that
// add up to target (the sum of exact rounded half up): floors first, then
// one more to each of the values with the largest fractional parts, earlier
// values first among equals.
func largestRemainder(exact []*big.Rat, target int64) []int64 {
	out := make([]int64, len(exact))
	rem := make([]*big.Rat, len(exact))
	var sum int64
	for i, x := range exact {
		q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
		out[i] = q.Int64()
		rem[i] = new(big.Rat).SetFrac(m, x.Denom())
		sum += out[i]
	}
	order := make([]int, len(exact))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]].Cmp(rem[order[b]]) > 0 })
	for k := 0; k < int(target-sum) && k < len(order); k++ {
		out[order[k]]++
	}
	return out
}
