// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
