// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/gang/workload"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// operatorCRDs are the CRDs of the training operators, each from its
// module at a version the module proxy serves, in the file the operator
// installs.
var operatorCRDs = []struct{ module, file string }{
	{"github.com/kubeflow/training-operator@v1.9.3", "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"}, // PyTorchJob kubeflow.org/v1
	{"github.com/kubeflow/mpi-operator@v0.7.0", "manifests/base/kubeflow.org_mpijobs.yaml"},               // MPIJob kubeflow.org/v2beta1
	{"github.com/kubeflow/trainer/v2@v2.0.0", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"},  // TrainJob trainer.kubeflow.org/v1alpha1
	{"sigs.k8s.io/jobset@v0.10.1", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"},            // JobSet jobset.x-k8s.io/v1alpha2
	{"github.com/ray-project/kuberay/ray-operator@v1.5.0", "config/crd/bases/ray.io_rayclusters.yaml"},    // RayCluster ray.io/v1
}

// moduleDir downloads a module into the module cache (go mod download,
// from the module proxy) and returns its directory; it skips the test
// when that fails, and fails it under CI.
func moduleDir(t *testing.T, mod string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = t.TempDir() // outside gpuplane's module: go.mod stays as it is
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); err != nil || jerr != nil || m.Dir == "" {
		msg := fmt.Sprintf("go mod download %s: %v %s %s", mod, err, m.Error, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return m.Dir
}

// installCRDs creates the operators' CRDs and waits until each is
// Established.
func installCRDs(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	var names []string
	for _, c := range operatorCRDs {
		b, err := os.ReadFile(filepath.Join(moduleDir(t, c.module), c.file))
		if err != nil {
			t.Fatal(err)
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatalf("%s %s: %v", c.module, c.file, err)
		}
		if _, err := crds.Create(t.Context(), &u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("CRD %s: %v", u.GetName(), err)
		}
		names = append(names, u.GetName())
	}
	for _, n := range names {
		poll(t, "CRD "+n+" established", func() (bool, error) {
			u, err := crds.Get(t.Context(), n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
	}
}

// poll checks cond every 50 ms until it holds, or fails after 2 minutes.
func poll(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// registerMutating registers the mutating webhook at url for pods.
func registerMutating(t *testing.T, c *kube.Cluster, url string, caPEM []byte) {
	t.Helper()
	fail := admissionregistrationv1.Fail
	side := admissionregistrationv1.SideEffectClassNoneOnDryRun
	timeout := int32(10)
	u := url + "/mutate"
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gpuplane"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "mutate.gpuplane.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}}},
			FailurePolicy: &fail, SideEffects: &side, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), m, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// gangEnv is a control plane with the Workload API and the operators'
// CRDs, and gpuplane-webhook's grouper in front of it.
type gangEnv struct {
	c   *kube.Cluster
	dyn dynamic.Interface
}

func startGangEnv(t *testing.T, nodes []kube.Node) *gangEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	// kube-controller-manager with the gate too, and its PodGroup
	// protection controller, which removes the finalizer the API server's
	// admission puts on a PodGroup once no pod names it.
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig,
		Controllers: kube.Controllers + ",podgroup-protection-controller", ControllerManagerArgs: []string{"--feature-gates=" + kube.WorkloadFeatureGates}})
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := workload.Served(c.Client.Discovery()); err != nil {
		t.Fatal(err)
	}
	installCRDs(t, dyn)
	if len(nodes) > 0 {
		if err := c.CreateNodes(t.Context(), nodes); err != nil {
			t.Fatal(err)
		}
	}
	nsLabels, err := WatchNamespaces(t.Context(), c.Client)
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t)
	h.namespaces = nsLabels
	h.Gangs = workload.NewGrouper(dyn, c.Client).Group
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writeServing(t, dir, 1)
	registerMutating(t, c, serveTLS(t, h, dir), ca.pem)
	e := &gangEnv{c: c, dyn: dyn}
	e.waitWebhook(t)
	return e
}

// waitWebhook creates an indexed Job's pod by hand until the API server
// calls the webhook (its configuration is in force once the API server's
// informer has it): the pod then has its scheduling group.
func (e *gangEnv) waitWebhook(t *testing.T) {
	e.create(t, "batch/v1", "Job", "probe", nil, map[string]any{"completionMode": "Indexed", "parallelism": 2, "completions": 2,
		"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}},
		nil)
	poll(t, "the webhook in force", func() (bool, error) {
		pods, err := e.c.Client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=probe"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.SchedulingGroup != nil {
				return true, nil
			}
			// Made before the webhook was in force: the Job makes another.
			e.c.Client.CoreV1().Pods("default").Delete(t.Context(), p.Name, metav1.DeleteOptions{})
		}
		return false, nil
	})
	e.deleteJob(t, "batch/v1", "Job", "probe")
}

func gvrOf(apiVersion, kind string) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.WithResource(strings.ToLower(kind) + "s")
}

// create creates a namespaced object in default; owner, when not nil, is
// its controller.
func (e *gangEnv) create(t *testing.T, apiVersion, kind, name string, owner *unstructured.Unstructured, spec map[string]any, labels map[string]string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}}
	u.SetLabels(labels)
	if owner != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(owner, owner.GroupVersionKind())})
	}
	made, err := e.dyn.Resource(gvrOf(apiVersion, kind)).Namespace("default").Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
	return made
}

// deleteJob deletes an object in the background: the garbage collector
// deletes what it owns (pods, Jobs, the gang's Workload and PodGroup).
func (e *gangEnv) deleteJob(t *testing.T, apiVersion, kind, name string) {
	t.Helper()
	bg := metav1.DeletePropagationBackground
	if err := e.dyn.Resource(gvrOf(apiVersion, kind)).Namespace("default").Delete(t.Context(), name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatalf("delete %s %s: %v", kind, name, err)
	}
}

// podOpts is a pod as an operator makes it.
type podOpts struct {
	name        string
	owner       *unstructured.Unstructured
	labels      map[string]string
	gpus        int64
	model       string
	scheduler   string
	annotations map[string]string
}

func (e *gangEnv) createPod(t *testing.T, o podOpts) *corev1.Pod {
	t.Helper()
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	if o.gpus > 0 {
		req["nvidia.com/gpu"] = *resource.NewQuantity(o.gpus, resource.DecimalSI)
	}
	ann := map[string]string{}
	for k, v := range o.annotations {
		ann[k] = v
	}
	if o.model != "" {
		ann["gpuplane.io/gpu-model"] = o.model
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: "default", Labels: o.labels, Annotations: ann,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(o.owner, o.owner.GroupVersionKind())}},
		Spec: corev1.PodSpec{
			SchedulerName: o.scheduler,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}},
			Tolerations:   []corev1.Toleration{{Key: kube.KwokAnnotation, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	made, err := e.c.Client.CoreV1().Pods("default").Create(t.Context(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pod %s: %v", o.name, err)
	}
	return made
}

// groupOf returns the pod's scheduling group, or "".
func groupOf(p *corev1.Pod) string {
	if p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	return *p.Spec.SchedulingGroup.PodGroupName
}
