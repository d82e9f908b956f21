// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

var kueueGV = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// TestKueueConfiguration checks the configuration's fields against Kueue
// v0.17.0's apis/config/v1beta2 names: the keys it sets, and
// excludeResourcePrefixes only when given.
func TestKueueConfiguration(t *testing.T) {
	c := KueueConfiguration("/certs", 9443, 8081, nil)
	if _, ok := c["resources"]; ok {
		t.Error("resources set without prefixes")
	}
	wh := c["webhook"].(map[string]any)
	if wh["host"] != "127.0.0.1" || wh["port"] != 9443 || wh["certDir"] != "/certs" {
		t.Errorf("webhook %v", wh)
	}
	c = KueueConfiguration("/certs", 1, 2, []string{"cpu", "memory"})
	got := c["resources"].(map[string]any)["excludeResourcePrefixes"].([]string)
	if strings.Join(got, ",") != "cpu,memory" {
		t.Errorf("excludeResourcePrefixes %v", got)
	}
}

// TestMergeKueueConfig: KueueOptions.Config's keys replace the test
// cluster's (resources here), and its featureGates keep the gate the test
// cluster needs, VisibilityOnDemand off; a featureGates that is no map is
// refused.
func TestMergeKueueConfig(t *testing.T) {
	c := KueueConfiguration("/certs", 1, 2, []string{"cpu"})
	res := map[string]any{"excludeResourcePrefixes": []any{"cpu", "memory"}}
	if err := mergeKueueConfig(c, map[string]any{"resources": res, "featureGates": map[string]any{"DynamicResourceAllocation": true}}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c["resources"], c["featureGates"]); got != "map[excludeResourcePrefixes:[cpu memory]] map[DynamicResourceAllocation:true VisibilityOnDemand:false]" {
		t.Errorf("merged: %s", got)
	}
	if err := mergeKueueConfig(c, map[string]any{"featureGates": "DRA=true"}); err == nil {
		t.Error("featureGates string accepted")
	}
}

// TestKueueAdmitsJob runs Kueue v0.17.0 on a test control plane and shows
// its three parts working: the Job webhook (a Job created unsuspended
// with a queue-name label is suspended at creation, Kueue's
// pkg/controller/jobs/job/job_webhook.go Default), the ClusterQueue
// webhook and controller (the queue becomes Active), and the scheduler
// (the Job's Workload gets QuotaReserved and Admitted, the Job is
// unsuspended and kube-controller-manager makes its pod, which carries
// the ResourceFlavor's node label as a nodeSelector).
func TestKueueAdmitsJob(t *testing.T) {
	c := StartT(t, Options{})
	StartKueueT(t, c, KueueOptions{})
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create := func(kind, ns string, obj map[string]any) {
		t.Helper()
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(kueueGV.String())
		u.SetKind(kind)
		r := dyn.Resource(kueueGV.WithResource(strings.ToLower(kind) + "s"))
		var err error
		if ns != "" {
			_, err = r.Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		} else {
			_, err = r.Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	create("ResourceFlavor", "", map[string]any{"metadata": map[string]any{"name": "a100"},
		"spec": map[string]any{"nodeLabels": map[string]any{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}})
	create("ClusterQueue", "", map[string]any{"metadata": map[string]any{"name": "team"}, "spec": map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
			"flavors": []any{map[string]any{"name": "a100", "resources": []any{
				map[string]any{"name": "cpu", "nominalQuota": "8"},
				map[string]any{"name": "memory", "nominalQuota": "32Gi"},
				map[string]any{"name": "nvidia.com/gpu", "nominalQuota": 2},
			}}},
		}},
	}})
	create("LocalQueue", "team", map[string]any{"metadata": map[string]any{"name": "team"}, "spec": map[string]any{"clusterQueue": "team"}})

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "team", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "team"}},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")},
					Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
				}}},
			}},
		},
	}
	created, err := c.Client.BatchV1().Jobs("team").Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(created.Spec.Suspend, false) {
		t.Fatal("the Job was created unsuspended: Kueue's Job webhook did not run")
	}
	var pod corev1.Pod
	if err := c.waitUntil(ctx, "the Job's pod", func(ctx context.Context) error {
		pods, err := c.Client.CoreV1().Pods("team").List(ctx, metav1.ListOptions{LabelSelector: "job-name=train"})
		if err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return errors.New("no pod yet")
		}
		pod = pods.Items[0]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.NodeSelector["nvidia.com/gpu.product"]; got != "NVIDIA-A100-SXM4-80GB" {
		t.Errorf("pod nodeSelector %v, want the flavor's nvidia.com/gpu.product", pod.Spec.NodeSelector)
	}
	wls, err := dyn.Resource(kueueGV.WithResource("workloads")).Namespace("team").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(wls.Items) != 1 {
		t.Fatalf("%d workloads, want 1", len(wls.Items))
	}
	conds, _, _ := unstructured.NestedSlice(wls.Items[0].Object, "status", "conditions")
	status := map[string]any{}
	for _, cd := range conds {
		m := cd.(map[string]any)
		status[m["type"].(string)] = m["status"]
	}
	if status["QuotaReserved"] != "True" || status["Admitted"] != "True" {
		t.Errorf("workload conditions %v, want QuotaReserved and Admitted True", status)
	}
}
