// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gpuplane/gpuplane/internal/placement"
)

func TestSetDefaultsArgs(t *testing.T) {
	var a Args
	SetDefaultsArgs(&a)
	if a.Policy != "fgdcm" || a.TieBreak != "random" || a.Popularity != 0.95 || a.TargetWorkloadFile != "" || a.Seed != 0 || a.Candidates == nil || *a.Candidates != 16 {
		t.Errorf("defaults %+v, want fgdcm, random, 0.95, 16 candidates", a)
	}
	// The defaults are the core's, which gpuplane simulate uses too.
	if a.Policy != placement.DefaultPolicy || a.TieBreak != placement.DefaultTieBreak || a.Popularity != placement.DefaultPopularity {
		t.Errorf("defaults %+v differ from placement's", a)
	}
	zero := int32(0)
	b := Args{Policy: "bestfit", TieBreak: "first", Popularity: 0.5, Candidates: &zero}
	SetDefaultsArgs(&b)
	if b != (Args{Policy: "bestfit", TieBreak: "first", Popularity: 0.5, Candidates: &zero}) || zero != 0 {
		t.Errorf("set fields changed: %+v", b)
	}
}

func TestValidateArgs(t *testing.T) {
	path := field.NewPath("pluginConfig").Index(0).Child("args")
	if err := ValidateArgs(path, &Args{Policy: "fgdcm", TieBreak: "first", Popularity: 1}); err != nil {
		t.Errorf("valid args: %v", err)
	}
	for _, c := range []struct {
		args Args
		want string
	}{
		{Args{Policy: "x", TieBreak: "random", Popularity: 0.95}, `pluginConfig[0].args.policy: Unsupported value: "x": supported values: "random", "dotproduct", "gpupacking", "gpuclustering", "bestfit", "fgd", "leastallocated", "mostallocated", "fgdcm"`},
		{Args{Policy: "fgd", TieBreak: "last", Popularity: 0.95}, `pluginConfig[0].args.tieBreak: Unsupported value: "last": supported values: "first", "random"`},
		{Args{Policy: "fgd", TieBreak: "random", Popularity: 1.5}, `pluginConfig[0].args.popularity: Invalid value: 1.5: must be in (0, 1]`},
		{Args{Policy: "fgd", TieBreak: "random", Popularity: -0.1}, `pluginConfig[0].args.popularity: Invalid value: -0.1: must be in (0, 1]`},
		{Args{Policy: "fgd", TieBreak: "random", Popularity: 1, Candidates: ptr(-1)}, `pluginConfig[0].args.candidates: Invalid value: -1: must be in 0..100 (0: every node)`},
		{Args{Policy: "fgd", TieBreak: "random", Popularity: 1, Candidates: ptr(101)}, `pluginConfig[0].args.candidates: Invalid value: 101: must be in 0..100 (0: every node)`},
	} {
		if err := ValidateArgs(path, &c.args); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v\nwant %s", c.args, err, c.want)
		}
	}
	// Every problem at once, as an aggregate.
	err := ValidateArgs(path, &Args{Policy: "x", TieBreak: "y", Popularity: 2, Candidates: ptr(-5)})
	if err == nil || strings.Count(err.Error(), "pluginConfig[0].args.") != 4 {
		t.Errorf("four bad fields: %v", err)
	}
}

func ptr(n int32) *int32 { return &n }

func TestBuildArgs(t *testing.T) {
	a := Args{}
	p, tie, err := a.build()
	if err != nil || p.Name() != placement.DefaultPolicy || tie != placement.TieRandom {
		t.Fatalf("build() = %v, %v, %v", p, tie, err)
	}
	a = Args{Policy: "magic"}
	if _, _, err := a.build(); err == nil || !strings.HasPrefix(err.Error(), `pluginConfig[GPUPlacement].args.policy: Unsupported value: "magic"`) {
		t.Errorf("unknown policy: %v", err)
	}
	a = Args{TargetWorkloadFile: "/nonexistent/pods.csv"}
	if _, _, err := a.build(); err == nil || !strings.HasPrefix(err.Error(), "pluginConfig[GPUPlacement].args.targetWorkloadFile: ") {
		t.Errorf("missing target workload file: %v", err)
	}
}
