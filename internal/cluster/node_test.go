// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"reflect"
	"strings"
	"testing"
)

func TestNewNode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		model    string
		cpu, mem int64
		gpus     int
		err      string // substring; "" for success
		want     Node
	}{
		// T4 is catalog model 1; the catalog's spelling is kept.
		{"catalog model, lower case", "t4", 16000, 65536, 2, "",
			Node{Name: "catalog model, lower case", Model: "T4", ModelID: 1, CPUMilli: 16000, MemoryMiB: 65536, CPUFree: 16000, MemoryFree: 65536, GPUFree: []int64{1000, 1000}}},
		{"CPU-only node drops its model", "T4", 8000, 1024, 0, "",
			Node{Name: "CPU-only node drops its model", ModelID: -1, CPUMilli: 8000, MemoryMiB: 1024, CPUFree: 8000, MemoryFree: 1024, GPUFree: []int64{}}},
		{"negative cpu", "T4", -1, 1024, 1, "negative capacity", Node{}},
		{"negative memory", "T4", 1, -1024, 1, "negative capacity", Node{}},
		{"65 GPUs", "T4", 1, 1, 65, "gpu count 65 out of range 0..64", Node{}},
		{"GPUs without a model", "", 1, 1, 4, "4 GPUs without a model", Node{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NewNode(tc.name, tc.model, tc.cpu, tc.mem, tc.gpus)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "node "+tc.name+": ") {
					t.Fatalf("err = %v, want \"node %s: ...%s...\"", err, tc.name, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(n, tc.want) {
				t.Errorf("NewNode = %+v\nwant %+v", n, tc.want)
			}
		})
	}
}

func clone(n Node) Node {
	n.GPUFree = append([]int64(nil), n.GPUFree...)
	return n
}

// TestNodeBuilder builds a node's state as a scheduler does from a
// snapshot: capacity, then every bound pod with the GPUs it holds.
func TestNodeBuilder(t *testing.T) {
	n, err := NewNode("v100", "V100M32", 64000, 262144, 8)
	if err != nil {
		t.Fatal(err)
	}
	share := &Pod{Name: "share", CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 250}
	whole := &Pod{Name: "whole", CPUMilli: 16000, MemoryMiB: 65536, NumGPU: 4, GPUMilli: 1000}
	cpu := &Pod{Name: "cpu", CPUMilli: 2000, MemoryMiB: 1024}
	for _, b := range []struct {
		p    *Pod
		gpus GPUSet
	}{{share, 1 << 5}, {whole, 0b1111}, {cpu, 0}, {share, 1 << 5}} {
		if err := n.Add(b.p, b.gpus); err != nil {
			t.Fatal(err)
		}
	}
	// CPU 64000 − 4000 − 16000 − 2000 − 4000 = 38000; memory 262144 −
	// 16384 − 65536 − 1024 − 16384 = 162816; GPU 5 holds two 250 shares.
	want := Node{Name: "v100", Model: "V100M32", ModelID: 3, CPUMilli: 64000, MemoryMiB: 262144,
		CPUFree: 38000, MemoryFree: 162816, GPUFree: []int64{0, 0, 0, 0, 1000, 500, 1000, 1000},
		Pods: 4, AffinityKinds: 2, Version: 4}
	want.Affinity[0], want.Affinity[4] = 2, 1
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("built node = %+v\nwant %+v", n, want)
	}
	// Removing everything gives the empty node back, with the version moved on.
	for _, b := range []struct {
		p    *Pod
		gpus GPUSet
	}{{share, 1 << 5}, {cpu, 0}, {whole, 0b1111}, {share, 1 << 5}} {
		if err := n.Remove(b.p, b.gpus); err != nil {
			t.Fatal(err)
		}
	}
	empty, _ := NewNode("v100", "V100M32", 64000, 262144, 8)
	empty.Version = 8
	if !reflect.DeepEqual(n, empty) {
		t.Fatalf("after removing all = %+v\nwant %+v", n, empty)
	}
}

func TestNodeRefusalsChangeNothing(t *testing.T) {
	base := fitNode(t) // free 12000 millicores, 49152 MiB, GPUs [400, 1000]; one pod
	bound := &Pod{Name: "bound", CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 600}
	for _, tc := range []struct {
		name   string
		remove bool
		pod    Pod
		gpus   GPUSet
		err    string
	}{
		{"add: invalid pod", false, Pod{Name: "p", NumGPU: 2, GPUMilli: 500}, 0b11, "pod p: gpu_milli 500 below 1000"},
		{"add: cpu over-commit", false, Pod{Name: "p", CPUMilli: 12001}, 0, "cpu 12001/12000 millicores"},
		{"add: memory over-commit", false, Pod{Name: "p", MemoryMiB: 49153}, 0, "memory 49153/49152 MiB"},
		{"add: GPU over-commit", false, Pod{Name: "p", NumGPU: 1, GPUMilli: 401}, 1 << 0, "wants 401 milli-GPU on GPU 0 of node t4-node, 400 free"},
		{"add: whole GPU that is shared", false, Pod{Name: "p", NumGPU: 2, GPUMilli: 1000}, 0b11, "wants 1000 milli-GPU on GPU 0"},
		{"add: GPU beyond the node", false, Pod{Name: "p", NumGPU: 1, GPUMilli: 1000}, 1 << 2, "got set 100"},
		{"add: set smaller than the request", false, Pod{Name: "p", NumGPU: 2, GPUMilli: 1000}, 1 << 1, "wants 2 GPUs"},
		{"add: model not allowed", false, Pod{Name: "p", NumGPU: 1, GPUMilli: 100, Models: models(t, "A10")}, 1 << 1, `may not use GPU model "T4"`},
		{"remove: frees a free GPU", true, *bound, 1 << 1, "beyond 1000 milli-GPU"},
		{"remove: more CPU than capacity", true, Pod{Name: "p", CPUMilli: 4001}, 0, "would exceed node t4-node capacity"},
		{"remove: wrong set size", true, *bound, 0b11, "does not match 1 GPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := clone(*base)
			before := clone(n)
			var err error
			if tc.remove {
				err = n.Remove(&tc.pod, tc.gpus)
			} else {
				err = n.Add(&tc.pod, tc.gpus)
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one containing %q", err, tc.err)
			}
			if !reflect.DeepEqual(n, before) {
				t.Errorf("refused call changed the node:\n%+v\nwas %+v", n, before)
			}
		})
	}
	// Removing from a node without pods is refused too.
	empty, _ := NewNode("e", "T4", 1000, 1000, 1)
	if err := empty.Remove(&Pod{Name: "p"}, 0); err == nil {
		t.Error("removed a pod from an empty node")
	}
}
