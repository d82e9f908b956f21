// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"io"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// checkPodVendors checks --pod-vendors (cluster.ParseVendorSet).
func (o Options) checkPodVendors() error {
	if _, err := cluster.ParseVendorSet(o.PodVendors); err != nil {
		return fmt.Errorf("--pod-vendors: %w", err)
	}
	return nil
}

// podVendors makes the GPU pods that name no vendor accept --pod-vendors'
// (trace.WithVendors), and says how many on stderr.
func (in *input) podVendors(o Options, stderr io.Writer) {
	vendors, _ := cluster.ParseVendorSet(o.PodVendors) // checked
	if vendors == 0 {
		return
	}
	var n int
	in.pods, n = trace.WithVendors(in.pods, vendors)
	fmt.Fprintf(stderr, "simulate: --pod-vendors %s: %d of %d pods of %s accept GPUs of %s only\n", o.PodVendors, n, len(in.pods), in.pName, vendors)
}

// vendorCmp is what a --size search across vendors keeps (sizing.
// AcrossVendors): the workload's pods grouped by the vendors they accept,
// and each pod's group by name.
type vendorCmp struct {
	groups  []sizing.VendorGroup
	groupOf map[string]int
}

// vendorGroups groups in's pods by the vendors they accept
// (cluster.Pod.AcceptedVendors; a pod without GPUs accepts all), in order
// of first appearance.
func (in *input) vendorGroups() *vendorCmp {
	vc := &vendorCmp{groupOf: make(map[string]int, len(in.pods))}
	index := map[cluster.VendorSet]int{}
	for _, s := range in.pods {
		kind, claim := s.Resource.SplitClaim()
		p := cluster.Pod{Resource: kind, Claim: claim, Vendors: s.Vendors}
		a := cluster.AllVendors
		if s.NumGPU > 0 {
			a = p.AcceptedVendors()
		}
		i, ok := index[a]
		if !ok {
			i = len(vc.groups)
			index[a] = i
			vc.groups = append(vc.groups, sizing.VendorGroup{Accepts: a, Vendors: a.String()})
		}
		vc.groups[i].Pods++
		vc.groupOf[s.Name] = i
	}
	return vc
}

// served is what runs served (sizing.Served), means over the seeds:
// pods placed, GPU-hours (fill: GPUs served each hour; replay: allocated
// over the span), the USD of a replay's span (fill's, the step's price
// per hour, is the caller's), and the pods placed of each group, from
// the runs' placements.
func (vc *vendorCmp) served(runs []engine.Result) sizing.Served {
	s := sizing.Served{ByGroup: make([]float64, len(vc.groups))}
	k := float64(max(1, len(runs)))
	for _, r := range runs {
		s.Placed += float64(r.Pods-r.FailedPods) / k
		if r.Replay != nil {
			s.GPUHours += r.Replay.AllocatedGPUHours / k
			s.USD += (r.Replay.AllocatedCostUSD + r.Replay.IdleCostUSD) / k
		} else {
			s.GPUHours += float64(r.ServedGPUMilli) / cluster.MilliGPU / k
		}
		for _, p := range r.Placements {
			if i, ok := vc.groupOf[p.Pod]; ok && p.Reason == "" {
				s.ByGroup[i] += 1 / k
			}
		}
	}
	return s
}

// answerServed is what res's answer served (not reached: its
// sizing.BestServed, of a type of vendor v), with fill's USD the step's
// price per hour; nil when no step was served.
func (vc *vendorCmp) answerServed(res sizing.Result, t sizing.Target, v gpu.Vendor, served map[int]sizing.Served) *sizing.Served {
	st, s, ok := res.Answer, served[res.Answer.Nodes], true
	if !res.Reached {
		st, s, ok = sizing.BestServed(res.Curve, served, vc.groups, v)
	}
	if !ok {
		return nil
	}
	if t.Mode() == "fill" {
		s.USD = st.USDPerHour
	}
	s.Added = st.Added
	return &s
}
