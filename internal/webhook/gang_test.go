// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestMutateGang: with Gangs set, the mutating answer adds the pod's
// scheduling group after the policy's own patch; a pod in no gang, or
// whose gang cannot be made, is admitted with the policy's patch alone; a
// dry run is passed on as one.
func TestMutateGang(t *testing.T) {
	body, err := os.ReadFile("testdata/pod-good.json")
	if err != nil {
		t.Fatal(err)
	}
	policyPatch := `[{"op":"add","path":"/spec/tolerations","value":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]},{"op":"add","path":"/spec/schedulerName","value":"gpuplane-scheduler"},{"op":"add","path":"/metadata/labels","value":{"gpuplane.io/team":"research"}}]`
	gangPatch := strings.TrimSuffix(policyPatch, "]") + `,{"op":"add","path":"/spec/schedulingGroup","value":{"podGroupName":"pytorchjob-ddp"}}]`
	var gotNS string
	var gotDry bool
	for _, c := range []struct {
		name    string
		group   string
		err     error
		dryRun  bool
		want    string
		wantDry bool
	}{
		{"gang", "pytorchjob-ddp", nil, false, gangPatch, false},
		{"no gang", "", nil, false, policyPatch, false},
		{"owner unreadable", "", errors.New("owner PyTorchJob research/ddp: forbidden"), false, policyPatch, false},
		{"dry run", "pytorchjob-ddp", nil, true, gangPatch, true},
	} {
		h := newHandler(t)
		h.Gangs = func(_ context.Context, p *corev1.Pod, ns string, _ map[string]string, dry bool) (string, error) {
			gotNS, gotDry = ns, dry
			return c.group, c.err
		}
		var rv admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &rv); err != nil {
			t.Fatal(err)
		}
		rv.Request.DryRun = &c.dryRun
		b, _ := json.Marshal(rv)
		code, out := post(t, h, "/mutate", b)
		var resp admissionv1.AdmissionReview
		if err := json.Unmarshal([]byte(out), &resp); err != nil || code != 200 || resp.Response == nil {
			t.Fatalf("%s: %d %s", c.name, code, out)
		}
		if r := resp.Response; !r.Allowed || string(r.Patch) != c.want {
			t.Errorf("%s: allowed %v patch %s, want %s", c.name, r.Allowed, r.Patch, c.want)
		}
		if gotNS != rv.Request.Namespace || gotDry != c.wantDry {
			t.Errorf("%s: Gangs called with namespace %q dry run %v, want %q %v", c.name, gotNS, gotDry, rv.Request.Namespace, c.wantDry)
		}
	}
}
