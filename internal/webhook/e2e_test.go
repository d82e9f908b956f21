// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestAPIServer registers the webhook with a real kube-apiserver (by URL,
// with a CA made here) and creates good and bad pods with client-go.
func TestAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	cs := c.Client
	for name, labels := range map[string]map[string]string{"research": nil, "serve": {"gpuplane.io/team": "inference"}} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nsLabels, err := WatchNamespaces(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t)
	h.namespaces = nsLabels
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writeServing(t, dir, 1)
	url := serveTLS(t, h, dir)
	register(t, ctx, cs, url, ca.pem)

	pod := func(ns, name string, res corev1.ResourceList, change func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
				Containers:   []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Limits: res}}},
			},
		}
		if change != nil {
			change(p)
		}
		return p
	}
	gpus := func(name string, n int64) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceName(name): *resource.NewQuantity(n, resource.DecimalSI)}
	}
	// The webhook configurations take effect once the API server's
	// informer has them: create a refused probe until it is refused.
	probe := pod("default", "probe", gpus("nvidia.com/gpu", 1), nil)
	for {
		_, err := cs.CoreV1().Pods("default").Create(ctx, probe, metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "gpuplane GPU policy") {
			break
		}
		if err == nil {
			cs.CoreV1().Pods("default").Delete(ctx, "probe", metav1.DeleteOptions{})
		}
		select {
		case <-c.Exited():
			t.Fatalf("control plane exited: %v", c.Err())
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}

	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{pod("research", "shared-training", gpus("nvidia.com/gpu.shared", 1), func(p *corev1.Pod) { p.Labels = map[string]string{"gpuplane.io/training": "true"} }),
			`admission webhook "validate.gpuplane.io" denied the request: gpuplane GPU policy refuses pod research/shared-training: training-on-shared: container main: training pods may not use time-sliced or fractional GPUs (nvidia.com/gpu.shared)`},
		{pod("default", "no-team", gpus("nvidia.com/gpu", 1), nil),
			`admission webhook "validate.gpuplane.io" denied the request: gpuplane GPU policy refuses pod default/no-team: team: namespace "default" belongs to no team of the GPU policy`},
		{pod("research", "nine", gpus("nvidia.com/gpu", 9), nil),
			"max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8 per pod"},
		{pod("research", "squatter", nil, func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}
		}), "gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule"},
		{pod("serve", "milli-training", gpus("gpuplane.io/gpu-milli", 500), func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "r", UID: "1"}}
		}), "training-on-shared: container main: training pods may not use time-sliced or fractional GPUs (gpuplane.io/gpu-milli)"},
		// A pod with only generateName: kube-apiserver v1.37 names it
		// (etl-xxxxx) before admission; older ones send an empty name,
		// and then the refusal says etl-* (TestValidate).
		{pod("research", "", gpus("nvidia.com/gpu", 9), func(p *corev1.Pod) { p.GenerateName = "etl-" }),
			"gpuplane GPU policy refuses pod research/etl-"},
		// A native sidecar's GPU adds to the containers': 1 + 8 = 9.
		{pod("research", "sidecar", gpus("nvidia.com/gpu", 8), func(p *corev1.Pod) {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "s", Image: "busybox", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Limits: gpus("nvidia.com/gpu", 1)}}}
		}), "max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8 per pod"},
	} {
		_, err := cs.CoreV1().Pods(tc.pod.Namespace).Create(ctx, tc.pod, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pod %s/%s: %v, want refusal %q", tc.pod.Namespace, tc.pod.Name, err, tc.want)
		}
	}

	// A good GPU pod is admitted with the toleration, schedulerName and
	// team label; one in a namespace found by selector gets its team.
	for _, tc := range []struct {
		pod         *corev1.Pod
		team, sched string
	}{
		{pod("research", "good", gpus("nvidia.com/gpu", 1), nil), "research", "gpuplane-scheduler"},
		{pod("serve", "infer", gpus("gpuplane.io/gpu-milli", 500), nil), "inference", "default-scheduler"},
	} {
		got, err := cs.CoreV1().Pods(tc.pod.Namespace).Create(ctx, tc.pod, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("pod %s: %v", tc.pod.Name, err)
			continue
		}
		want := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
		// The DefaultTolerationSeconds admission plugin adds two
		// not-ready/unreachable tolerations of its own.
		n := 0
		for _, tol := range got.Spec.Tolerations {
			if tol.Key == want.Key {
				n++
				if tol != want {
					n = 99
				}
			}
		}
		if n != 1 {
			t.Errorf("pod %s tolerations %+v, want %+v", got.Name, got.Spec.Tolerations, want)
		}
		if got.Spec.SchedulerName != tc.sched || got.Labels["gpuplane.io/team"] != tc.team {
			t.Errorf("pod %s: schedulerName %q team %q, want %q %q", got.Name, got.Spec.SchedulerName, got.Labels["gpuplane.io/team"], tc.sched, tc.team)
		}
	}

	// A Deployment's pod template is checked the same way.
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "vllm", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "vllm"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "vllm"}},
				Spec:       pod("default", "", gpus("nvidia.com/gpu", 1), nil).Spec,
			},
		},
	}
	_, err = cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
	if want := `gpuplane GPU policy refuses deployment default/vllm: team: namespace "default" belongs to no team`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("deployment: %v, want %q", err, want)
	}
}

// register creates the two webhook configurations, as the Helm chart does
// but by URL and with failurePolicy Fail, so that a webhook error fails the
// test instead of letting the pod in.
func register(t *testing.T, ctx context.Context, cs kubernetes.Interface, url string, caPEM []byte) {
	t.Helper()
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	notSystem := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}}}
	rule := func(group, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}}}
	}
	create, update := admissionregistrationv1.Create, admissionregistrationv1.Update
	mutURL, valURL := url+"/mutate", url+"/validate"
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gpuplane"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "mutate.gpuplane.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &mutURL, CABundle: caPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{rule("", "pods", create)},
			NamespaceSelector:       notSystem,
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gpuplane"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "validate.gpuplane.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &valURL, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{
				rule("", "pods", create),
				rule("apps", "deployments", create, update),
				rule("batch", "jobs", create, update),
			},
			NamespaceSelector:       notSystem,
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
