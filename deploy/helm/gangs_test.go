// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuplane/gpuplane/internal/gang/workload"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// workloadAPIWarning opens the install notes' warning that gangs are off.
const workloadAPIWarning = "WARNING: the API server does not serve scheduling.k8s.io/v1beta1 Workload"

// TestNotesWorkloadAPI: on a kube-apiserver v1.37.2 with its defaults
// (GenericWorkload off), the install notes of the scheduler say that gangs
// are off and what to turn on; TestChartInstalls checks that they say
// nothing of it where the Workload API is served. A server-side dry run:
// helm reads the API server's discovery, creates nothing.
func TestNotesWorkloadAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	helmBin(t)
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	out := helm(t, "install", release, chart, "--dry-run=server", "--kubeconfig", c.Kubeconfig, "--namespace", namespace, "--set", "scheduler.enabled=true")
	if !strings.Contains(out, workloadAPIWarning) || !strings.Contains(out, "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true") {
		t.Errorf("notes without the Workload API lack the warning:\n%s", out)
	}
	// The node agent alone schedules nothing: no warning.
	if out := helm(t, "install", release, chart, "--dry-run=server", "--kubeconfig", c.Kubeconfig, "--namespace", namespace); strings.Contains(out, workloadAPIWarning) {
		t.Errorf("notes of the node agent alone warn:\n%s", out)
	}
}

// TestWebhookGangRBAC: with only the chart's ClusterRole, the webhook's
// service account makes the gang of an indexed Job's pod (reads the Job,
// creates and reads the Workload and PodGroup) on a real kube-apiserver,
// and may read every kind of job the rule reads (SubjectAccessReview).
func TestWebhookGangRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	r := renderWebhook(t)
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig, NoControllerManager: true})
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var sa corev1.ServiceAccount
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	r.get(t, "ServiceAccount", webhookName, &sa)
	r.get(t, "ClusterRole", webhookName, &role)
	r.get(t, "ClusterRoleBinding", webhookName, &binding)
	if _, err := c.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, webhookName, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := &rest.Config{Host: c.URL, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData}}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}

	two, indexed := int32(2), batchv1.IndexedCompletion
	job, err := c.Client.BatchV1().Jobs("default").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "idx"},
		Spec: batchv1.JobSpec{Parallelism: &two, Completions: &two, CompletionMode: &indexed, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "idx-0", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}}}
	g := workload.NewGrouper(dyn, client)
	for range 2 { // the second finds the objects made (a new Grouper: no cache)
		name, err := g.Group(ctx, pod, "default", nil, false)
		if err != nil || name != "job-idx" {
			t.Fatalf("Group as the webhook's service account: %q, %v; want job-idx", name, err)
		}
		g = workload.NewGrouper(dyn, client)
	}
	pg, err := c.Client.SchedulingV1beta1().PodGroups("default").Get(ctx, "job-idx", metav1.GetOptions{})
	if err != nil || pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 2 {
		t.Errorf("podgroup job-idx: %+v %v, want minCount 2", pg, err)
	}
	if err := workload.Served(client.Discovery()); err != nil {
		t.Errorf("Served as the webhook's service account: %v", err)
	}

	user := "system:serviceaccount:" + namespace + ":" + webhookName
	for _, a := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Group: "jobset.x-k8s.io", Resource: "jobsets"},
		{Verb: "get", Group: "trainer.kubeflow.org", Resource: "trainjobs"},
		{Verb: "get", Group: "kubeflow.org", Resource: "pytorchjobs"},
		{Verb: "get", Group: "kubeflow.org", Resource: "mpijobs"},
		{Verb: "get", Group: "ray.io", Resource: "rayclusters"},
	} {
		a.Namespace = "default"
		sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &a}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !sar.Status.Allowed {
			t.Errorf("the webhook may not %s %s.%s", a.Verb, a.Resource, a.Group)
		}
	}
}
