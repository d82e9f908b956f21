// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
)

// chartScheduler returns scheduler.policy and scheduler.tieBreak of the
// chart's values.yaml, read as they are (no helm needed).
func chartScheduler(t *testing.T) (policy, tieBreak string) {
	t.Helper()
	b, err := os.ReadFile(chart + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Scheduler struct {
			Policy   string `json:"policy"`
			TieBreak string `json:"tieBreak"`
		} `json:"scheduler"`
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Scheduler.Policy, v.Scheduler.TieBreak
}

// TestChartDefaultIsSimulators: the scheduler the chart deploys with its
// default values is the one gpuplane simulate describes by default: its
// policy is placement.DefaultPolicy, among the policies simulate compares
// by default, and its tie-break is simulate's default --tie-break (and
// the plugin's own defaults, for args left unset).
func TestChartDefaultIsSimulators(t *testing.T) {
	policy, tie := chartScheduler(t)
	o := cli.DefaultOptions()
	if policy != placement.DefaultPolicy {
		t.Errorf("values.yaml scheduler.policy %q, simulator's default placement.DefaultPolicy %q", policy, placement.DefaultPolicy)
	}
	if tie != o.TieBreak {
		t.Errorf("values.yaml scheduler.tieBreak %q, gpuplane simulate's default --tie-break %q", tie, o.TieBreak)
	}
	if pols, err := placement.ParseNames(o.Policies); err != nil || !slices.Contains(pols, policy) {
		t.Errorf("gpuplane simulate's default --policies %q (%v, %v) leave out the chart's %q", o.Policies, pols, err, policy)
	}
	var a scheduler.Args
	scheduler.SetDefaultsArgs(&a)
	if a.Policy != policy || a.TieBreak != tie {
		t.Errorf("GPUPlacement's default args %s, %s; the chart's %s, %s", a.Policy, a.TieBreak, policy, tie)
	}
}
