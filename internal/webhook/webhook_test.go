package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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
		{strings.Repeat(" ", maxBody+1), "body over 4194304 bytes"},
	} {
		code, out := post(t, h, "/validate", []byte(c.body))
		if code != 400 || !strings.Contains(out, c.want) {
			t.Errorf("body %.40q: %d %q, want 400 %q", c.body, code, out, c.want)
		}
	}
	// An object that does not decode is refused with the reason.
	bad := bytes.Replace(good, []byte(`"nvidia.com/mig-1g.10gb": "1"`), []byte(`"nvidia.com/mig-1g.10gb": "one"`), 1)
	code, out := post(t, h, "/validate", bad)
	if code != 200 || !strings.Contains(out, `"allowed":false`) || !strings.Contains(out, "reading Pod: quantities must match the regular expression") {
		t.Errorf("bad quantity: %d %s", code, out)
	}
	r := httptest.NewRequest("POST", "/validate", bytes.NewReader(good))
	r.Header.Set("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 400 || !strings.Contains(w.Body.String(), `content type "text/plain", want application/json`) {
		t.Errorf("text/plain: %d %s", w.Code, w.Body)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	h := newHandler(t)
	good, _ := os.ReadFile("testdata/pod-good.json")
	post(t, h, "/validate", good)
	post(t, h, "/mutate", good)
	post(t, h, "/mutate", nil)
	for path, want := range map[string][]string{
		"/healthz": {"ok"},
		"/metrics": {
			`gpuplane_webhook_requests_total{result="allowed",webhook="validate"} 1`,
			`gpuplane_webhook_requests_total{result="patched",webhook="mutate"} 1`,
			`gpuplane_webhook_requests_total{result="bad_request",webhook="mutate"} 1`,
			`gpuplane_webhook_duration_seconds_count{webhook="mutate"} 2`,
		},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(w.Body)
		for _, s := range want {
			if !strings.Contains(string(body), s) {
				t.Errorf("%s lacks %q:\n%s", path, s, body)
			}
		}
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
