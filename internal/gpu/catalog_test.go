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
