// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestSnapshotDRANVIDIAShares reads a node whose two A100-80GB GPUs are
// published in NVIDIA's integer mode with 4 shares (gpu-0) and its
// unlimited mode (gpu-1), as sigs.k8s.io/dra-driver-nvidia-gpu (commit
// 95932046, cmd/gpu-kubelet-plugin/consumable_shares.go) and gpuplane's
// driver with --dra-consumable-shares publish them, with running pods of
// its demo templates (demo/specs/consumable-shares: one device of class
// gpu.nvidia.com, nothing more), allocated as the allocator does: q1
// consumes 1 share of 4 (and memory 0, milliGPU 1): 1000/4 = 250
// milli-GPU; q2 2 shares: 500; u on gpu-1 memory 0 and milliGPU 1: the
// smallest share, 1. A pending claim asking shares 2 is simulated as a
// whole GPU, with a warning.
func TestSnapshotDRANVIDIAShares(t *testing.T) {
	dev := func(minor int, caps string) string {
		return fmt.Sprintf(`{"name":"gpu-%d","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-%d"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"allowMultipleAllocations":true,"capacity":{%s}}`, minor, minor, caps)
	}
	const mem = `"memory":{"value":"80Gi","requestPolicy":{"default":"0","validRange":{"min":"0","max":"80Gi","step":"1Mi"}}},"milliGPU":{"value":"1k","requestPolicy":{"default":"1","validRange":{"min":"1","max":"1k","step":"1"}}}`
	const shares = `,"shares":{"value":"4","requestPolicy":{"default":"1","validRange":{"min":"1","max":"4","step":"1"}}}`
	plain := `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]`
	res := func(dev, id, consumed string) string {
		return `[{"request":"gpu","driver":"gpu.nvidia.com","pool":"a100","device":"` + dev + `","consumedCapacity":{` + consumed + `},"shareID":"` + id + `"}]`
	}
	s, err := Read("shares.json", strings.NewReader(list(
		`{"kind":"Node","metadata":{"name":"a100"},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110"}}}`,
		`{"kind":"ResourceSlice","metadata":{"name":"a100-gpu.nvidia.com-0"},"spec":{"driver":"gpu.nvidia.com","nodeName":"a100","pool":{"name":"a100","resourceSliceCount":1},"devices":[`+
			dev(0, mem+shares)+`,`+dev(1, mem)+`]}}`,
		podJSON("q1", "a100", "Running", `[{"name":"gpu","resourceClaimName":"q1"}]`, ``),
		draClaimJSON("q1", plain, res("gpu-0", "a", `"shares":"1","memory":"0","milliGPU":"1"`)),
		podJSON("q2", "a100", "Running", `[{"name":"gpu","resourceClaimName":"q2"}]`, ``),
		draClaimJSON("q2", `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"shares":"2"}}}}]`, res("gpu-0", "b", `"shares":"2","memory":"0","milliGPU":"1"`)),
		podJSON("u", "a100", "Running", `[{"name":"gpu","resourceClaimName":"u"}]`, ``),
		draClaimJSON("u", plain, res("gpu-1", "c", `"memory":"0","milliGPU":"1"`)),
		podJSON("ask", "", "Pending", `[{"name":"gpu","resourceClaimName":"ask"}]`, ``),
		draClaimJSON("ask", `[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"shares":"2"}}}}]`, ``),
	)))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		milli int16
		gpus  string
	}
	wants := map[string]want{"ml/q1": {250, "[0]"}, "ml/q2": {500, "[0]"}, "ml/u": {1, "[1]"}, "ml/ask": {1000, "[]"}}
	for _, p := range s.Pods {
		w, ok := wants[p.Name]
		if got := (want{p.GPUMilli, fmt.Sprint(p.GPUs)}); !ok || got != w || p.NumGPU != 1 {
			t.Errorf("pod %s: %d GPUs %+v, want 1 %+v", p.Name, p.NumGPU, got, w)
		}
		if p.Name != "ml/ask" && p.Resource != cluster.ResourceAny|cluster.ResourceClaimed {
			t.Errorf("pod %s: resource %v, want a share", p.Name, p.Resource)
		}
	}
	if len(s.Pods) != len(wants) {
		t.Errorf("%d pods, want %d", len(s.Pods), len(wants))
	}
	if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "capacity.requests.shares without milliGPU (NVIDIA's integer shares): simulated as a whole GPU") {
		t.Errorf("warnings lack the shares request:\n%s", w)
	}
}
