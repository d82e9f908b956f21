// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/api/resource"
)

// vendorPolicy has a mixed team that caps pods at 4 GPUs of any vendor and
// allows an AMD model by gpuplane's catalog name, and a team that allows
// AMD's and NVIDIA's resources but not Gaudi's, and the MI300X by AMD's
// node labeller's product name.
const vendorPolicy = `apiVersion: gpuplane.io/v1alpha1
kind: GPUPolicy
teams:
- name: mixed
  namespaces: [mixed]
  allowedModels: [MI300X, NVIDIA-H100-80GB-HBM3, Gaudi3]
  maxGPUsPerPod: 4
- name: amd
  namespaces: [amd]
  allowedResources: [nvidia.com/gpu, amd.com/gpu]
  allowedModels: [AMD_Instinct_MI300X]
`

// vendorPod is a pod of one container per resource (in the order given,
// pairs of name and count) that selects model by node label key.
func vendorPod(key, model string, res ...any) *Pod {
	p := &Pod{Name: "p", NodeSelector: map[string]string{key: model}}
	for i := 0; i < len(res); i += 2 {
		r := res[i].(string)
		p.Containers = append(p.Containers, Container{Name: "c" + r[:3], Resources: map[string]int64{r: int64(res[i+1].(int))}})
	}
	return p
}

// TestValidateVendors: amd.com/gpu and habana.ai/gaudi are GPUs to every
// rule. The counts and messages are worked by hand from Validate's rules:
// 4 amd.com/gpu + 2 nvidia.com/gpu = 6 GPUs > 4; 5 habana.ai/gaudi > 4;
// AMD's labeller writes the MI300X as AMD_Instinct_MI300X (ROCm/
// k8s-device-plugin cmd/k8s-node-labeller, the product name with '_' for
// ' '), which is the catalog's MI300X, and the MI325X is another model.
func TestValidateVendors(t *testing.T) {
	p, err := Parse("vendors.yaml", []byte(vendorPolicy))
	if err != nil {
		t.Fatal(err)
	}
	mixed, amd := Namespace{Name: "mixed"}, Namespace{Name: "amd"}
	amdName, model := resource.LabelAMDProductName, resource.LabelGPUModel
	for _, c := range []struct {
		name string
		pod  *Pod
		ns   Namespace
		want []string // Violation.String(), whole
	}{
		{"4 AMD + 2 NVIDIA over 4", vendorPod(amdName, "AMD_Instinct_MI300X", "amd.com/gpu", 4, "nvidia.com/gpu", 2), mixed,
			[]string{"max-gpus-per-pod: the pod asks for 6 GPUs, team mixed allows at most 4 per pod; ask for fewer or split the work"}},
		{"4 AMD by product name", vendorPod(amdName, "AMD_Instinct_MI300X", "amd.com/gpu", 4), mixed, nil},
		{"4 Gaudi by catalog model", vendorPod(model, "Gaudi3", "habana.ai/gaudi", 4), mixed, nil},
		{"5 Gaudi", vendorPod(model, "Gaudi3", "habana.ai/gaudi", 5), mixed,
			[]string{"max-gpus-per-pod: the pod asks for 5 GPUs, team mixed allows at most 4 per pod; ask for fewer or split the work"}},
		{"MI325X not allowed", vendorPod(amdName, "AMD_Instinct_MI325X", "amd.com/gpu", 1), mixed,
			[]string{`allowed-models: GPU model "AMD_Instinct_MI325X" is not allowed for team mixed; select one of MI300X, NVIDIA-H100-80GB-HBM3, Gaudi3 with nvidia.com/gpu.product`}},
		{"AMD pod selects no model", &Pod{Containers: []Container{{Name: "c", Resources: map[string]int64{"amd.com/gpu": 1}}}}, mixed,
			[]string{"allowed-models: team mixed may use only GPU models MI300X, NVIDIA-H100-80GB-HBM3, Gaudi3; add nodeSelector nvidia.com/gpu.product: <one of them>"}},
		{"catalog name against product name", vendorPod(model, "MI300X", "amd.com/gpu", 8), amd, nil},
		{"MI300X by affinity", &Pod{ModelAffinity: [][]string{{"MI300X", "AMD_Instinct_MI355X"}}, Containers: []Container{{Name: "c", Resources: map[string]int64{"amd.com/gpu": 1}}}}, amd,
			[]string{`allowed-models: GPU model "AMD_Instinct_MI355X" is not allowed for team amd; select one of AMD_Instinct_MI300X with nvidia.com/gpu.product`}},
		{"Gaudi not allowed", vendorPod(model, "MI300X", "habana.ai/gaudi", 1), amd,
			[]string{"allowed-resources: container chab: resource habana.ai/gaudi is not allowed for team amd; use one of nvidia.com/gpu, amd.com/gpu"}},
		// An AMD pod is no taint squatter: it asks for a GPU.
		{"AMD pod tolerating the taint", &Pod{NodeSelector: map[string]string{amdName: "AMD_Instinct_MI300X"}, Tolerations: []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists"}}, Containers: []Container{{Name: "c", Resources: map[string]int64{"amd.com/gpu": 1}}}}, amd, nil},
	} {
		var got []string
		for _, v := range p.Validate(c.pod, c.ns) {
			got = append(got, v.String())
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// A Gaudi pod of the mixed team gets the team label (Mutate).
	if ops := p.Mutate(vendorPod(model, "Gaudi3", "habana.ai/gaudi", 1), mixed); len(ops) != 2 || ops[1].Path != "/metadata/labels" {
		t.Errorf("Gaudi pod's mutation %+v, want the toleration and the team label", ops)
	}
}

// TestParseVendorResources: allowedResources takes the vendors' resources
// and their prefixes; a name of no accelerator is an error naming file,
// line and field.
func TestParseVendorResources(t *testing.T) {
	head := "apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\nteams:\n- name: t\n  namespaces: [t]\n  allowedResources: "
	for res, want := range map[string]string{
		"[amd.com/gpu, habana.ai/gaudi]": "",
		"[amd.com/*, habana.ai/*]":       "",
		"[amd.com/gpu.shared]":           `v.yaml:6: teams[0].allowedResources: "amd.com/gpu.shared" is not a GPU resource`,
		"[habana.ai/gaudi2]":             `v.yaml:6: teams[0].allowedResources: "habana.ai/gaudi2" is not a GPU resource`,
		"[amd.com/cpx_nps1]":             `v.yaml:6: teams[0].allowedResources: "amd.com/cpx_nps1" is not a GPU resource`,
	} {
		_, err := Parse("v.yaml", []byte(head+res+"\n"))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", res, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%s: %v, want %q", res, err, want)
		}
	}
}

// TestCheckVendors: gpuplane policy check reads amd.com/gpu and
// habana.ai/gaudi from manifests and AMD's product-name affinity. By hand:
// the rocm pod (line 2) asks for 4 + 2 = 6 GPUs, over 4; the hpu pod (line
// 18, after 15 lines of the first pod and the "---") selects Gaudi2, which team mixed does not list.
func TestCheckVendors(t *testing.T) {
	p, err := Parse("vendors.yaml", []byte(vendorPolicy))
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := p.Check([]string{"testdata/vendors/pods.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"testdata/vendors/pods.yaml:2: Pod mixed/rocm: max-gpus-per-pod: the pod asks for 6 GPUs, team mixed allows at most 4 per pod; ask for fewer or split the work",
		`testdata/vendors/pods.yaml:18: Pod mixed/hpu: allowed-models: GPU model "Gaudi2" is not allowed for team mixed; select one of MI300X, NVIDIA-H100-80GB-HBM3, Gaudi3 with nvidia.com/gpu.product`,
	}
	var s []string
	for _, f := range got {
		s = append(s, f.String())
	}
	if n != 2 || strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("%d objects, findings:\n%s\nwant 2 objects and\n%s", n, strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
}
