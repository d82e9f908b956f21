// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

func newHandler(t testing.TB) *Handler {
	t.Helper()
	data, err := os.ReadFile("testdata/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse("policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return NewHandler(pol, func(_ context.Context, name string) (map[string]string, error) {
		if name == "serve" {
			return map[string]string{"gpuplane.io/team": "inference"}, nil
		}
		return map[string]string{"kubernetes.io/metadata.name": name}, nil
	})
}

func post(t testing.TB, h http.Handler, path string, body []byte) (int, string) {
	t.Helper()
	r := httptest.NewRequest("POST", path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func review(t *testing.T, h http.Handler, path, file string) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	code, out := post(t, h, path, body)
	if code != 200 {
		t.Fatalf("%s %s: status %d: %s", path, file, code, out)
	}
	var rv admissionv1.AdmissionReview
	if err := json.Unmarshal([]byte(out), &rv); err != nil {
		t.Fatal(err)
	}
	if rv.APIVersion != "admission.k8s.io/v1" || rv.Kind != "AdmissionReview" || rv.Response == nil {
		t.Fatalf("%s %s: reply %s", path, file, out)
	}
	var in admissionv1.AdmissionReview
	json.Unmarshal(body, &in)
	if rv.Response.UID != in.Request.UID {
		t.Errorf("%s: uid %q, want %q", file, rv.Response.UID, in.Request.UID)
	}
	return rv.Response
}

func TestValidate(t *testing.T) {
	h := newHandler(t)
	for _, c := range []struct{ file, want string }{
		{"pod-good.json", ""},
		// research may use nvidia.com/gpu.shared, but not for training.
		{"pod-pytorch-shared.json", "gpuplane GPU policy refuses pod research/llama-worker-0: training-on-shared: container pytorch: training pods may not use time-sliced or fractional GPUs (nvidia.com/gpu.shared)"},
		{"deployment-no-team.json", `gpuplane GPU policy refuses deployment default/vllm: team: namespace "default" belongs to no team of the GPU policy`},
		{"job-cpu-squatter.json", "gpuplane GPU policy refuses job research/etl: gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule"},
		// A Job's pod has only generateName "etl-" at admission
		// (AdmissionRequest.name is empty then, k8s.io/api admission/v1
		// types.go): the refusal names it "etl-*", not "".
		{"pod-generate-name.json", "gpuplane GPU policy refuses pod research/etl-*: gpu-taint-toleration: the pod asks for no GPU"},
	} {
		r := review(t, h, "/validate", c.file)
		if c.want == "" {
			if !r.Allowed {
				t.Errorf("%s refused: %v", c.file, r.Result)
			}
			continue
		}
		if r.Allowed || r.Result == nil || r.Result.Code != 403 || !strings.HasPrefix(r.Result.Message, c.want) {
			t.Errorf("%s: %+v, want refusal %q", c.file, r.Result, c.want)
		}
	}
}

// A Deployment updated without a change to its pod template is not
// checked again; one whose template changes is.
func TestValidateUpdate(t *testing.T) {
	h := newHandler(t)
	body, err := os.ReadFile("testdata/deployment-no-team.json")
	if err != nil {
		t.Fatal(err)
	}
	var rv map[string]any
	if err := json.Unmarshal(body, &rv); err != nil {
		t.Fatal(err)
	}
	req := rv["request"].(map[string]any)
	req["operation"] = "UPDATE"
	obj := req["object"].(map[string]any)
	old, _ := json.Marshal(obj)
	var oldObj map[string]any
	json.Unmarshal(old, &oldObj)
	req["oldObject"] = oldObj
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{"deployment.kubernetes.io/revision": "2"}
	send := func() *admissionv1.AdmissionResponse {
		b, _ := json.Marshal(rv)
		code, out := post(t, h, "/validate", b)
		var got admissionv1.AdmissionReview
		if err := json.Unmarshal([]byte(out), &got); code != 200 || err != nil || got.Response == nil {
			t.Fatalf("%d %s", code, out)
		}
		return got.Response
	}
	if r := send(); !r.Allowed {
		t.Errorf("annotation-only update refused: %v", r.Result.Message)
	}
	c := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["image"] = "vllm/vllm-openai:v0.6.5"
	c["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": 2}}
	if r := send(); r.Allowed || !strings.Contains(r.Result.Message, `team: namespace "default" belongs to no team`) {
		t.Errorf("template change: %+v", r.Result)
	}
}

func TestMutate(t *testing.T) {
	h := newHandler(t)
	r := review(t, h, "/mutate", "pod-good.json")
	want := `[{"op":"add","path":"/spec/tolerations","value":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]},{"op":"add","path":"/spec/schedulerName","value":"gpuplane-scheduler"},{"op":"add","path":"/metadata/labels","value":{"gpuplane.io/team":"research"}}]`
	if !r.Allowed || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch || string(r.Patch) != want {
		t.Errorf("patch %s, want %s", r.Patch, want)
	}
	// Templates are not mutated; nor are CPU pods.
	for _, f := range []string{"deployment-no-team.json", "job-cpu-squatter.json"} {
		if r := review(t, h, "/mutate", f); !r.Allowed || r.Patch != nil {
			t.Errorf("%s: %+v", f, r)
		}
	}
}

func TestBadBodies(t *testing.T) {
	h := newHandler(t)
	good, _ := os.ReadFile("testdata/pod-good.json")
	for _, c := range []struct{ body, want string }{
		{"", "body is not an AdmissionReview: unexpected end of JSON input"},
		{"{", "body is not an AdmissionReview"},
		{"[1,2]", "body is not an AdmissionReview"},
		{`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`, `apiVersion "admission.k8s.io/v1beta1" kind "AdmissionReview", want admission.k8s.io/v1 AdmissionReview`},
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "AdmissionReview has no request"},
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}`, "AdmissionReview request has no uid"},
	} {
		code, out := post(t, h, "/validate", []byte(c.body))
		if code != 400 || !strings.Contains(out, c.want) {
			t.Errorf("body %.40q: %d %q, want 400 %q", c.body, code, out, c.want)
		}
	}
	// A body over the limit is answered 413, whether its length is
	// announced or not (chunked).
	h.MaxRequestBytes = int64(len(good))
	if code, out := post(t, h, "/validate", good); code != 200 {
		t.Errorf("body of exactly the limit: %d %s", code, out)
	}
	over := append(bytes.Clone(good), ' ')
	if code, out := post(t, h, "/validate", over); code != 413 || !strings.Contains(out, fmt.Sprintf("body over %d bytes", len(good))) {
		t.Errorf("body over the limit: %d %q, want 413", code, out)
	}
	r := httptest.NewRequest("POST", "/validate", io.MultiReader(bytes.NewReader(over)))
	r.ContentLength = -1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 413 {
		t.Errorf("chunked body over the limit: %d %s, want 413", w.Code, w.Body)
	}
	h.MaxRequestBytes = 0
	if code, out := post(t, h, "/validate", []byte(strings.Repeat(" ", DefaultMaxRequestBytes+1))); code != 413 || !strings.Contains(out, "body over 7340032 bytes") {
		t.Errorf("body over the default limit: %d %.80q, want 413", code, out)
	}
	// An object that does not decode is refused with the reason.
	bad := bytes.Replace(good, []byte(`"nvidia.com/mig-1g.10gb": "1"`), []byte(`"nvidia.com/mig-1g.10gb": "one"`), 1)
	code, out := post(t, h, "/validate", bad)
	if code != 200 || !strings.Contains(out, `"allowed":false`) || !strings.Contains(out, "reading Pod: quantities must match the regular expression") {
		t.Errorf("bad quantity: %d %s", code, out)
	}
	r = httptest.NewRequest("POST", "/validate", bytes.NewReader(good))
	r.Header.Set("Content-Type", "text/plain")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 400 || !strings.Contains(w.Body.String(), `content type "text/plain", want application/json`) {
		t.Errorf("text/plain: %d %s", w.Code, w.Body)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	h := newHandler(t)
	good, _ := os.ReadFile("testdata/pod-good.json")
	shared, _ := os.ReadFile("testdata/pod-pytorch-shared.json")
	noTeam, _ := os.ReadFile("testdata/deployment-no-team.json")
	post(t, h, "/validate", good)
	post(t, h, "/validate", shared)
	post(t, h, "/validate", noTeam)
	post(t, h, "/mutate", good)
	post(t, h, "/mutate", nil)
	post(t, h, "/validate", bytes.Replace(good, []byte(`"nvidia.com/mig-1g.10gb": "1"`), []byte(`"nvidia.com/mig-1g.10gb": "one"`), 1))
	h.MaxRequestBytes = 10
	post(t, h, "/mutate", good)
	for _, c := range []struct {
		h    http.Handler
		path string
		want []string
	}{
		{h, "/healthz", []string{"ok"}},
		{h.Metrics(), "/healthz", []string{"ok"}},
		{h.Metrics(), "/metrics", []string{
			`gpuplane_webhook_requests_total{code="200",operation="CREATE",result="allowed",webhook="validate"} 1`,
			`gpuplane_webhook_requests_total{code="200",operation="CREATE",result="denied",webhook="validate"} 2`,
			`gpuplane_webhook_requests_total{code="200",operation="CREATE",result="error",webhook="validate"} 1`,
			`gpuplane_webhook_requests_total{code="200",operation="CREATE",result="patched",webhook="mutate"} 1`,
			`gpuplane_webhook_requests_total{code="400",operation="unknown",result="bad_request",webhook="mutate"} 1`,
			`gpuplane_webhook_requests_total{code="413",operation="unknown",result="bad_request",webhook="mutate"} 1`,
			`gpuplane_webhook_rejections_total{operation="CREATE",rule="training-on-shared",webhook="validate"} 1`,
			`gpuplane_webhook_rejections_total{operation="CREATE",rule="team",webhook="validate"} 1`,
			`gpuplane_webhook_rejections_total{operation="CREATE",rule="error",webhook="validate"} 1`,
			`gpuplane_webhook_errors_total{reason="bad_request",webhook="mutate"} 1`,
			`gpuplane_webhook_errors_total{reason="too_large",webhook="mutate"} 1`,
			`gpuplane_webhook_errors_total{reason="decode_object",webhook="validate"} 1`,
			`gpuplane_webhook_errors_total{reason="namespace_lookup",webhook="validate"} 0`,
			`gpuplane_webhook_latency_seconds_count{webhook="mutate"} 3`,
			`gpuplane_webhook_requests_in_flight{webhook="mutate"} 0`,
			`gpuplane_webhook_open_connections 0`,
		}},
	} {
		w := httptest.NewRecorder()
		c.h.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		body, _ := io.ReadAll(w.Body)
		for _, s := range c.want {
			if !strings.Contains(string(body), s) {
				t.Errorf("%s lacks %q:\n%s", c.path, s, body)
			}
		}
	}
	// The admission port does not serve the metrics.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 404 {
		t.Errorf("/metrics on the admission port: %d, want 404", w.Code)
	}
}

// TestNamespaceLookupError: a namespace whose labels cannot be read is
// refused with the reason and counted as an error and a rejection.
func TestNamespaceLookupError(t *testing.T) {
	data, _ := os.ReadFile("testdata/policy.yaml")
	pol, err := policy.Parse("policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(pol, func(context.Context, string) (map[string]string, error) {
		return nil, errors.New("the API server is down")
	})
	r := review(t, h, "/validate", "pod-good.json")
	if r.Allowed || !strings.Contains(r.Result.Message, "namespace research: the API server is down") {
		t.Errorf("%+v", r.Result)
	}
	for name, want := range map[string]float64{
		`gpuplane_webhook_errors_total{reason="namespace_lookup",webhook="validate"}`:                      1,
		`gpuplane_webhook_rejections_total{operation="CREATE",rule="error",webhook="validate"}`:            1,
		`gpuplane_webhook_requests_total{code="200",operation="CREATE",result="error",webhook="validate"}`: 1,
	} {
		if got := metricValue(t, h, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// metricValue returns the value of one series, NAME{LABELS} as the text
// format prints it, from h's metrics; -1 when it is absent.
func metricValue(t testing.TB, h *Handler, series string) float64 {
	t.Helper()
	w := httptest.NewRecorder()
	h.Metrics().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return -1
}

// TestMetricNames checks the metric names and help with promlint, the
// Prometheus project's linter of naming conventions.
func TestMetricNames(t *testing.T) {
	h := newHandler(t)
	// A request of each outcome, so that every metric has a series.
	for _, f := range []string{"pod-good.json", "pod-pytorch-shared.json"} {
		review(t, h, "/validate", f)
	}
	mfs, err := h.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	want := []string{"gpuplane_webhook_errors_total", "gpuplane_webhook_latency_seconds", "gpuplane_webhook_open_connections",
		"gpuplane_webhook_rejections_total", "gpuplane_webhook_requests_in_flight", "gpuplane_webhook_requests_total"}
	if !slices.Equal(names, want) {
		t.Errorf("metrics %v, want %v", names, want)
	}
}

// BenchmarkAdmit is the in-process latency of one admission of a GPU pod
// (JSON in, JSON out), validating and mutating in turn; p99-ns/op is the
// 99th percentile of single requests.
func BenchmarkAdmit(b *testing.B) {
	h := newHandler(b)
	body, err := os.ReadFile("testdata/pod-good.json")
	if err != nil {
		b.Fatal(err)
	}
	paths := []string{"/validate", "/mutate"}
	var took []time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if code, out := post(b, h, paths[i%2], body); code != 200 {
			b.Fatal(out)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns/op")
}

// TestPodOfSidecar: the webhook reads restartPolicy Always on an init
// container as a native sidecar: 1 + 8 = 9 GPUs.
func TestPodOfSidecar(t *testing.T) {
	raw := []byte(`{"spec":{"initContainers":[{"name":"s","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"1"}}}],` +
		`"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}`)
	p, err := podOf(metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.GPUs(); n != 9 {
		t.Errorf("GPUs() = %d, want 9", n)
	}
}

// TestExemptions: a pod a DaemonSet owns, and a DaemonSet, may tolerate
// the GPU taint without asking for a GPU (a node's device plugin or
// exporter); a ReplicaSet's pod may not. A GPU pod of no team in a
// namespace of the policy's excludeNamespaces is neither refused nor
// mutated, as the chart's namespaceSelector would not send it.
func TestExemptions(t *testing.T) {
	pol, err := policy.Parse("policy.yaml", []byte("apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\nexcludeNamespaces: [gpu-operator]\nteams:\n- {name: research, namespaces: [research]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(pol, nil)
	const tolerates = `"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]`
	pod := func(ns, owner, resources string) string {
		return `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "` + ns + `", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "` + owner + `", "name": "o", "uid": "u", "controller": true}]},
		"spec": {` + tolerates + `, "containers": [{"name": "c", "image": "i", "resources": ` + resources + `}]}}`
	}
	ds := `{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "dcgm-exporter", "namespace": "monitoring"},
		"spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {` + tolerates + `, "containers": [{"name": "c", "image": "i"}]}}}}`
	gpu := `{"limits": {"nvidia.com/gpu": "1"}}`
	for _, c := range []struct {
		name, group, kind, ns, object string
		refused                       string
	}{
		{"device plugin pod", "", "Pod", "research", pod("research", "DaemonSet", "{}"), ""},
		{"DaemonSet", "apps", "DaemonSet", "monitoring", ds, ""},
		{"ReplicaSet's pod", "", "Pod", "research", pod("research", "ReplicaSet", "{}"), "gpu-taint-toleration"},
		{"GPU pod in an excluded namespace", "", "Pod", "gpu-operator", pod("gpu-operator", "Pod", gpu), ""},
		{"GPU pod of no team", "", "Pod", "gpu-ops", pod("gpu-ops", "Pod", gpu), "team"},
	} {
		body := `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "u1",
			"kind": {"group": "` + c.group + `", "version": "v1", "kind": "` + c.kind + `"}, "namespace": "` + c.ns + `", "operation": "CREATE", "object": ` + c.object + `}}`
		for _, path := range []string{"/validate", "/mutate"} {
			code, out := post(t, h, path, []byte(body))
			var rv admissionv1.AdmissionReview
			if err := json.Unmarshal([]byte(out), &rv); code != 200 || err != nil || rv.Response == nil {
				t.Fatalf("%s %s: %d %v %s", c.name, path, code, err, out)
			}
			r := rv.Response
			switch {
			case path == "/mutate" && c.ns == "gpu-operator" && r.Patch != nil:
				t.Errorf("%s: mutated: %s", c.name, r.Patch)
			case path == "/validate" && c.refused == "" && !r.Allowed:
				t.Errorf("%s: refused: %v", c.name, r.Result.Message)
			case path == "/validate" && c.refused != "" && (r.Allowed || !strings.Contains(r.Result.Message, ": "+c.refused+": ")):
				t.Errorf("%s: %+v, want refused by %s", c.name, r.Result, c.refused)
			}
		}
	}
}
