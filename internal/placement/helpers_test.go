// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// node builds a node as a scheduler does: capacity, then bound pods with
// the GPUs they hold.
func node(t *testing.T, model string, cpuMilli, memoryMiB int64, gpus int, bound ...binding) *cluster.Node {
	t.Helper()
	n, err := cluster.NewNode("n", model, cpuMilli, memoryMiB, gpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bound {
		if err := n.Add(&b.pod, b.gpus); err != nil {
			t.Fatal(err)
		}
	}
	return &n
}

type binding struct {
	pod  cluster.Pod
	gpus cluster.GPUSet
}

// handNode is a 2-GPU T4 node with 16 cores and 64 GiB: 4 cores, 16 GiB and
// 600 milli-GPU of GPU 0 allocated to one GPU-sharing pod. Free: 12000
// millicores, 49152 MiB, GPUs [400, 1000] (1400 milli-GPU).
func handNode(t *testing.T) *cluster.Node {
	t.Helper()
	return node(t, "T4", 16000, 65536, 2,
		binding{cluster.Pod{Name: "x", CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 600}, 1 << 0})
}

// Pods scored on handNode in the policies' tests.
var (
	sharePod = cluster.Pod{CPUMilli: 2000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 300}
	wholePod = cluster.Pod{CPUMilli: 2000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 1000}
	cpuPod   = cluster.Pod{CPUMilli: 1000, MemoryMiB: 1024}
)

// scoreCase is one row of a policy's score table.
type scoreCase struct {
	name string
	node *cluster.Node
	pod  cluster.Pod
	want int64
}

func runScores(t *testing.T, pol Policy, cases []scoreCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ok, why := cluster.Fits(tc.node, &tc.pod); !ok {
				t.Fatalf("test pod does not fit: %s", why)
			}
			if got := pol.Score(pol.PreScore(&tc.pod), tc.node, &tc.pod); got != tc.want {
				t.Errorf("%s score = %d, want %d", pol.Name(), got, tc.want)
			}
		})
	}
}
