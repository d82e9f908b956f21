// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package sizing

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Served is what the runs of one step of a search served, means over the
// seeds (filled in by the caller that knows the runs).
type Served struct {
	// Placed is the pods placed (fill) or started (replay).
	Placed float64 `json:"placed_pods"`
	// GPUHours is the GPU-hours served: fill, the GPUs the placed pods
	// asked for (engine.Result.ServedGPUMilli / 1000), each hour they
	// run; replay, the GPU-hours allocated over the trace's span
	// (engine.ReplayStats.AllocatedGPUHours).
	GPUHours float64 `json:"gpu_hours"`
	// USD is what the cluster's GPUs cost, idle or not, over the same
	// time: fill, one hour (Step.USDPerHour); replay, the span
	// (AllocatedCostUSD + IdleCostUSD).
	USD float64 `json:"usd" round:"cent"`
	// ByGroup is the pods placed of each VendorGroup, in the order of
	// VendorComparison.Groups.
	ByGroup []float64 `json:"placed_by_group"`
	// Added is the nodes added at the step (Step.Added).
	Added int `json:"-"`
}

// VendorGroup is the pods of a workload that accept the same vendors
// (cluster.Pod.AcceptedVendors; a pod without GPUs accepts all).
type VendorGroup struct {
	Accepts cluster.VendorSet `json:"-"`
	// Vendors names them ("nvidia", "nvidia|amd"; "nvidia|amd|intel":
	// any).
	Vendors string `json:"vendors"`
	Pods    int    `json:"pods"`
}

// VendorCandidate is one answer of a search set beside the others across
// vendors: its Served at the answer (not reached: at BestStep), and what
// its vendor cannot serve.
type VendorCandidate struct {
	Policy   string `json:"policy"`
	Sharing  string `json:"sharing,omitempty"`
	NodeType string `json:"node_type"`
	Model    string `json:"model"`
	Vendor   string `json:"vendor"`
	vendor   gpu.Vendor
	Reached  bool `json:"reached"`
	Added    int  `json:"added"`
	Served
	// USDPerServedGPUHour is USD / GPUHours (0 when nothing is served).
	USDPerServedGPUHour float64 `json:"usd_per_served_gpu_hour" round:"cent"`
	// CannotServe counts the pods that accept no vendor of its type:
	// adding nodes of it places none of them; CannotServePlaced of them
	// are placed anyway, on the other vendors' nodes of the cluster as
	// given.
	CannotServe       int     `json:"cannot_serve_pods"`
	CannotServePlaced float64 `json:"cannot_serve_placed"`
}

// VendorComparison is the decision across vendors of a --size search:
// per answer the pods placed, GPU-hours served and USD on the same
// workload, and what is not comparable.
type VendorComparison struct {
	// Replay: GPU-hours and USD over the trace's span; else (fill) per
	// hour of running.
	Replay     bool              `json:"replay"`
	Groups     []VendorGroup     `json:"groups"`
	Candidates []VendorCandidate `json:"candidates"`
	// NotComparable says which pods which models cannot serve.
	NotComparable []string `json:"not_comparable"`
}

// AcrossVendors reports whether a search compares vendors: the GPU node
// types of the cluster are of more than one vendor, or some pods accept
// only some vendors (groups other than all).
func AcrossVendors(types []trace.NodeSpec, groups []VendorGroup) bool {
	var seen cluster.VendorSet
	for _, s := range types {
		if s.GPUs > 0 {
			seen |= cluster.VendorSetOf(s.Vendor)
		}
	}
	if len(seen.Vendors()) > 1 {
		return true
	}
	for _, g := range groups {
		if g.Accepts != cluster.AllVendors {
			return true
		}
	}
	return false
}

// CompareVendors sets the answers of r that carry their Served side by
// side and says, for each group of pods that accepts only some vendors,
// the models of the cluster's GPU node types (types, TypeName naming
// them; searched or not) whose vendor cannot serve it.
func CompareVendors(r *Report, types []trace.NodeSpec, groups []VendorGroup) *VendorComparison {
	vc := &VendorComparison{Replay: r.Mode == "replay", Groups: groups}
	for _, x := range r.Results {
		if x.Served == nil {
			continue
		}
		c := VendorCandidate{Policy: x.Policy, Sharing: x.Sharing, NodeType: x.NodeType, Model: x.Model, Reached: x.Reached, Added: x.Answer.Added, Served: *x.Served}
		if !x.Reached {
			c.Added = x.Served.Added
		}
		i := slices.IndexFunc(types, func(s trace.NodeSpec) bool { return TypeName(s) == x.NodeType })
		if i < 0 {
			continue
		}
		v := types[i].Vendor
		c.Vendor, c.vendor = v.String(), v
		if c.GPUHours > 0 {
			c.USDPerServedGPUHour = c.USD / c.GPUHours
		}
		for j, g := range groups {
			if !g.Accepts.Has(v) && j < len(c.ByGroup) {
				c.CannotServe += g.Pods
				c.CannotServePlaced += c.ByGroup[j]
			}
		}
		vc.Candidates = append(vc.Candidates, c)
	}
	for _, g := range groups {
		if lost := cannotServe(types, g); len(lost) > 0 {
			pods := thousands(g.Pods) + " pods accept"
			if g.Pods == 1 {
				pods = "1 pod accepts"
			}
			vc.NotComparable = append(vc.NotComparable, fmt.Sprintf("%s only %s: %s cannot serve them", pods, strings.ReplaceAll(g.Vendors, "|", " or "), joinAnd(lost)))
		}
	}
	for _, c := range vc.Candidates {
		if left := float64(c.CannotServe) - c.CannotServePlaced; c.Reached && left > 0 {
			vc.NotComparable = append(vc.NotComparable, fmt.Sprintf("%s, adding %s, meets %s with %s of the %s pods it cannot serve left unplaced",
				c.Policy, c.NodeType, r.Target, strconv.FormatFloat(left, 'f', -1, 64), thousands(c.CannotServe)))
		}
	}
	return vc
}

// BestServed returns the step of a search that did not reach its target
// to compare it by (CompareVendors), with what it served (served, by the
// step's Nodes): the fewest nodes added that place, within one pod
// (means over seeds), the most of the pods vendor v can serve (those of
// the groups that accept v; the others place only on the cluster as
// given, as the seeds fall). false when no step of curve was served.
func BestServed(curve []Step, served map[int]Served, groups []VendorGroup, v gpu.Vendor) (Step, Served, bool) {
	servable := func(s Served) float64 {
		n := 0.0
		for i, g := range groups {
			if g.Accepts.Has(v) && i < len(s.ByGroup) {
				n += s.ByGroup[i]
			}
		}
		return n
	}
	most := math.Inf(-1)
	for _, st := range curve {
		if s, ok := served[st.Nodes]; ok {
			most = math.Max(most, servable(s))
		}
	}
	for _, st := range curve { // by Added (SearchAdd sorts it)
		if s, ok := served[st.Nodes]; ok && servable(s) >= most-1 {
			return st, s, true
		}
	}
	return Step{}, Served{}, false
}

// cannotServe returns the models of the GPU node types whose vendor g's
// pods do not accept, each once, in order.
func cannotServe(types []trace.NodeSpec, g VendorGroup) []string {
	var out []string
	for _, ty := range types {
		if ty.GPUs > 0 && !g.Accepts.Has(ty.Vendor) && !slices.Contains(out, ty.Model) {
			out = append(out, ty.Model)
		}
	}
	return out
}

// joinAnd joins words as English does: "a", "a and b", "a, b and c".
func joinAnd(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// thousands writes n ≥ 0 with thousands separators: 2,073.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
