// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Args are the plugin's arguments in a KubeSchedulerConfiguration
// profile's pluginConfig (JSON or YAML keys as below). SetDefaultsArgs
// fills in what is unset and ValidateArgs checks the result, as
// kube-scheduler's pkg/scheduler/apis/config does for its own plugins'
// args (SetDefaults_*, Validate*Args).
type Args struct {
	// Policy is a placement policy by the simulator's name ("fgd",
	// "bestfit", ...; placement.Names). Default placement.DefaultPolicy.
	Policy string `json:"policy"`
	// TieBreak is "first" (the lexicographically smallest node name among
	// the best, the openb simulator's rule) or "random" (kube-scheduler's
	// own). Default DefaultTieBreak.
	TieBreak string `json:"tieBreak"`
	// TargetWorkloadFile is an openb pod CSV whose pod shapes FGD measures
	// fragmentation against; empty means the simulator's built-in workload
	// (trace.ReadTargetPods).
	TargetWorkloadFile string `json:"targetWorkloadFile"`
	// Popularity is the share (0..1] of pods the target workload's most
	// popular shapes cover. Default placement.DefaultPopularity (0.95,
	// Weng et al., USENIX ATC 2023), as gpuplane simulate's --popularity.
	Popularity float64 `json:"popularity"`
	// Seed seeds the GPU choice of random policies.
	Seed uint64 `json:"seed"`
	// Candidates is how many nodes PreFilter names to the framework
	// (PreFilterResult.NodeNames): the best by the placement core's
	// ranking that pass the pod's nodeSelector, required node affinity,
	// taints and unschedulable mark. The framework filters and scores
	// those alone, and chooses the node the core ranks first whenever the
	// filters accept it, as scoring every node would. 0 names none: every
	// node is filtered and scored. Default DefaultCandidates. See
	// docs/scheduler.md, "Throughput".
	Candidates *int32 `json:"candidates,omitempty"`
}

// DefaultCandidates is the default of Args.Candidates.
const DefaultCandidates int32 = 16

// maxCandidates bounds Args.Candidates: past kube-scheduler's
// minFeasibleNodesToFind (100) the framework's node sampling applies to
// the named nodes too (pkg/scheduler/schedule_one.go,
// numFeasibleNodesToFind).
const maxCandidates = 100

// DefaultTieBreak is the plugin's default tie-break: kube-scheduler's own,
// gpuplane simulate's default too.
const DefaultTieBreak = placement.DefaultTieBreak

// tieBreaks are the values of Args.TieBreak.
var tieBreaks = []string{"first", "random"}

// argsPath is the path of the plugin's args in a profile, for errors.
var argsPath = field.NewPath("pluginConfig").Key(Name).Child("args")

// SetDefaultsArgs sets the defaults of the fields left unset (their zero
// values): policy, tie-break, popularity and candidates.
func SetDefaultsArgs(a *Args) {
	if a.Policy == "" {
		a.Policy = placement.DefaultPolicy
	}
	if a.TieBreak == "" {
		a.TieBreak = DefaultTieBreak
	}
	if a.Popularity == 0 {
		a.Popularity = placement.DefaultPopularity
	}
	if a.Candidates == nil {
		n := DefaultCandidates
		a.Candidates = &n
	}
}

// ValidateArgs checks defaulted args; path is where they are in the
// configuration (pluginConfig[i].args). The errors name the field, as
// kube-scheduler's own validation does:
// `pluginConfig[0].args.policy: Unsupported value: "x": supported values: ...`.
func ValidateArgs(path *field.Path, a *Args) error {
	var errs field.ErrorList
	if !slices.Contains(placement.Names, a.Policy) {
		errs = append(errs, field.NotSupported(path.Child("policy"), a.Policy, placement.Names))
	}
	if !slices.Contains(tieBreaks, a.TieBreak) {
		errs = append(errs, field.NotSupported(path.Child("tieBreak"), a.TieBreak, tieBreaks))
	}
	if !(a.Popularity > 0 && a.Popularity <= 1) {
		errs = append(errs, field.Invalid(path.Child("popularity"), a.Popularity, "must be in (0, 1]"))
	}
	if a.Candidates != nil && (*a.Candidates < 0 || *a.Candidates > maxCandidates) {
		errs = append(errs, field.Invalid(path.Child("candidates"), *a.Candidates, fmt.Sprintf("must be in 0..%d (0: every node)", maxCandidates)))
	}
	return errs.ToAggregate()
}

// build applies the defaults, validates the arguments and makes the
// policy.
func (a *Args) build() (placement.Policy, placement.TieBreak, error) {
	SetDefaultsArgs(a)
	if err := ValidateArgs(argsPath, a); err != nil {
		return nil, 0, err
	}
	tie, err := placement.ParseTieBreak(a.TieBreak)
	if err != nil {
		return nil, 0, field.Invalid(argsPath.Child("tieBreak"), a.TieBreak, err.Error())
	}
	tw, err := TargetWorkload(a.TargetWorkloadFile, a.Popularity)
	if err != nil {
		return nil, 0, err
	}
	p, err := placement.New(a.Policy, tw)
	if err != nil {
		return nil, 0, field.Invalid(argsPath.Child("policy"), a.Policy, err.Error())
	}
	return p, tie, nil
}

// TargetWorkload reads an openb pod list (or takes the built-in
// workload) into FGD's target workload (trace.ReadTargetPods, the reader
// beside the trace readers that gpuplane simulate uses).
func TargetWorkload(file string, popularity float64) (*placement.TargetWorkload, error) {
	pods, err := trace.ReadTargetPods(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", argsPath.Child("targetWorkloadFile"), err)
	}
	return placement.NewTargetWorkload(pods, popularity), nil
}
