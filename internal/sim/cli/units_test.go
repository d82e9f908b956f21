// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"reflect"
	"testing"

	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestUnitWarnings: a node of 256 MiB (GiB given as MiB), one of 128,000
// cores (millicores given as cores), one of 0.128 cores (cores as
// millicores), and 2 pods asking more than the largest node's 786,432 MiB:
// by a MiB (a big pod) and 100 times (a unit).
func TestUnitWarnings(t *testing.T) {
	nodes := []trace.NodeSpec{
		{Name: "ok", CPUMilli: 96000, MemoryMiB: 786432, GPUs: 8, Model: "V100M32", Line: 2},
		{Name: "small", CPUMilli: 96000, MemoryMiB: 256, Line: 3},
		{Name: "huge", CPUMilli: 128_000_000, MemoryMiB: 65536, Line: 4},
		{Name: "tiny", CPUMilli: 128, MemoryMiB: 65536, Line: 5},
	}
	pods := []trace.PodSpec{
		{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, Line: 2},
		{Name: "b", CPUMilli: 1000, MemoryMiB: 786433, Line: 3},
		{Name: "c", CPUMilli: 1000, MemoryMiB: 100 * 786432, Line: 4},
	}
	want := []string{
		`n.csv: 1 of 4 nodes have 256 MiB of memory or the like (first "small", line 3); memory is in MiB (memory_mib; memoryGiB in cluster YAML): was GiB given as MiB?`,
		`n.csv: 1 of 4 nodes have 0.128 cores (cpu_milli 128) or the like (first "tiny", line 5); cpu_milli is in millicores: were cores given as millicores?`,
		`n.csv: 1 of 4 nodes have 128,000 cores or the like (first "huge", line 4); no server has over 4,096 cores: were millicores given as cores (cpu in cluster YAML is cores)?`,
		`p.csv: 2 of 3 pods ask more memory than any node of n.csv has (786,432 MiB): first "b", line 3 asks 786,433 MiB; they fit no node (too_large)`,
	}
	if got := unitWarnings("n.csv", nodes, "p.csv", pods); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// 100 times the largest node: a unit, not a big pod.
	if got := unitWarnings("n.csv", nodes[:1], "p.csv", pods[2:]); len(got) != 1 || got[0] != `p.csv: 1 of 1 pods ask more memory than any node of n.csv has (786,432 MiB): first "c", line 4 asks 78,643,200 MiB; memory_mib is MiB in both lists: is one in another unit?` {
		t.Errorf("100 times: %q", got)
	}
	if got := unitWarnings("n.csv", nodes[:1], "p.csv", pods[:1]); got != nil {
		t.Errorf("plausible lists warned: %q", got)
	}
}
