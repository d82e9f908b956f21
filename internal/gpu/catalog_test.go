// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "testing"

func TestFromProductName(t *testing.T) {
	c := Default()
	cases := map[string]string{
		"NVIDIA H100 80GB HBM3":   "H100-80GB",
		"NVIDIA A100-SXM4-80GB":   "A100-80GB",
		"NVIDIA A100-SXM4-40GB":   "A100-40GB",
		"Tesla V100-SXM2-16GB":    "V100M16",
		"Tesla V100-SXM2-32GB":    "V100M32",
		"NVIDIA L40S":             "L40S",
		"NVIDIA L4":               "L4",
		"Tesla T4":                "T4",
		"NVIDIA H200":             "H200-141GB",
		"Tesla P100-PCIE-16GB":    "P100",
		"NVIDIA A10":              "A10",
		"NVIDIA GeForce RTX 4090": "",
	}
	for product, want := range cases {
		m, ok := c.FromProductName(product)
		if m.Name != want || ok != (want != "") {
			t.Errorf("FromProductName(%q) = %q, %v; want %q", product, m.Name, ok, want)
		}
	}
}

func TestCatalogHasTraceAndCurrentModels(t *testing.T) {
	c := Default()
	for _, n := range []string{"P100", "T4", "V100M16", "V100M32", "A10", "G2", "G3", "A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "L4", "L40S"} {
		if _, ok := c.Get(n); !ok {
			t.Errorf("model %s missing", n)
		}
	}
	if m, _ := c.Get("A100-80GB"); !m.MIGCapable || m.MemoryMiB != 81920 {
		t.Errorf("A100-80GB = %+v", m)
	}
	if m, _ := c.Get("T4"); m.MIGCapable {
		t.Error("T4 is not MIG-capable")
	}
}

// TestModelOfProduct: the product label is the NVML name with spaces as
// dashes, as gpu-feature-discovery and gpuplane's node agent
// (internal/node/labels.Product) write it.
func TestModelOfProduct(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA-A100-SXM4-80GB": "A100-80GB",
		"NVIDIA-H100-80GB-HBM3": "H100-80GB",
		"Tesla-T4":              "T4",
		"NVIDIA-L40S":           "L40S",
		"NVIDIA-L4":             "L4",
		"V100M16":               "V100M16",
		"NVIDIA-A10":            "A10",
		"Tesla-V100-SXM2-32GB":  "V100M32",
		"NVIDIA-RTX-PRO-6000":   "NVIDIA-RTX-PRO-6000",
		"NVIDIA-A100-PCIE-40GB": "A100-40GB",
	} {
		if got := ModelOfProduct(in); got != want {
			t.Errorf("ModelOfProduct(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNewMIGModels: the models NVIDIA's MIG user guide lists besides A100,
// H100-80GB and H200 are told apart by product and PCI ID, with their own
// profiles. Worked out by hand: "NVIDIA-H100-NVL" matches "H100" (4
// characters) as written and "H100 NVL" (8) with '-' read as ' ': the
// longer wins; "NVIDIA H20" is H20 but "NVIDIA H200 141GB HBM3e" H200
// ("H20 " needs the space); "NVIDIA GH200 480GB" matches "H200" (4) and
// "GH200" (5). An H100 NVL takes 7 x 1g.12gb (7 slots of 8) and 2 x
// 3g.47gb; an H100-80GB no 1g.12gb. "NVIDIA B200" and the mock's "NVIDIA
// B200 180GB HBM3e" are B200 (" B200"), "NVIDIA GB200" is not (no space
// before B200: uncatalogued); the cost example's "NVIDIA RTX PRO 6000
// Blackwell" is its own model.
func TestNewMIGModels(t *testing.T) {
	for product, want := range map[string]string{
		"NVIDIA-H100-NVL": "H100-NVL", "NVIDIA H100 NVL": "H100-NVL", "NVIDIA-H100-80GB-HBM3": "H100-80GB",
		"NVIDIA H20": "H20", "NVIDIA-H20": "H20", "NVIDIA H200 141GB HBM3e": "H200-141GB",
		"NVIDIA GH200 480GB": "GH200", "NVIDIA B200": "B200", "NVIDIA-B200": "B200", "NVIDIA B200 180GB HBM3e": "B200",
		"NVIDIA GB200": "NVIDIA GB200", "NVIDIA RTX PRO 6000 Blackwell": "NVIDIA RTX PRO 6000 Blackwell",
	} {
		if got := ModelOfProduct(product); got != want {
			t.Errorf("ModelOfProduct(%q) = %q, want %q", product, got, want)
		}
	}
	if m, ok := Default().Get("H100-NVL"); !ok || m.MemoryMiB != 94*1024 || !m.MIGCapable {
		t.Errorf("H100-NVL: %+v", m)
	}
	for id, want := range map[uint32]string{0x232110DE: "H100-NVL", 0x20B010DE: "A100-40GB", 0x20B510DE: "A100-80GB", 0x233010DE: "H100-80GB", 0x233510DE: "H200-141GB", 0x290110DE: "B200", 0x2B0010DE: "B200"} {
		if m, ok := ModelOfPCIDeviceID(id); !ok || m.Name != want {
			t.Errorf("PCI ID %#x: %q, want %q", id, m.Name, want)
		}
	}
	if _, ok := ModelOfPCIDeviceID(0x20B710DE); ok {
		t.Error("0x20B710DE (A30) is not catalogued")
	}
	for _, tc := range []struct {
		model, profile string
		n              int
	}{{"H100-NVL", "1g.12gb", 7}, {"H100-NVL", "3g.47gb", 2}, {"H100-NVL", "1g.24gb", 4}, {"H20", "7g.96gb", 1}, {"GH200", "2g.24gb", 3},
		{"B200", "1g.23gb", 7}, {"B200", "1g.45gb", 4}, {"B200", "2g.45gb", 3}, {"B200", "3g.90gb", 2}, {"B200", "4g.90gb", 1}, {"B200", "7g.180gb", 1}} {
		if n, ok := MIGFullCount(tc.model, tc.profile); !ok || n != tc.n {
			t.Errorf("%s %s: %d, %v; want %d", tc.model, tc.profile, n, ok, tc.n)
		}
	}
	if _, err := PlaceMIG("H100-80GB", []string{"1g.12gb"}); err == nil {
		t.Error("H100-80GB has no 1g.12gb")
	}
}
