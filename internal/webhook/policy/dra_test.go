// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"os"
	"strings"
	"testing"
)

func loadDRA(t *testing.T) *Policy {
	t.Helper()
	data, err := os.ReadFile("testdata/dra/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("testdata/dra/policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckDRATaint: NVIDIA's DRA quickstart pod (testdata/dra/gpu-test1.yaml,
// the shape of k8s-dra-driver-gpu demo/specs/quickstart/v1/gpu-test1.yaml:
// a claim from a template of class gpu.nvidia.com and the toleration of
// nvidia.com/gpu:NoSchedule) is no taint squatter: policy check finds
// nothing in it (issue 34: it was refused as "asks for no GPU"). A pod
// with neither a GPU resource nor a claim that tolerates the taint is
// still refused, with the message of before.
func TestCheckDRATaint(t *testing.T) {
	p := loadDRA(t)
	got, n, err := p.Check([]string{"testdata/dra/gpu-test1.yaml"}, nil)
	if err != nil || n != 1 || len(got) != 0 {
		t.Errorf("gpu-test1.yaml: %d objects, %v, %v; want 1 object, no finding", n, got, err)
	}
	got, n, err = p.Check([]string{"testdata/dra/cpu-squatter.yaml"}, nil)
	want := "testdata/dra/cpu-squatter.yaml:3: Pod gpu-test1/squatter: gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule and would take room on a GPU node; remove that toleration or ask for a GPU"
	if err != nil || n != 1 || len(got) != 1 || got[0].String() != want {
		t.Errorf("cpu-squatter.yaml: %d objects, %v, %v; want 1 object and %q", n, got, err, want)
	}
}

// TestValidateDRATaint: the rule on the policy's Pod model; the claim
// alone makes the difference.
func TestValidateDRATaint(t *testing.T) {
	p := loadDRA(t)
	tol := []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}
	claimed := &Pod{Name: "pod1", Tolerations: tol, Claims: []Claim{{Name: "gpu", TemplateName: "single-gpu"}}, Containers: []Container{{Name: "ctr"}}}
	if vs := p.Validate(claimed, Namespace{Name: "gpu-test1"}); len(vs) != 0 {
		t.Errorf("pod with a claim: %v", vs)
	}
	bare := &Pod{Name: "pod1", Tolerations: tol, Containers: []Container{{Name: "ctr"}}}
	if vs := p.Validate(bare, Namespace{Name: "gpu-test1"}); len(vs) != 1 || !strings.HasPrefix(vs[0].String(), "gpu-taint-toleration: the pod asks for no GPU") {
		t.Errorf("pod without a claim: %v", vs)
	}
}
