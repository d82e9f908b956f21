// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestRunProgress: 2 policies × 3 seeds on 3 runners: Progress hears 0 of
// 6 first, then each run's end, in order, up to 6 of 6.
func TestRunProgress(t *testing.T) {
	nodes := []trace.NodeSpec{{Name: "n", CPUMilli: 8000, MemoryMiB: 8192, GPUs: 2, Model: "T4"}}
	pods := []trace.PodSpec{{Name: "a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000}}
	w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	cfg := Config{Mode: "fill", Policies: []string{"bestfit", "fgd"}, Seeds: 3, Inflate: 1, Parallel: 3,
		Progress: func(done, total int) {
			if total != 6 {
				t.Errorf("total %d, want 6", total)
			}
			got = append(got, done)
		}}
	if _, err := Run(context.Background(), w, cfg); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("progress %v, want %v", got, want)
	}
}
