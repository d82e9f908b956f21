// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"bytes"
	"strings"
	"testing"
)

// mixedTeams: team ml has 8 H100-80GB, 64 MI300X (partitions) and 8
// Gaudi3; team web 8 MI300X, lending all. ml's caps, worked by hand
// (HardCap: nominal plus what the others lend): nvidia.com/gpu 8 + 0 = 8,
// amd.com/gpu 64 + 8 = 72, habana.ai/gaudi 8 + 0 = 8; web's amd.com/gpu 8
// + 64 = 72 and nvidia.com/gpu and habana.ai/gaudi 0 (it has none).
const mixedTeams = `cohort: mixed
teams:
- name: ml
  namespaces: [ml]
  quotas:
  - {model: H100-80GB, nominal: 8, product: NVIDIA-H100-80GB-HBM3}
  - {model: MI300X, nominal: 64, product: AMD_Instinct_MI300X}
  - {model: Gaudi3, nominal: 8}
- name: web
  namespaces: [web]
  quotas:
  - {model: MI300X, nominal: 8}
`

// TestPlanVendors: a ResourceFlavor per vendor model selecting nodes by
// the label its vendor's components write (NVIDIA's gpu-feature-discovery
// nvidia.com/gpu.product, AMD's node labeller amd.com/gpu.product-name,
// gpuplane's gpuplane.io/gpu.model for Gaudi, whose plugin labels none);
// each ClusterQueue a resource group per vendor's resource; each
// ResourceQuota a cap per vendor's resource.
func TestPlanVendors(t *testing.T) {
	ts, err := ParseTeams("t.yaml", []byte(mixedTeams))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Plan("t.yaml", ts, map[string]int{"H100-80GB": 8, "MI300X": 128, "Gaudi3": 8})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, objs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"kind: ResourceFlavor\nmetadata:\n  name: mi300x\n  labels:\n    gpuplane.io/model: MI300X\nspec:\n  nodeLabels:\n    amd.com/gpu.product-name: AMD_Instinct_MI300X\n",
		"kind: ResourceFlavor\nmetadata:\n  name: gaudi3\n  labels:\n    gpuplane.io/model: Gaudi3\nspec:\n  nodeLabels:\n    gpuplane.io/gpu.model: Gaudi3\n",
		"kind: ResourceFlavor\nmetadata:\n  name: h100-80gb\n  labels:\n    gpuplane.io/model: H100-80GB\nspec:\n  nodeLabels:\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n",
		"  resourceGroups:\n    - coveredResources:\n        - nvidia.com/gpu\n      flavors:\n        - name: h100-80gb\n          resources:\n            - name: nvidia.com/gpu\n              nominalQuota: 8\n" +
			"    - coveredResources:\n        - amd.com/gpu\n      flavors:\n        - name: mi300x\n          resources:\n            - name: amd.com/gpu\n              nominalQuota: 64\n" +
			"    - coveredResources:\n        - habana.ai/gaudi\n      flavors:\n        - name: gaudi3\n          resources:\n            - name: habana.ai/gaudi\n              nominalQuota: 8\n",
		"  name: gpuplane-gpu\n  namespace: ml\nspec:\n  hard:\n    requests.amd.com/gpu: 72\n    requests.habana.ai/gaudi: 8\n    requests.nvidia.com/gpu: 8\n",
		"  name: gpuplane-gpu\n  namespace: web\nspec:\n  hard:\n    requests.amd.com/gpu: 72\n    requests.habana.ai/gaudi: 0\n    requests.nvidia.com/gpu: 0\n",
		// web has AMD quotas only: one group, since Kueue's CRD wants a
		// flavor in each (flavors minItems 1).
		"  resourceGroups:\n    - coveredResources:\n        - amd.com/gpu\n      flavors:\n        - name: mi300x\n          resources:\n            - name: amd.com/gpu\n              nominalQuota: 8\n  preemption:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks\n%s\n--- output:\n%s", want, out)
			break
		}
	}
	// An AMD model needs AMD's product label value.
	ts, err = ParseTeams("t.yaml", []byte("cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas:\n  - {model: MI300X, nominal: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err = Plan("t.yaml", ts, map[string]int{"MI300X": 8}); err == nil || !strings.Contains(err.Error(), "t.yaml:6: product: model MI300X has no amd.com/gpu.product-name value") {
		t.Errorf("error %v", err)
	}
}
