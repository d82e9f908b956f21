// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestCandidatesFilteredOut runs the real scheduler with one candidate
// (args.candidates: 1) on three empty 8-GPU nodes, bestfit, tie-break
// first, so that the node PreFilter names is the one the placement core
// ranks first, and has other filters reject it:
//
//   - blocker (1 GPU, label app=blocker) goes to n0 (all tie; first name).
//   - avoid (1 GPU, required pod anti-affinity to app=blocker per
//     hostname): the core ranks n0 first (least free), InterPodAffinity
//     rejects it, the cycle fails; PostFilter retries avoid on every node
//     and it binds to n1 (n1 and n2 tie; first name), with one
//     FailedScheduling event that says so. Without the retry it waited in
//     the unschedulable queue (no event would move it).
//   - n0 is then tainted NoSchedule; c (1 GPU): the core ranks n0 and n1
//     first (one GPU used each; n0 by name), PreFilter skips the tainted
//     n0 itself and names n1: c binds there in its first cycle, without a
//     FailedScheduling event.
func TestCandidatesFilteredOut(t *testing.T) {
	var nodes []kube.Node
	for _, n := range []string{"n0", "n1", "n2"} {
		nodes = append(nodes, kube.Node{Name: n, CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 8, Model: "V100M16"})
	}
	c := startCluster(t, nodes)
	args := policyArgs("bestfit", "first")
	args["candidates"] = 1
	s := startScheduler(t, c, args)
	ctx := t.Context()
	pods := c.Client.CoreV1().Pods("default")

	blocker := makePod(podSpec{name: "blocker", cpu: "1", mem: "1Gi", gpus: 1})
	blocker.Labels = map[string]string{"app": "blocker"}
	if _, err := pods.Create(ctx, blocker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "blocker bound", bound(c.Client, "blocker"))
	if n := nodeOf(t, c.Client, "blocker"); n != "n0" {
		t.Fatalf("blocker on %s, want n0", n)
	}

	avoid := makePod(podSpec{name: "avoid", cpu: "1", mem: "1Gi", gpus: 1})
	avoid.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "blocker"}},
			TopologyKey:   "kubernetes.io/hostname",
		}},
	}}
	if _, err := pods.Create(ctx, avoid, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "avoid bound", bound(c.Client, "avoid"))
	if n := nodeOf(t, c.Client, "avoid"); n != "n1" {
		t.Errorf("avoid on %s, want n1", n)
	}
	var note string
	waitFor(t, s, "the retry's FailedScheduling event of avoid", func() (bool, error) {
		var err error
		note, err = failedScheduling(c.Client, "avoid")
		return note != "", err
	})
	if !strings.Contains(note, "every node is tried next") {
		t.Errorf("avoid's FailedScheduling note %q, want the retry on every node", note)
	}

	n0, err := c.Client.CoreV1().Nodes().Get(ctx, "n0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n0.Spec.Taints = append(n0.Spec.Taints, v1.Taint{Key: "maintenance", Effect: v1.TaintEffectNoSchedule})
	if _, err := c.Client.CoreV1().Nodes().Update(ctx, n0, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTaintSeen(t, s, c.Client, "n0")

	createPod(t, c.Client, podSpec{name: "c", cpu: "1", mem: "1Gi", gpus: 1})
	waitFor(t, s, "c bound", bound(c.Client, "c"))
	if n := nodeOf(t, c.Client, "c"); n != "n1" {
		t.Errorf("c on %s, want n1", n)
	}
	if note, err := failedScheduling(c.Client, "c"); err != nil || note != "" {
		t.Errorf("c had a failed cycle (%q, %v): PreFilter named the tainted node", note, err)
	}
}

func nodeOf(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	p, err := c.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Spec.NodeName
}

// failedScheduling returns the note of a FailedScheduling event of the
// pod, or "".
func failedScheduling(c kubernetes.Interface, pod string) (string, error) {
	evs, err := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, e := range evs.Items {
		if e.Reason == "FailedScheduling" && e.Regarding.Name == pod {
			return e.Note, nil
		}
	}
	return "", nil
}

// waitTaintSeen returns once the scheduler s has seen node's NoSchedule
// taint: a probe pod with a node selector for node alone stays pending
// with the taint as its reason. A probe the scheduler bound before its
// informer had the taint (a race under load) is deleted and another one
// created.
func waitTaintSeen(t *testing.T, s *schedulerProc, c kubernetes.Interface, node string) {
	t.Helper()
	pods := c.CoreV1().Pods("default")
	for i := 0; ; i++ {
		name := fmt.Sprintf("probe-%d", i)
		probe := makePod(podSpec{name: name, cpu: "1", mem: "1Gi"})
		probe.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		if _, err := pods.Create(t.Context(), probe, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var msg string
		boundTo := false
		waitFor(t, s, name+" refused for the taint, or bound", func() (bool, error) {
			p, err := pods.Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			msg, boundTo = unschedulable(p), p.Spec.NodeName != ""
			return msg != "" || boundTo, nil
		})
		if !boundTo {
			if !strings.Contains(msg, "untolerated taint") {
				t.Fatalf("%s refused with %q, want the taint", name, msg)
			}
			return
		}
		if i == 4 {
			t.Fatalf("the scheduler bound 5 probes to %s after its taint", node)
		}
		if err := pods.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
