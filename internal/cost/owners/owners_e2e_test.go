// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package owners

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// counter counts the API server requests that read resources (not
// discovery: /api, /apis, /apis/<group>/<version>).
type counter struct {
	mu    sync.Mutex
	paths []string
	rt    http.RoundTripper
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	p := strings.Trim(req.URL.Path, "/")
	n := len(strings.Split(p, "/"))
	discovery := p == "api" || p == "apis" || strings.HasPrefix(p, "api/") && n <= 2 || strings.HasPrefix(p, "apis/") && n <= 3
	if !discovery {
		c.mu.Lock()
		c.paths = append(c.paths, req.Method+" "+req.URL.Path)
		c.mu.Unlock()
	}
	return c.rt.RoundTrip(req)
}

func (c *counter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.paths
	c.paths = nil
	return p
}

func controllerRef(apiVersion, kind string, o metav1.Object) []metav1.OwnerReference {
	t := true
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: &t}}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "train:1"}}}
}

var pytorchGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

// installPyTorchJobCRD creates a minimal CRD for kubeflow.org/v1
// PyTorchJob (the Kubeflow training operator's group, version and kind; the
// schema accepts anything, the owner lookup reads metadata only) and
// creates PyTorchJob name in namespace ns once it is served.
func installPyTorchJobCRD(t *testing.T, c *kube.Cluster, dyn dynamic.Interface, ns, name string) *unstructured.Unstructured {
	t.Helper()
	ctx := t.Context()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "pytorchjobs.kubeflow.org"},
		"spec": map[string]any{
			"group": "kubeflow.org",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "PyTorchJob", "listKind": "PyTorchJobList", "plural": "pytorchjobs", "singular": "pytorchjob"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
	// The new resource is served a moment after the CRD is created.
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := dyn.Resource(pytorchGVR).Namespace(ns).Create(ctx, job, metav1.CreateOptions{})
		if err == nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("create PyTorchJob: %v", err)
		}
		select {
		case <-c.Exited():
			t.Fatalf("control plane exited: %v", c.Err())
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestLookupRealAPIServer builds owner chains in a real kube-apiserver
// (no controller manager runs, so the test writes each object and its
// ownerReferences as the controllers would) and checks each pod's job.
func TestLookupRealAPIServer(t *testing.T) {
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	ctx := t.Context()
	cs := c.Client
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ml", Labels: map[string]string{"gpuplane.io/team": "vision"}}}, metav1.CreateOptions{}))
	must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}))
	pod := func(ns, name string, owners []metav1.OwnerReference, labels map[string]string) {
		t.Helper()
		must(cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: owners, Labels: labels}, Spec: podSpec()}, metav1.CreateOptions{}))
	}
	tmpl := corev1.PodTemplateSpec{Spec: podSpec()}

	// Pod -> Job.
	job, err := cs.BatchV1().Jobs("ml").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: batchv1.JobSpec{Template: tmpl}}, metav1.CreateOptions{})
	must(job, err)
	pod("ml", "train-a", controllerRef("batch/v1", "Job", job), map[string]string{"job-name": "train"})
	pod("ml", "train-b", controllerRef("batch/v1", "Job", job), nil)

	// Pod -> Job -> CronJob.
	cj, err := cs.BatchV1().CronJobs("ml").Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 2 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}, metav1.CreateOptions{})
	must(cj, err)
	run, err := cs.BatchV1().Jobs("ml").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29000000", OwnerReferences: controllerRef("batch/v1", "CronJob", cj)},
		Spec: batchv1.JobSpec{Template: tmpl}}, metav1.CreateOptions{})
	must(run, err)
	pod("ml", "nightly-29000000-x", controllerRef("batch/v1", "Job", run), nil)

	// Pod -> PyTorchJob (a custom resource).
	pt := installPyTorchJobCRD(t, c, dyn, "ml", "bert")
	pod("ml", "bert-worker-0", controllerRef("kubeflow.org/v1", "PyTorchJob", pt), nil)

	// Pod -> ReplicaSet -> Deployment.
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	wtmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "web:1"}}}}
	dep, err := cs.AppsV1().Deployments("web").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "frontend"}, Spec: appsv1.DeploymentSpec{Selector: sel, Template: wtmpl}}, metav1.CreateOptions{})
	must(dep, err)
	rs, err := cs.AppsV1().ReplicaSets("web").Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "frontend-5d4f", OwnerReferences: controllerRef("apps/v1", "Deployment", dep)},
		Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: wtmpl}}, metav1.CreateOptions{})
	must(rs, err)
	pod("web", "frontend-5d4f-abc", controllerRef("apps/v1", "ReplicaSet", rs), nil)

	// A bare pod; a pod whose owner is gone; a pod whose owner's name now
	// belongs to another object (another UID).
	pod("web", "debug", nil, nil)
	gone := &metav1.ObjectMeta{Name: "old-5d4f", UID: types.UID("11111111-2222-3333-4444-555555555555")}
	pod("web", "old-5d4f-xyz", controllerRef("apps/v1", "ReplicaSet", gone), nil)
	stale := &metav1.ObjectMeta{Name: "frontend-5d4f", UID: types.UID("99999999-2222-3333-4444-555555555555")}
	pod("web", "frontend-5d4f-old", controllerRef("apps/v1", "ReplicaSet", stale), nil)
	// An owner of a kind the server does not serve (its CRD removed).
	pod("web", "widget-0", controllerRef("example.com/v1", "Widget", &metav1.ObjectMeta{Name: "w", UID: "77777777-2222-3333-4444-555555555555"}), nil)

	cnt := &counter{}
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { cnt.rt = rt; return cnt })
	r, err := NewForConfig(cfg, "gpuplane.io/team")
	if err != nil {
		t.Fatal(err)
	}
	pods := []Pod{
		{Namespace: "ml", Name: "train-a"},
		{Namespace: "ml", Name: "train-b"},
		{Namespace: "ml", Name: "nightly-29000000-x"},
		{Namespace: "ml", Name: "bert-worker-0"},
		{Namespace: "web", Name: "frontend-5d4f-abc"},
		{Namespace: "web", Name: "debug"},
		{Namespace: "web", Name: "old-5d4f-xyz"},
		{Namespace: "web", Name: "frontend-5d4f-old"},
		{Namespace: "web", Name: "widget-0"},
		// Gone: the labels the metrics had decide.
		{Namespace: "ml", Name: "bert-old-worker-1", Labels: map[string]string{"training.kubeflow.org/job-name": "bert-old"}},
		{Namespace: "ml", Name: "scratch"},
		// A namespace that is gone too.
		{Namespace: "gone", Name: "p", Labels: map[string]string{"job-name": "j"}},
	}
	infos, err := r.Lookup(ctx, pods)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		found     bool
		job, kind string
		team      string
		note      string
	}{
		{true, "train", "Job", "vision", ""},
		{true, "train", "Job", "vision", ""},
		{true, "nightly", "CronJob", "vision", ""},
		{true, "bert", "PyTorchJob", "vision", ""},
		{true, "frontend", "Deployment", "", ""},
		{true, "debug", "Pod", "", ""},
		{true, "old-5d4f", "ReplicaSet", "", "ReplicaSet old-5d4f is gone"},
		{true, "frontend-5d4f", "ReplicaSet", "", "a new object has its name"},
		{true, "w", "Widget", "", "Widget w: kind Widget of example.com/v1 not served"},
		{false, "bert-old", "", "vision", ""},
		{false, "scratch", "", "vision", ""},
		{false, "j", "", "", ""},
	}
	if len(infos) != len(want) {
		t.Fatalf("got %d infos, want %d", len(infos), len(want))
	}
	for i, w := range want {
		g := infos[i]
		if g.Namespace != pods[i].Namespace || g.Pod != pods[i].Name || g.Found != w.found || g.Job != w.job || g.Top.Kind != w.kind || g.Team != w.team {
			t.Errorf("%s/%s: got found %v job %q kind %q team %q, want %v %q %q %q", pods[i].Namespace, pods[i].Name, g.Found, g.Job, g.Top.Kind, g.Team, w.found, w.job, w.kind, w.team)
		}
		if w.note == "" && g.Note != "" || !strings.Contains(g.Note, w.note) {
			t.Errorf("%s: note %q, want %q", pods[i].Name, g.Note, w.note)
		}
	}
	if got := infos[0].Labels["job-name"]; got != "train" {
		t.Errorf("train-a labels %v, want the server's job-name=train", infos[0].Labels)
	}
	if infos[3].Top.APIVersion != "kubeflow.org/v1" {
		t.Errorf("bert top %+v, want apiVersion kubeflow.org/v1", infos[3].Top)
	}
	if infos[11].NamespaceLabels != nil || infos[0].NamespaceLabels["gpuplane.io/team"] != "vision" {
		t.Errorf("namespace labels %v and %v, want nil and team=vision", infos[11].NamespaceLabels, infos[0].NamespaceLabels)
	}

	// Few calls: per namespace one get and one pod list (3 namespaces),
	// and one get per distinct owner: Jobs train and nightly-29000000,
	// CronJob nightly, PyTorchJob bert, ReplicaSets frontend-5d4f and
	// old-5d4f, Deployment frontend. train-b and frontend-5d4f-old reuse
	// cached owners.
	if got := cnt.take(); len(got) != 3+3+7 {
		t.Errorf("%d resource requests, want 13:\n%s", len(got), strings.Join(got, "\n"))
	}
	// A second lookup reads the owners from the cache.
	if _, err := r.Lookup(ctx, pods); err != nil {
		t.Fatal(err)
	}
	if got := cnt.take(); len(got) != 6 {
		t.Errorf("second lookup: %d resource requests, want 6:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestLookupServerErrors: an API server answering errors is an error
// naming the namespace, not a silent fallback to labels.
func TestLookupServerErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "etcd down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	r, err := NewForConfig(&rest.Config{Host: srv.URL}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Lookup(context.Background(), []Pod{{Namespace: "ml", Name: "p"}})
	if err == nil || !strings.Contains(err.Error(), "namespace ml") {
		t.Errorf("error %v, want one naming namespace ml", err)
	}
}
