// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControllerManager: kube-controller-manager makes a Job's pod, a
// pod's ResourceClaim from its template, garbage-collects the pod with its
// Job, and marks a node nobody heartbeats unreachable.
func TestControllerManager(t *testing.T) {
	c := StartT(t, Options{ControllerManagerArgs: []string{"--node-monitor-period=1s", "--node-monitor-grace-period=3s", "--node-startup-grace-period=3s"}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs := c.Client
	t0 := time.Now()
	step := func(what string) { t.Logf("%s after %v", what, time.Since(t0).Round(time.Millisecond)) }

	// A node with no kubelet and no kwok: unreachable after the grace period.
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "silent"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	job, err := cs.BatchV1().Jobs("default").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "example.com/x:1"}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel := "batch.kubernetes.io/job-name=j"
	if err := c.waitUntil(ctx, "the Job's pod", func(ctx context.Context) error {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 || len(pods.Items[0].OwnerReferences) != 1 || pods.Items[0].OwnerReferences[0].UID != job.UID {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	step("the Job's pod")

	if _, err := cs.ResourceV1().ResourceClaimTemplates("default").Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := "gpu"
	if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "claimer"},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "main", Image: "example.com/x:1", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.waitUntil(ctx, "the pod's ResourceClaim", func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "claimer", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return fmt.Errorf("claim statuses %+v", p.Status.ResourceClaimStatuses)
		}
		_, err = cs.ResourceV1().ResourceClaims("default").Get(ctx, *p.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	step("the ResourceClaim")

	bg := metav1.DeletePropagationBackground
	if err := cs.BatchV1().Jobs("default").Delete(ctx, "j", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	if err := c.waitUntil(ctx, "the Job's pod garbage-collected", func(ctx context.Context) error {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		if len(pods.Items) != 0 {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	step("the pod garbage-collected")

	if err := c.waitUntil(ctx, "node silent tainted unreachable", func(ctx context.Context) error {
		n, err := cs.CoreV1().Nodes().Get(ctx, "silent", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return err
		}
		if err != nil {
			return err
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeUnreachable {
				return nil
			}
		}
		return fmt.Errorf("taints %v", n.Spec.Taints)
	}); err != nil {
		t.Fatal(err)
	}
	step("node silent unreachable")
}
