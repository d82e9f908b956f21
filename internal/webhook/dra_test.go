// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

const draDir = "policy/testdata/dra/"

// draHandler is the handler of the DRA tests' policy (team ml-train,
// namespaces ml-train and gpu-test1, 8 GPUs a pod).
func draHandler(t *testing.T) *Handler {
	t.Helper()
	data, err := os.ReadFile(draDir + "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse("policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return NewHandler(pol, nil)
}

// docs returns the documents of a manifest file of draDir, as JSON, with
// their kinds.
func docs(t *testing.T, file string) (kinds []string, objs [][]byte) {
	t.Helper()
	data, err := os.ReadFile(draDir + file)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(js, &head); err != nil {
			t.Fatal(err)
		}
		kinds, objs = append(kinds, head.Kind), append(objs, js)
	}
	return kinds, objs
}

// claimsOf returns ReadClaims of a fake API server that holds the
// ResourceClaimTemplates of manifest files of draDir.
func claimsOf(t *testing.T, files ...string) ClaimSpecs {
	t.Helper()
	var objs []runtime.Object
	for _, f := range files {
		kinds, docs := docs(t, f)
		for i, k := range kinds {
			if k != "ResourceClaimTemplate" {
				continue
			}
			var tpl resourcev1.ResourceClaimTemplate
			if err := json.Unmarshal(docs[i], &tpl); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, &tpl)
		}
	}
	return ReadClaims(fake.NewClientset(objs...))
}

// podReview is the AdmissionReview of creating the Pod of a manifest file
// of draDir (its documents of other kinds are skipped).
func podReview(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(draDir + file)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var head struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &head); err != nil || head.Kind != "Pod" {
			continue
		}
		rv := admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID: "d7a0c1e2-0000-4000-8000-000000000034", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Name: head.Metadata.Name,
				Namespace: head.Metadata.Namespace, Operation: admissionv1.Create,
			},
		}
		rv.Request.Object.Raw = js
		out, err := json.Marshal(&rv)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("%s: no Pod", file)
	return nil
}

func answer(t *testing.T, h *Handler, path string, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	code, out := post(t, h, path, body)
	var rv admissionv1.AdmissionReview
	if err := json.Unmarshal([]byte(out), &rv); code != 200 || err != nil || rv.Response == nil {
		t.Fatalf("%s: %d %s", path, code, out)
	}
	return rv.Response
}

// TestValidateDRATaint: the webhook admits NVIDIA's DRA quickstart pod
// (policy/testdata/dra/gpu-test1.yaml, the shape of k8s-dra-driver-gpu
// demo/specs/quickstart/v1/gpu-test1.yaml: a claim from a template of
// class gpu.nvidia.com and the toleration nvidia.com/gpu:NoSchedule),
// which it refused with a 403 as "asks for no GPU" (issue 34), and still
// refuses a CPU pod that tolerates the taint.
func TestValidateDRATaint(t *testing.T) {
	h := draHandler(t)
	if r := answer(t, h, "/validate", podReview(t, "gpu-test1.yaml")); !r.Allowed {
		t.Errorf("gpu-test1 pod1 refused: %v", r.Result)
	}
	r := answer(t, h, "/validate", podReview(t, "cpu-squatter.yaml"))
	want := "gpuplane GPU policy refuses pod gpu-test1/squatter: gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule"
	if r.Allowed || r.Result == nil || r.Result.Code != 403 || !strings.HasPrefix(r.Result.Message, want) {
		t.Errorf("squatter: %+v, want refusal %q", r.Result, want)
	}
}

// TestValidateDRAMaxGPUs: issue 34's case through the webhook, which GETs
// the pod's ResourceClaimTemplate (here from a fake API server holding
// policy/testdata/dra/ml-train.yaml's): team ml-train allows 8 GPUs a
// pod; train-16 claims 16 (count 16) and is refused with the message
// policy check gives (TestCheckDRAMaxGPUs); train-8 is admitted and
// mutated as any GPU pod of the team (the team label). Without its
// template the pod is admitted with a warning naming the claim.
func TestValidateDRAMaxGPUs(t *testing.T) {
	h := draHandler(t)
	h.Claims = claimsOf(t, "ml-train.yaml", "gpu-test1.yaml")
	_, objs := docs(t, "ml-train.yaml")
	review := func(pod []byte) []byte {
		var p struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		json.Unmarshal(pod, &p)
		rv := admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "d7a0c1e2-0000-4000-8000-000000000016", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Name: p.Metadata.Name, Namespace: p.Metadata.Namespace, Operation: admissionv1.Create},
		}
		rv.Request.Object.Raw = pod
		b, _ := json.Marshal(&rv)
		return b
	}
	r := answer(t, h, "/validate", review(objs[2]))
	want := "gpuplane GPU policy refuses pod ml-train/train-16: max-gpus-per-pod: the pod asks for 16 GPUs, team ml-train allows at most 8 per pod; ask for fewer or split the work"
	if r.Allowed || r.Result == nil || r.Result.Code != 403 || r.Result.Message != want {
		t.Errorf("train-16: %+v, want refusal %q", r.Result, want)
	}
	if r := answer(t, h, "/validate", review(objs[3])); !r.Allowed || len(r.Warnings) != 0 {
		t.Errorf("train-8: %+v, warnings %q; want admitted, no warning", r.Result, r.Warnings)
	}
	if r := answer(t, h, "/mutate", review(objs[3])); !r.Allowed || string(r.Patch) != `[{"op":"add","path":"/metadata/labels","value":{"gpuplane.io/team":"ml-train"}}]` {
		t.Errorf("train-8 mutated: %s", r.Patch)
	}
	if r := answer(t, h, "/validate", podReview(t, "gpu-test1.yaml")); !r.Allowed {
		t.Errorf("gpu-test1 pod1 refused: %v", r.Result)
	}
	h.Claims = claimsOf(t)
	r = answer(t, h, "/validate", review(objs[2]))
	if w := "claim gpus: ResourceClaimTemplate sixteen-gpus not found: its devices are not counted"; !r.Allowed || len(r.Warnings) != 1 || r.Warnings[0] != w {
		t.Errorf("train-16 without its template: %+v, warnings %q; want admitted with warning %q", r.Result, r.Warnings, w)
	}
}

// TestValidateDRADeployment: a workload's pod template is checked with
// its claims read from its namespace. testdata/dra/gpu-test4.yaml is the
// shape of NVIDIA's v1/gpu-test4.yaml (a Deployment whose pod claims four
// MIG devices, 1g.5gb twice, 2g.10gb, 3g.20gb): 4 GPUs, admitted under
// ml-train's 8; with a cap of 3 refused, 4 counted; with MIG profiles
// allowed but 1g.5gb, its two requests are named.
func TestValidateDRADeployment(t *testing.T) {
	kinds, objs := docs(t, "gpu-test4.yaml")
	if kinds[1] != "Deployment" {
		t.Fatalf("kinds %v", kinds)
	}
	rv := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "d7a0c1e2-0000-4000-8000-000000000004", Kind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			Name: "mig-pod", Namespace: "ml-train", Operation: admissionv1.Create},
	}
	rv.Request.Object.Raw = objs[1]
	body, err := json.Marshal(&rv)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(draDir + "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max       int64
		resources []string
		want      string
	}{
		{8, nil, ""},
		{3, nil, "gpuplane GPU policy refuses deployment ml-train/mig-pod: max-gpus-per-pod: the pod asks for 4 GPUs, team ml-train allows at most 3 per pod"},
		{0, []string{"nvidia.com/mig-2g.10gb", "nvidia.com/mig-3g.20gb"}, "gpuplane GPU policy refuses deployment ml-train/mig-pod: " +
			"allowed-resources: claim mig-devices request mig-1g-5gb-0: resource nvidia.com/mig-1g.5gb is not allowed for team ml-train; use one of nvidia.com/mig-2g.10gb, nvidia.com/mig-3g.20gb; " +
			"allowed-resources: claim mig-devices request mig-1g-5gb-1: resource nvidia.com/mig-1g.5gb is not allowed"},
	} {
		pol, err := policy.Parse("policy.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		pol.Teams[0].MaxGPUsPerPod, pol.Teams[0].AllowedResources = c.max, c.resources
		h := NewHandler(pol, nil)
		h.Claims = claimsOf(t, "gpu-test4.yaml")
		r := answer(t, h, "/validate", body)
		switch {
		case c.want == "" && !r.Allowed:
			t.Errorf("max %d: refused: %v", c.max, r.Result)
		case c.want != "" && (r.Allowed || !strings.HasPrefix(r.Result.Message, c.want)):
			t.Errorf("max %d, resources %v: %+v, want refusal %q", c.max, c.resources, r.Result, c.want)
		}
	}
}
