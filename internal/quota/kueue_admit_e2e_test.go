// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// applyPlan creates the namespaces of a teams file and every object
// Plan writes for it on capacity.
func applyPlan(t *testing.T, c *kube.Cluster, teams string, capacity map[string]int) {
	t.Helper()
	applyPlanFor(t, c, teams, capacity, DevicePlugin)
}

// applyPlanFor is applyPlan with the objects of PlanFor for api.
func applyPlanFor(t *testing.T, c *kube.Cluster, teams string, capacity map[string]int, api string) {
	t.Helper()
	ctx := t.Context()
	ts, err := LoadTeams(teams)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range ts.Teams {
		for _, ns := range tm.Namespaces {
			if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	objs, err := PlanFor(teams, ts, capacity, api)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, objs); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range decodeAll(t, &buf) {
		r := dyn.Resource(gvr(o))
		if ns := o.GetNamespace(); ns != "" {
			_, err = r.Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
		} else {
			_, err = r.Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// startKueueCluster starts a control plane with kwok GPU nodes, Kueue
// v0.17.0 with exclude as resources.excludeResourcePrefixes, and
// gpuplane-scheduler.
func startKueueCluster(t *testing.T, nodes []kube.Node, exclude []string) *kube.Cluster {
	t.Helper()
	c := kube.StartT(t, kube.Options{})
	kube.StartKueueT(t, c, kube.KueueOptions{ExcludeResourcePrefixes: exclude})
	kube.StartGPUplaneSchedulerT(t, c)
	if err := c.CreateNodes(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	return c
}

// labNodes are the nodes of testdata/teams-kueue.yaml: two of 4
// A100-80GB, one of 4 T4.
var labNodes = []kube.Node{
	{Name: "a100-0", CPUMilli: 64000, MemoryMiB: 256 << 10, GPUs: 4, Model: "A100-80GB"},
	{Name: "a100-1", CPUMilli: 64000, MemoryMiB: 256 << 10, GPUs: 4, Model: "A100-80GB"},
	{Name: "t4-0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 4, Model: "T4"},
}

// TestQuotaOnKueue applies what gpuplane quota writes for
// testdata/teams-kueue.yaml to a running Kueue v0.17.0 configured as
// KueueConfig says, and runs Jobs asking GPUs, 1 cpu and 1 GiB each
// (kube.KueueJob), created one after another, each checked before the
// next:
//
//  1. vision-1, 4 GPUs: admitted within vision's nominal A100 quota (4),
//     on flavor a100-80gb; its pod is placed by gpuplane-scheduler on an
//     A100 node.
//  2. vision-2, 2 GPUs: admitted borrowing nlp's idle A100s (6 of
//     nominal 4 + borrowingLimit 2).
//  3. vision-3, 1 GPU: A100 would take vision to 7, past its
//     borrowingLimit, though nlp's 2 A100s are idle: Kueue takes the next
//     flavor, t4 (nominal 2), and the pod runs on the T4 node.
//  4. nlp-1, 4 GPUs, within nlp's nominal 4 but only 2 A100s free:
//     reclaimWithinCohort Any preempts the borrowing vision-2 (Preempted,
//     reason InCohortReclamation), the newest of vision's A100 workloads
//     and the one whose removal suffices (Kueue pkg/scheduler/preemption
//     classical), though vision's priority (100) is above nlp's (50); nlp-1
//     is admitted on a100-80gb and placed on an A100 node; vision-2 waits.
func TestQuotaOnKueue(t *testing.T) {
	c := startKueueCluster(t, labNodes, KueueConfig().Resources.ExcludeResourcePrefixes)
	applyPlan(t, c, "testdata/teams-kueue.yaml", map[string]int{"A100-80GB": 8, "T4": 4})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	model := func(node string) string {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Labels["nvidia.com/gpu.product"]
	}
	admitted := func(w kube.WorkloadState) bool { return w.Is("Admitted") }
	run := func(ns, name string, gpus int64, flavor, product string) {
		t.Helper()
		if _, err := c.Client.BatchV1().Jobs(ns).Create(ctx, kube.KueueJob(ns, name, ns, 1, gpus), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := c.WaitWorkload(ctx, ns, name, "Admitted", admitted)
		if err != nil {
			t.Fatal(err)
		}
		if w.Flavor != flavor {
			t.Errorf("%s admitted on flavor %q, want %q", name, w.Flavor, flavor)
		}
		nodes, err := c.WaitJobPods(ctx, ns, name, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := model(nodes[0]); got != product {
			t.Errorf("%s placed on %s (%s), want a %s node", name, nodes[0], got, product)
		}
		if err := kube.NextSecond(ctx, w.Conditions["QuotaReserved"].Since); err != nil {
			t.Fatal(err)
		}
	}
	run("vision", "vision-1", 4, "a100-80gb", "A100-80GB")
	run("vision", "vision-2", 2, "a100-80gb", "A100-80GB")
	run("vision", "vision-3", 1, "t4", "T4")
	run("nlp", "nlp-1", 4, "a100-80gb", "A100-80GB")
	w, err := c.WaitWorkload(ctx, "vision", "vision-2", "Preempted", func(w kube.WorkloadState) bool { return w.Is("Preempted") })
	if err != nil {
		t.Fatal(err)
	}
	if r := w.Conditions["Preempted"].Reason; r != "InCohortReclamation" {
		t.Errorf("vision-2 Preempted reason %q, want InCohortReclamation", r)
	}
	if w.Is("QuotaReserved") {
		t.Error("vision-2 still holds quota after its preemption")
	}
	for _, job := range []string{"vision-1", "vision-3"} {
		if w, err := c.JobWorkload(ctx, "vision", job); err != nil || !w.Is("Admitted") || w.Is("Preempted") {
			t.Errorf("%s: %+v %v, want admitted and not preempted", job, w.Conditions, err)
		}
	}
}

// TestQuotaOnKueueNeedsConfig shows why KueueConfig is part of the plan:
// with Kueue's default configuration (no excludeResourcePrefixes) the same
// objects leave a Job asking 1 GPU, 1 cpu and 1 GiB pending, its Workload
// without quota and Kueue saying cpu (or memory) is not covered.
func TestQuotaOnKueueNeedsConfig(t *testing.T) {
	c := startKueueCluster(t, labNodes[:1], nil)
	applyPlan(t, c, "testdata/teams-kueue.yaml", map[string]int{"A100-80GB": 8, "T4": 4})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if _, err := c.Client.BatchV1().Jobs("nlp").Create(ctx, kube.KueueJob("nlp", "small", "nlp", 1, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.WaitWorkload(ctx, "nlp", "small", "refused for quota", func(w kube.WorkloadState) bool {
		q, ok := w.Conditions["QuotaReserved"]
		return ok && q.Status == "False" && q.Message != ""
	})
	if err != nil {
		t.Fatal(err)
	}
	// Kueue names the first uncovered resource it meets, cpu or memory
	// (a map's order).
	msg := w.Conditions["QuotaReserved"].Message
	if !strings.Contains(msg, "resource cpu unavailable in ClusterQueue") && !strings.Contains(msg, "resource memory unavailable in ClusterQueue") {
		t.Errorf("QuotaReserved message %q, want resource cpu or memory unavailable in ClusterQueue", msg)
	}
}
