// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// filtersSnapshot: gpu-a (8 A100, tainted nvidia.com/gpu=present:NoSchedule,
// zone a), gpu-b (8 A100, the same taint, cordoned, zone b), cpu-0 (4
// cores, no GPUs). Pending: etl (1 core, no toleration), etl-tol (1 core,
// tolerates nvidia.com/gpu, nodeSelector zone a), big-cpu (8 cores, no
// toleration), mig-sel (1 GPU, tolerates, nodeSelector on the exact product
// NVIDIA-A100-SXM4-80GB-MIG-1g.10gb), notin (1 GPU, tolerates, zone NotIn
// a), spread (1 core, topologySpreadConstraints).
const filtersSnapshot = `{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"gpu-a","labels":{"nvidia.com/gpu.count":"8","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","zone":"a"}},
 "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"},{"key":"x","effect":"PreferNoSchedule"}]},
 "status":{"allocatable":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8"}}},
{"kind":"Node","metadata":{"name":"gpu-b","labels":{"nvidia.com/gpu.count":"8","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","zone":"b"}},
 "spec":{"unschedulable":true,"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
 "status":{"allocatable":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8"}}},
{"kind":"Node","metadata":{"name":"cpu-0"},"spec":{},"status":{"allocatable":{"cpu":"4","memory":"16Gi"}}},
{"kind":"Pod","metadata":{"name":"etl","namespace":"d"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"etl-tol","namespace":"d"},"spec":{"nodeSelector":{"zone":"a"},"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],
 "containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"big-cpu","namespace":"d"},"spec":{"containers":[{"resources":{"requests":{"cpu":"8","memory":"1Gi"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"mig-sel","namespace":"d"},"spec":{"nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"},"tolerations":[{"operator":"Exists"}],
 "containers":[{"resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"notin","namespace":"d"},"spec":{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],
 "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["a"]}]}]}}},
 "containers":[{"resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"spread","namespace":"d"},"spec":{"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}],
 "containers":[{"resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Pending"}}
]}`

// TestSnapshotFilters: under every policy, etl (no toleration) goes only to
// cpu-0, etl-tol only to gpu-a (its zone, a taint it tolerates); big-cpu
// fits only the GPU nodes by size, and their taint keeps it off (taint);
// no node carries mig-sel's exact product label (node_selector, not "any
// A100"); notin selects only gpu-b, which is cordoned (taint); spread
// places on cpu-0 with a warning naming it and the field.
func TestSnapshotFilters(t *testing.T) {
	file := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(file, []byte(filtersSnapshot), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.Seeds = file, 2
	rep := runJSON(t, o)
	if len(rep.Summary) != 9 {
		t.Fatalf("%d policies, want 9", len(rep.Summary))
	}
	want := map[string]struct{ node, reason string }{
		"d/etl": {"cpu-0", ""}, "d/etl-tol": {"gpu-a", ""}, "d/spread": {"cpu-0", ""},
		"d/big-cpu": {"", engine.ReasonTaint}, "d/mig-sel": {"", engine.ReasonSelector}, "d/notin": {"", engine.ReasonTaint},
	}
	for _, p := range rep.SnapshotPods {
		w, ok := want[p.Pod]
		switch {
		case !ok:
			t.Errorf("unexpected pod %+v", p)
		case w.node != "" && (p.Placed != p.Runs || p.Node != w.node):
			t.Errorf("%s under %s: placed %d of %d on %q, want every run on %s", p.Pod, p.Policy, p.Placed, p.Runs, p.Node, w.node)
		case w.node == "" && (p.Placed != 0 || p.Reason != w.reason):
			t.Errorf("%s under %s: placed %d, reason %q; want never, %s", p.Pod, p.Policy, p.Placed, p.Reason, w.reason)
		}
	}
	for _, s := range rep.Summary {
		if s.FailedByClass[engine.ClassTaint] != 2 || s.FailedByClass[engine.ClassSelector] != 1 {
			t.Errorf("%s: failed by class %v, want taint 2, selector 1", s.Policy, s.FailedByClass)
		}
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), `.spec.topologySpreadConstraints: pod "d/spread": not simulated`) {
		t.Errorf("no warning of spread's topologySpreadConstraints in %q", rep.Warnings)
	}
}
