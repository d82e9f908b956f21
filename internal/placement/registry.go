// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"fmt"
	"sort"
	"strings"
)

// The defaults of gpuplane's placement, shared by gpuplane simulate
// (--tie-break, --popularity) and the scheduler plugin (GPUPlacement
// args), and shipped by the chart (scheduler.policy, scheduler.tieBreak in
// deploy/helm/gpuplane/values.yaml; a test fails when they differ):
// fgdcm, the best policy under kube-scheduler's random tie-break on both
// the built-in scenario and openb's default trace (docs/scheduler.md,
// "The default policy"), with the target workload of the pod shapes that
// cover 95% of the pods, as Weng et al. (USENIX ATC 2023) run FGD.
const (
	DefaultPolicy     = "fgdcm"
	DefaultTieBreak   = "random"
	DefaultPopularity = 0.95
)

// Names lists the policy names New accepts, in the order reports use: the
// one home of the names. The chart's copy (deploy/helm/gpuplane,
// gpuplane.policyNames in templates/_validate.tpl, which refuses
// scheduler.policy outside it) is checked against it by deploy/helm
// TestPolicyNames.
var Names = []string{"random", "dotproduct", "gpupacking", "gpuclustering", "bestfit", "fgd", "leastallocated", "mostallocated", "fgdcm"}

// registry maps each name of Names to its constructor.
var registry = map[string]func(tw *TargetWorkload) (Policy, error){
	"random":         func(*TargetWorkload) (Policy, error) { return Random{}, nil },
	"dotproduct":     func(*TargetWorkload) (Policy, error) { return DotProduct{}, nil },
	"gpupacking":     func(*TargetWorkload) (Policy, error) { return GPUPacking{}, nil },
	"gpuclustering":  func(*TargetWorkload) (Policy, error) { return GPUClustering{}, nil },
	"bestfit":        func(*TargetWorkload) (Policy, error) { return BestFit{}, nil },
	"fgd":            NewFGD,
	"leastallocated": func(*TargetWorkload) (Policy, error) { return LeastAllocated{}, nil },
	"mostallocated":  func(*TargetWorkload) (Policy, error) { return MostAllocated{}, nil },
	"fgdcm":          NewFGDCM,
}

// New returns the named policy. FGD and FGDCM need the target workload
// tw; the others ignore it.
func New(name string, tw *TargetWorkload) (Policy, error) {
	mk, ok := registry[name]
	if !ok {
		return nil, unknown(name)
	}
	return mk(tw)
}

func unknown(name string) error {
	return fmt.Errorf("unknown policy %q (known: %s, or all)", name, strings.Join(Names, ", "))
}

// ParseNames parses a comma-separated policy list; "all" means every policy.
// Duplicates are dropped; the result is in the order of Names.
func ParseNames(list string) ([]string, error) {
	if strings.TrimSpace(list) == "all" {
		return append([]string(nil), Names...), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if _, ok := registry[f]; !ok {
			return nil, unknown(f)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policy given")
	}
	sort.SliceStable(out, func(i, j int) bool { return index(out[i]) < index(out[j]) })
	return out, nil
}

func index(name string) int {
	for i, n := range Names {
		if n == name {
			return i
		}
	}
	return len(Names)
}
