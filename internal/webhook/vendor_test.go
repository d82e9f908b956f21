// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// TestValidateVendors: through the webhook, a pod's amd.com/gpu and
// habana.ai/gaudi count as GPUs and AMD's node labeller's product name
// selects a model. By hand: 4 amd.com/gpu + 2 nvidia.com/gpu = 6 GPUs,
// over the team's 4; the MI300X selected by required node affinity on
// amd.com/gpu.product-name (AMD_Instinct_MI300X) is the team's catalog
// name MI300X; habana.ai/gaudi is not among the team's resources.
func TestValidateVendors(t *testing.T) {
	pol, err := policy.Parse("vendors.yaml", []byte(`apiVersion: gpuplane.io/v1alpha1
kind: GPUPolicy
teams:
- name: mixed
  namespaces: [mixed]
  allowedResources: [nvidia.com/gpu, amd.com/gpu]
  allowedModels: [MI300X]
  maxGPUsPerPod: 4
`))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(pol, func(_ context.Context, name string) (map[string]string, error) { return nil, nil })
	affinity := `"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "amd.com/gpu.product-name", "operator": "In", "values": ["AMD_Instinct_MI300X"]}]}]}}}`
	for _, c := range []struct{ name, spec, want string }{
		{"mixed", affinity + `, "containers": [{"name": "rocm", "resources": {"limits": {"amd.com/gpu": "4"}}}, {"name": "cuda", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]`,
			"gpuplane GPU policy refuses pod mixed/p: max-gpus-per-pod: the pod asks for 6 GPUs, team mixed allows at most 4 per pod; ask for fewer or split the work"},
		{"amd", affinity + `, "containers": [{"name": "rocm", "resources": {"limits": {"amd.com/gpu": "4"}}}]`, ""},
		{"gaudi", `"nodeSelector": {"gpuplane.io/gpu.model": "MI300X"}, "containers": [{"name": "hpu", "resources": {"limits": {"habana.ai/gaudi": "1"}}}]`,
			"gpuplane GPU policy refuses pod mixed/p: allowed-resources: container hpu: resource habana.ai/gaudi is not allowed for team mixed; use one of nvidia.com/gpu, amd.com/gpu"},
	} {
		body := fmt.Sprintf(`{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": "u-%s", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "resource": {"group": "", "version": "v1", "resource": "pods"}, "namespace": "mixed", "operation": "CREATE", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "mixed"}, "spec": {%s}}}}`, c.name, c.spec)
		code, out := post(t, h, "/validate", []byte(body))
		var rv admissionv1.AdmissionReview
		if err := json.Unmarshal([]byte(out), &rv); code != 200 || err != nil || rv.Response == nil {
			t.Fatalf("%s: status %d: %s", c.name, code, out)
		}
		r := rv.Response
		switch {
		case c.want == "" && !r.Allowed:
			t.Errorf("%s refused: %v", c.name, r.Result)
		case c.want != "" && (r.Allowed || r.Result == nil || r.Result.Code != 403 || r.Result.Message != c.want):
			t.Errorf("%s: %+v, want refusal %q", c.name, r.Result, c.want)
		}
	}
}
