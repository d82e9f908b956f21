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
}

// DefaultTieBreak is the plugin's default tie-break: kube-scheduler's own
// (gpuplane simulate defaults to the paper simulator's "first").
const DefaultTieBreak = "random"

// tieBreaks are the values of Args.TieBreak.
var tieBreaks = []string{"first", "random"}

// argsPath is the path of the plugin's args in a profile, for errors.
var argsPath = field.NewPath("pluginConfig").Key(Name).Child("args")

// SetDefaultsArgs sets the defaults of the fields left unset (their zero
// values): policy, tie-break and popularity.
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
