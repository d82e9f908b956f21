// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package workload

import (
	"context"
	"errors"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestServed: both resources served is nil; one or none is ErrNotServed.
func TestServed(t *testing.T) {
	for _, c := range []struct {
		resources []string
		served    bool
	}{{[]string{"workloads", "podgroups"}, true}, {[]string{"workloads"}, false}, {nil, false}} {
		cs := fake.NewClientset()
		d := cs.Discovery().(*fakediscovery.FakeDiscovery)
		if c.resources != nil {
			var rs []metav1.APIResource
			for _, r := range c.resources {
				rs = append(rs, metav1.APIResource{Name: r, Namespaced: true})
			}
			d.Resources = []*metav1.APIResourceList{{GroupVersion: GroupVersion, APIResources: rs}}
		}
		err := Served(d)
		if (err == nil) != c.served || (err != nil && !errors.Is(err, ErrNotServed)) {
			t.Errorf("resources %v: %v, want served %v", c.resources, err, c.served)
		}
	}
}

// TestGroup: an indexed Job of parallelism 3 (fake clients): its pod gets
// PodGroup job-idx of minCount 3, with its Workload, both owned by the
// Job; a dry run names it and makes nothing; a pod already in a group,
// one of an opted-out namespace, and one without controller get none.
func TestGroup(t *testing.T) {
	three, indexed := int32(3), batchv1.IndexedCompletion
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "idx", Namespace: "ml", UID: "u1"},
		Spec:       batchv1.JobSpec{Parallelism: &three, CompletionMode: &indexed}}
	dyn := dynamicfake.NewSimpleDynamicClient(scheme.Scheme, job)
	cs := fake.NewClientset()
	g := NewGrouper(dyn, cs)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "idx-0", Namespace: "ml",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}}}
	ctx := context.Background()

	if name, err := g.Group(ctx, pod, "ml", nil, true); err != nil || name != "job-idx" {
		t.Fatalf("dry run: %q %v", name, err)
	}
	if l, _ := cs.SchedulingV1beta1().PodGroups("ml").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("dry run made %d podgroups", len(l.Items))
	}
	if name, err := g.Group(ctx, pod, "ml", nil, false); err != nil || name != "job-idx" {
		t.Fatalf("Group: %q %v", name, err)
	}
	pg, err := cs.SchedulingV1beta1().PodGroups("ml").Get(ctx, "job-idx", metav1.GetOptions{})
	if err != nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 3 || pg.OwnerReferences[0].UID != "u1" || pg.Spec.WorkloadRef.WorkloadName != "job-idx" {
		t.Errorf("podgroup %+v %v", pg, err)
	}
	wl, err := cs.SchedulingV1beta1().Workloads("ml").Get(ctx, "job-idx", metav1.GetOptions{})
	if err != nil || wl.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang.MinCount != 3 || wl.Spec.ControllerRef.APIGroup != "batch" || wl.OwnerReferences[0].Kind != "Job" {
		t.Errorf("workload %+v %v", wl, err)
	}

	grouped := pod.DeepCopy()
	name := "mine"
	grouped.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	for what, c := range map[string]struct {
		p  *corev1.Pod
		ns map[string]string
	}{
		"in a group":         {grouped, nil},
		"namespace opts out": {pod, map[string]string{"gpuplane.io/gang": "false"}},
		"no controller":      {&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "solo", Namespace: "ml"}}, nil},
	} {
		if n, err := g.Group(ctx, c.p, "ml", c.ns, false); n != "" || err != nil {
			t.Errorf("%s: %q %v, want no group", what, n, err)
		}
	}
}
