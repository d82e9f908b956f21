// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// TestRealKubeletPodBeforePlugin: a pod asking for a GPU is bound to the
// node before any device plugin registered. The real kubelet admits it and
// runs it without a GPU: nvidia.com/gpu is neither in the Node's capacity
// nor a device-plugin resource, and the kubelet's admission drops
// extended resources the node does not have (upstream
// removeMissingExtendedResources, there for a kubelet restarted before its
// plugins registered again). Then the agent registers and a pod asking
// the same runs with GPU 0. Then the agent stops: the kubelet marks its
// devices unhealthy (allocatable 0, capacity 8 kept) and a pod bound now
// fails with the kubelet's own UnexpectedAdmissionError.
func TestRealKubeletPodBeforePlugin(t *testing.T) {
	e := startRealEnv(t, realProfile, "version: v1\n")
	e.createPod("early", map[corev1.ResourceName]string{gpuresource.GPU: "1"}, nil)
	e.waitRunning("early")
	r := e.record("early")
	if v, ok := r.Env["NVIDIA_VISIBLE_DEVICES"]; ok || len(r.Devices) != 0 {
		t.Errorf("early: NVIDIA_VISIBLE_DEVICES %q (set %v), devices %v; want neither", v, ok, r.Devices)
	}
	e.startAgent()
	e.waitResource(gpuresource.GPU, 8, 8)
	e.createPod("late", map[corev1.ResourceName]string{gpuresource.GPU: "1"}, nil)
	e.waitRunning("late")
	// One GPU of 8, all scores equal: the lowest index.
	if v := e.visible("late"); strings.Join(v, ",") != realUUID(0) {
		t.Errorf("late: NVIDIA_VISIBLE_DEVICES %v, want GPU 0 %s", v, realUUID(0))
	}
	if err := e.running("early"); err != nil {
		t.Errorf("early after the plugin registered: %v", err)
	}

	e.a.stop(t)
	e.waitResource(gpuresource.GPU, 0, 8)
	e.createPod("unhealthy", map[corev1.ResourceName]string{gpuresource.GPU: "1"}, nil)
	reason, message := e.waitFailed("unhealthy")
	t.Logf("pod bound while the plugin is gone: reason %q, message %q", reason, message)
	if reason != "UnexpectedAdmissionError" || !strings.Contains(message, "nvidia.com/gpu") {
		t.Errorf("reason %q, message %q; want UnexpectedAdmissionError naming nvidia.com/gpu", reason, message)
	}
	if n := len(e.records()); n != 2 {
		t.Errorf("%d CreateContainer records, want 2 (early, late)", n)
	}
}

// TestRealKubeletFailRequestsGreaterThanOne: time-slicing with 4 replicas
// and failRequestsGreaterThanOne, not renamed: the kubelet sees
// nvidia.com/gpu 32 (8 GPUs x 4). A pod asking for 2 replicas is refused
// by the agent's Allocate, and the real kubelet fails the pod with its
// UnexpectedAdmissionError carrying the agent's message; a pod asking
// for 1 runs.
func TestRealKubeletFailRequestsGreaterThanOne(t *testing.T) {
	e := startRealEnv(t, realProfile, `version: v1
sharing:
  timeSlicing:
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
`)
	e.startAgent()
	e.waitResource(gpuresource.GPU, 32, 32)
	e.createPod("two", map[corev1.ResourceName]string{gpuresource.GPU: "2"}, nil)
	reason, message := e.waitFailed("two")
	t.Logf("2 replicas: reason %q, message %q", reason, message)
	const agentMsg = "request for 2 replicas refused: failRequestsGreaterThanOne allows one replica per container"
	if reason != "UnexpectedAdmissionError" || !strings.Contains(message, agentMsg) {
		t.Errorf("reason %q, message %q; want UnexpectedAdmissionError with %q", reason, message, agentMsg)
	}
	if n := len(e.records()); n != 0 {
		t.Errorf("%d CreateContainer records, want 0", n)
	}
	e.createPod("one", map[corev1.ResourceName]string{gpuresource.GPU: "1"}, nil)
	e.waitRunning("one")
	// Spread: the first replica comes from the GPU with the most free
	// replicas, ties to the lowest index: GPU 0.
	if v := e.visible("one"); strings.Join(v, ",") != realUUID(0) {
		t.Errorf("one: NVIDIA_VISIBLE_DEVICES %v, want GPU 0 %s", v, realUUID(0))
	}
}
