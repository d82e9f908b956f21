// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "testing"

// TestFromLabel: nvidia.com/gpu.product as gpu-feature-discovery writes it,
// the NVML name with spaces made '-' and "-SHARED" appended under
// time-slicing without a rename (github.com/NVIDIA/k8s-device-plugin,
// internal/lm/resource.go, productLabel), and a MIG device's label
// MODEL-MIG-PROFILE, which names no whole GPU.
func TestFromLabel(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA-A100-SXM4-80GB":            "A100-80GB",
		"NVIDIA-A100-80GB-PCIe":            "A100-80GB",
		"NVIDIA-A100-SXM4-40GB":            "A100-40GB",
		"NVIDIA-H100-80GB-HBM3":            "H100-80GB",
		"NVIDIA-H100-NVL":                  "H100-NVL",
		"NVIDIA-H200":                      "H200-141GB",
		"Tesla-T4":                         "T4",
		"tesla-t4":                         "T4",
		"Tesla-T4-SHARED":                  "T4",
		"Tesla-V100-SXM2-16GB":             "V100M16",
		"NVIDIA-L4":                        "L4",
		"NVIDIA-L40S":                      "L40S",
		"NVIDIA-A10G":                      "A10",
		"NVIDIA-L40":                       "", // 48 GB, not an L4; not catalogued
		"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb": "",
		"NVIDIA-RTX-PRO-6000":              "",
		"A100-SXM4-80GB":                   "", // no NVIDIA- or Tesla- prefix
		"T4":                               "",
		"AMD_Instinct_MI300X":              "MI300X", // AMD's node labeller
		"AMD_Instinct_MI355X":              "MI355X",
		"AMD_Instinct_MI210":               "", // not catalogued
	} {
		m, ok := FromLabel(in)
		if ok != (want != "") || m.Name != want {
			t.Errorf("FromLabel(%q) = %q, %v; want %q", in, m.Name, ok, want)
		}
	}
	if !IsMIGLabel("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb") || IsMIGLabel("NVIDIA-A100-SXM4-40GB") {
		t.Error("IsMIGLabel")
	}
}

func TestAbout(t *testing.T) {
	for in, want := range map[string]string{
		"V100M16":    "NVIDIA V100 16 GB (openb code)",
		"g2":         "undisclosed openb model, memory unknown, priced as a V100",
		"L40S":       "NVIDIA L40S",
		"MI300X":     "AMD Instinct MI300X 192 GB",
		"Ascend910B": "",
	} {
		if got := About(in); got != want {
			t.Errorf("About(%q) = %q, want %q", in, got, want)
		}
	}
}
