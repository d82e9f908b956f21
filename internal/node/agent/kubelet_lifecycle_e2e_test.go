// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

func gpuLimit(n string) map[corev1.ResourceName]string {
	return map[corev1.ResourceName]string{gpuresource.GPU: n}
}

// TestRealKubeletAgentRestart: the agent restarts (SIGTERM, started again
// with the same arguments) while a pod holds GPUs 5 and 6 (realProfile's
// NVLinked pair). The new agent registers with the same kubelet, the Node
// shows 8 again, the pod stays Running and no container is created again
// (one CreateContainer record). The kubelet keeps its allocation in its
// checkpoint, so no GPU is given twice: a new pod asking for 2 gets GPUs 0
// and 1 (of the free 0-4 and 7 every pair within a NUMA node scores NODE
// 20; ties go to the lowest indices), and one asking for 4 gets exactly
// the 4 left, 2, 3, 4 and 7.
func TestRealKubeletAgentRestart(t *testing.T) {
	e := startRealEnv(t, realProfile, "version: v1\n")
	e.startAgent()
	e.waitResource(gpuresource.GPU, 8, 8)
	e.createPod("a", gpuLimit("2"), nil)
	e.waitRunning("a")
	if v, want := e.visible("a"), realUUIDs(5, 6); !slices.Equal(v, want) {
		e.fail("a: %v, want %v", v, want)
	}

	first := e.a
	first.stop(t)
	e.waitResource(gpuresource.GPU, 0, 8) // the kubelet saw the plugin go
	e.startAgent()
	if e.a == first {
		t.Fatal("same agent")
	}
	e.poll("the new agent registered", func() error {
		if n := strings.Count(e.a.log(), `"Registered with the kubelet" resource="nvidia.com/gpu"`); n != 1 {
			return fmt.Errorf("%d registrations", n)
		}
		return nil
	})
	e.waitResource(gpuresource.GPU, 8, 8)
	if err := e.running("a"); err != nil {
		t.Errorf("after the agent restart: %v", err)
	}
	if n := len(e.records()); n != 1 {
		t.Errorf("after the agent restart: %d CreateContainer records, want 1", n)
	}

	e.createPod("b", gpuLimit("2"), nil)
	e.waitRunning("b")
	if v, want := e.visible("b"), realUUIDs(0, 1); !slices.Equal(v, want) {
		t.Errorf("b: %v, want %v (GPUs 0 and 1)", v, want)
	}
	e.createPod("c", gpuLimit("4"), nil)
	e.waitRunning("c")
	if v, want := e.visible("c"), realUUIDs(2, 3, 4, 7); !slices.Equal(v, want) {
		t.Errorf("c: %v, want %v (GPUs 2, 3, 4, 7)", v, want)
	}
	if err := e.running("a"); err != nil {
		t.Error(err)
	}
	if n := len(e.records()); n != 3 {
		t.Errorf("%d CreateContainer records, want 3", n)
	}
}

// TestRealKubeletUnhealthyGPU: GPU 5, held by pod a (GPUs 5 and 6), gets
// XID 79 (fallen off the bus) in the mock's faults file. The kubelet's
// allocatable drops to 7 (capacity stays 8); pod a keeps running with its
// GPUs, its container not created again. Pod a is deleted, freeing 5 and
// 6; a pod asking for 7 gets every healthy GPU, 0-4, 6 and 7, never 5.
// The fault clears: allocatable 8 again, and a pod asking for 1 gets GPU
// 5, the only free one.
func TestRealKubeletUnhealthyGPU(t *testing.T) {
	e := startRealEnv(t, realProfile, "version: v1\n")
	e.startAgent()
	e.waitResource(gpuresource.GPU, 8, 8)
	e.createPod("a", gpuLimit("2"), nil)
	e.waitRunning("a")
	if v, want := e.visible("a"), realUUIDs(5, 6); !slices.Equal(v, want) {
		e.fail("a: %v, want %v", v, want)
	}

	e.setFaults("faults:\n  - uuid: " + realUUID(5) + "\n    xid: 79\n")
	e.waitResource(gpuresource.GPU, 7, 8)
	if err := e.running("a"); err != nil {
		t.Errorf("a after GPU 5 went unhealthy: %v", err)
	}
	if v, want := e.visible("a"), realUUIDs(5, 6); !slices.Equal(v, want) {
		t.Errorf("a after the fault: %v, want %v", v, want)
	}

	e.deletePod("a")
	e.createPod("b", gpuLimit("7"), nil)
	e.waitRunning("b")
	if v, want := e.visible("b"), realUUIDs(0, 1, 2, 3, 4, 6, 7); !slices.Equal(v, want) {
		t.Errorf("b: %v, want %v (every GPU but 5)", v, want)
	}

	e.setFaults("faults: []\n")
	e.waitResource(gpuresource.GPU, 8, 8)
	e.createPod("c", gpuLimit("1"), nil)
	e.waitRunning("c")
	if v, want := e.visible("c"), realUUIDs(5); !slices.Equal(v, want) {
		t.Errorf("c: %v, want %v (GPU 5, recovered)", v, want)
	}
	if n := len(e.records()); n != 3 {
		t.Errorf("%d CreateContainer records, want 3 (a, b, c)", n)
	}
}
