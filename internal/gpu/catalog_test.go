package gpu

import (
	"strings"
	"testing"
)

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
		m, ok := c.Get(n)
		if !ok {
			t.Errorf("model %s missing", n)
			continue
		}
		if m.PriceUSDPerHour <= 0 || m.PriceSource == "" {
			t.Errorf("model %s has no default price with a source", n)
		}
	}
	if m, _ := c.Get("A100-80GB"); !m.MIGCapable || m.MemoryMiB != 81920 {
		t.Errorf("A100-80GB = %+v", m)
	}
	if m, _ := c.Get("T4"); m.MIGCapable {
		t.Error("T4 is not MIG-capable")
	}
}

func TestReadPrices(t *testing.T) {
	c := Default()
	err := c.ReadPrices("prices.txt", strings.NewReader("# per GPU-hour\nT4 0.50\nH100-80GB, 2.99\nMI300X 4.10 # new model\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"T4": 0.50, "H100-80GB": 2.99, "MI300X": 4.10, "P100": 1.46} {
		if got, _ := c.Price(name); got != want {
			t.Errorf("price %s = %v, want %v", name, got, want)
		}
	}
	if m, _ := c.Get("T4"); m.PriceSource != "prices.txt line 2" {
		t.Errorf("source = %q", m.PriceSource)
	}
	// The default catalog is not changed by an override of a copy.
	if p, _ := Default().Price("T4"); p != 0.35 {
		t.Errorf("default T4 price changed to %v", p)
	}
	for _, bad := range []string{"T4\n", "T4 -1\n", "T4 NaN\n", "T4 1 2\n", "T4 abc\n"} {
		if err := Default().ReadPrices("p.txt", strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "p.txt:1:") {
			t.Errorf("ReadPrices(%q) = %v, want an error at p.txt:1", bad, err)
		}
	}
}

func FuzzReadPrices(f *testing.F) {
	f.Add([]byte("T4 0.35\nH100-80GB 11.06\n"))
	f.Add([]byte("# c\nX,1e3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if err := c.ReadPrices("fuzz", strings.NewReader(string(data))); err != nil {
			return
		}
		for _, n := range c.Names() {
			if p, _ := c.Price(n); p < 0 || p != p {
				t.Fatalf("accepted price %v for %s", p, n)
			}
		}
	})
}
