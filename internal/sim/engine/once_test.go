// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"testing"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestFillOnce: with Config.Once fill submits the trace's pods once each,
// whatever the cluster's size. 10 pods of one GPU (and one CPU-only pod,
// which adds no GPU demand) on nodes of 8 GPUs: one node places 8 of the
// GPU pods, two place all; Inflate is not checked.
func TestFillOnce(t *testing.T) {
	var pods []trace.PodSpec
	for i := range 10 {
		pods = append(pods, trace.PodSpec{Name: "p" + string(rune('a'+i)), CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Line: int32(i + 2)})
	}
	pods = append(pods, trace.PodSpec{Name: "cpu", CPUMilli: 1000, MemoryMiB: 1024, Line: 12})
	for _, tc := range []struct{ nodes, failed int }{{1, 2}, {2, 0}, {3, 0}} {
		var nodes []trace.NodeSpec
		for i := range tc.nodes {
			nodes = append(nodes, trace.NodeSpec{Name: "n" + string(rune('0'+i)), CPUMilli: 96000, MemoryMiB: 1 << 19, GPUs: 8, Model: "V100M32", Line: i + 2})
		}
		w, err := Prepare("nodes", nodes, "pods", pods, 0.95, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), w, Config{Mode: "fill", Policies: []string{"fgd", "leastallocated"}, Seeds: 2, Seed: 1, Once: true, TieBreak: placement.TieFirst})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Pods != 11 || r.FailedPods != tc.failed || r.ArrivedGPUMilli != 10000 {
				t.Errorf("%d nodes, %s seed %d: %d pods, %d failed, %d milli-GPU arrived; want 11, %d, 10000", tc.nodes, r.Policy, r.Seed, r.Pods, r.FailedPods, r.ArrivedGPUMilli, tc.failed)
			}
		}
	}
}
