// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestDefaultPolicyAtLeastLeastAllocated: the scheduler the chart deploys
// by default (placement.DefaultPolicy under simulate's default tie-break,
// which deploy/helm's TestChartDefaultIsSimulators holds equal to the
// chart's) allocates at least as much as kube-scheduler's own scoring,
// leastallocated, on the built-in scenario and on openb's default trace,
// each with simulate's other defaults (fill, inflate 1.3, 3 seeds from 42).
func TestDefaultPolicyAtLeastLeastAllocated(t *testing.T) {
	t.Run("built-in", func(t *testing.T) { checkDefaultPolicy(t, "", "") })
	t.Run("openb default", func(t *testing.T) {
		checkDefaultPolicy(t, testenv.Openb(t, "openb_node_list_gpu_node.csv"), testenv.Openb(t, "openb_pod_list_default.csv"))
	})
}

func checkDefaultPolicy(t *testing.T, nodes, pods string) {
	o := DefaultOptions()
	o.NodesFile, o.PodsFile, o.Format = nodes, pods, "json"
	o.Policies = placement.DefaultPolicy + ",leastallocated"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	alloc := map[string]float64{}
	for _, s := range rep.Summary {
		alloc[s.Policy] = s.GPUAllocationRatioMean
	}
	def, least := alloc[placement.DefaultPolicy], alloc["leastallocated"]
	if def == 0 || least == 0 || def < least {
		t.Errorf("%s (tie-break %s) allocates %.2f%%, leastallocated %.2f%%: the chart's default must allocate at least as much",
			placement.DefaultPolicy, o.TieBreak, 100*def, 100*least)
	}
	t.Logf("%s %.2f%%, leastallocated %.2f%% (tie-break %s, %d seeds)", placement.DefaultPolicy, 100*def, 100*least, o.TieBreak, o.Seeds)
}
