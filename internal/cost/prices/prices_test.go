// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package prices

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestPricesYAML: a prices file written as a YAML mapping of model to USD
// per GPU-hour (the form gpuplane cost's issue asks for) reads to the same
// prices as a YAML parser gives.
func TestPricesYAML(t *testing.T) {
	const file = "# USD per GPU-hour\nA100-80GB: 3.10\n\"H100-80GB\": 9.5   # quoted key\n'MyGPU': 0\n"
	var want map[string]float64
	if err := yaml.Unmarshal([]byte(file), &want); err != nil {
		t.Fatalf("the test's file is not YAML: %v", err)
	}
	if len(want) != 3 {
		t.Fatalf("yaml read %v, want 3 models", want)
	}
	p := Default()
	if err := p.ReadPrices("prices.yaml", strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	for m, usd := range want {
		if got := p.USDPerHour(m); got != usd {
			t.Errorf("%s: %v USD/h, want %v", m, got, usd)
		}
	}
	if pr, _ := p.Get("H100-80GB"); pr.Source != "prices.yaml line 3" {
		t.Errorf("source %q, want prices.yaml line 3", pr.Source)
	}
}

func TestDefaultPricesCoverTheCatalog(t *testing.T) {
	p := Default()
	catalog := gpu.Default().Names()
	for _, n := range catalog {
		pr, ok := p.Get(n)
		if !ok || pr.USDPerHour <= 0 || pr.Source == "" {
			t.Errorf("model %s has no default price with a source: %+v", n, pr)
		}
	}
	if !reflect.DeepEqual(p.Models(), catalog) {
		t.Errorf("priced models %v, catalog %v", p.Models(), catalog)
	}
	if got := p.USDPerHour("T4"); got != 0.35 {
		t.Errorf("T4 = %v USD/h, want 0.35 (GCP)", got)
	}
	if got := p.USDPerHour("Ascend910B"); got != 0 {
		t.Errorf("unpriced model = %v USD/h, want 0", got)
	}
}

func TestReadPrices(t *testing.T) {
	c := Default()
	err := c.ReadPrices("prices.txt", strings.NewReader("# per GPU-hour\nT4 0.50\nH100-80GB, 2.99\nAscend910B 4.10 # new model\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"T4": 0.50, "H100-80GB": 2.99, "Ascend910B": 4.10, "P100": 1.46} {
		if got := c.USDPerHour(name); got != want {
			t.Errorf("price %s = %v, want %v", name, got, want)
		}
	}
	if p, _ := c.Get("T4"); p.Source != "prices.txt line 2" {
		t.Errorf("source = %q", p.Source)
	}
	// The defaults are not changed by an override of a copy.
	if p := Default().USDPerHour("T4"); p != 0.35 {
		t.Errorf("default T4 price changed to %v", p)
	}
	// The zero value reads a file too.
	var z Prices
	if err := z.ReadPrices("p.txt", strings.NewReader("X 1\n")); err != nil || z.USDPerHour("X") != 1 {
		t.Errorf("zero Prices: %v, %v", err, z.USDPerHour("X"))
	}
	for _, bad := range []string{"T4\n", "T4 -1\n", "T4 NaN\n", "T4 1 2\n", "T4 abc\n"} {
		if err := Default().ReadPrices("p.txt", strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "p.txt:1:") {
			t.Errorf("ReadPrices(%q) = %v, want an error at p.txt:1", bad, err)
		}
	}
}

// A model name may hold spaces (the node agent keeps an unknown product
// name, "NVIDIA B200", as the model): plain, quoted, or as a YAML key, as
// a YAML parser reads it (findings 10). Bad lines are errors naming the
// line and what is wrong (findings 11, 14).
func TestReadPricesNames(t *testing.T) {
	const file = "NVIDIA B200 5\n\"NVIDIA GB200\" 6.5\n'Tesla V100-SXM2-16GB': 2 # quoted\nNVIDIA  H20: 1.5\nL4, 0.6\n"
	p := Default()
	if err := p.ReadPrices("p.txt", strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	for m, want := range map[string]float64{"NVIDIA B200": 5, "NVIDIA GB200": 6.5, "Tesla V100-SXM2-16GB": 2, "NVIDIA H20": 1.5, "L4": 0.6} {
		if got := p.USDPerHour(m); got != want {
			t.Errorf("%s: %v USD/h, want %v", m, got, want)
		}
	}
	// The YAML lines read as YAML reads them.
	const yml = "NVIDIA B200: 5\n\"NVIDIA GB200\": 6.5\n"
	var want map[string]float64
	if err := yaml.Unmarshal([]byte(yml), &want); err != nil || want["NVIDIA B200"] != 5 || want["NVIDIA GB200"] != 6.5 {
		t.Fatalf("yaml: %v %v", want, err)
	}
	for _, c := range []struct{ in, want string }{
		{"T4\n", `p.txt:1: want "MODEL USD_PER_GPU_HOUR", got only "T4"`},
		{"T4 1 2\n", `p.txt:1: want "MODEL USD_PER_GPU_HOUR", got 3 fields (quote a model name with spaces`},
		{"A:B 3\n", `p.txt:1: want "MODEL USD_PER_GPU_HOUR", got 3 fields`},
		{"'NVIDIA B200 5\n", "p.txt:1: model 'NVIDIA B200 5: no closing quote"},
		{"\"NVIDIA B200\" 5 6\n", `p.txt:1: want "MODEL USD_PER_GPU_HOUR", got 3 fields`},
		{"T4 1\nL4 2\nt4 3\n", `p.txt:3: model "t4" is priced on line 1 too`},
		{"NVIDIA B200 1\nNVIDIA B200: 2\n", `p.txt:2: model "NVIDIA B200" is priced on line 1 too`},
		{"T4 99999999999999\n", "p.txt:1: price 99999999999999 USD per GPU-hour is above 1000000"},
		{"T4 1e400\n", "p.txt:1: price 1e400 USD per GPU-hour is above 1000000"},
		// cost/alloc counts micro-USD: 1e-7 USD/h would cost 0.
		{"T4 0.0000001\n", "p.txt:1: price 0.0000001 USD per GPU-hour is below 0.000001, the smallest counted (0 for free)"},
		{"T4 -1\n", `p.txt:1: price "-1" is not a non-negative number`},
		// A YAML list, not a mapping: before, a model "- H100-80GB".
		{"- H100-80GB: 3\n", `p.txt:1: a YAML list item: want lines "MODEL: USD_PER_GPU_HOUR", a mapping, without "- "`},
		{"T4: 1\n-\n", `p.txt:2: a YAML list item`},
		{"T4: \"x\"\n", `p.txt:1: price "x" is not a non-negative number`},
	} {
		err := Default().ReadPrices("p.txt", strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	// A quoted price is a YAML string holding the number: 3 and 2.5, as
	// the file says. Before, "\"3\"" was refused.
	p = Default()
	if err := p.ReadPrices("p.txt", strings.NewReader("H100-80GB: \"3\"\n'L4': '2.5'\n")); err != nil || p.USDPerHour("H100-80GB") != 3 || p.USDPerHour("L4") != 2.5 {
		t.Errorf("quoted prices: %v, H100-80GB %v, L4 %v; want 3, 2.5", err, p.USDPerHour("H100-80GB"), p.USDPerHour("L4"))
	}
	// The smallest counted price and 0 are prices.
	if err := Default().ReadPrices("p.txt", strings.NewReader("T4 0.000001\nL4 0\n")); err != nil {
		t.Error(err)
	}
}

func TestWarnings(t *testing.T) {
	p := Default()
	if err := p.ReadPrices("prices.txt", strings.NewReader("A100-80G 3.5\nT4 0\nMYGPU 1\n")); err != nil {
		t.Fatal(err)
	}
	// The cluster: T4 (priced 0), MYGPU (priced by the file), NEW (no
	// price), "" (no GPUs) and T4 again.
	got := p.Warnings([]string{"T4", "MYGPU", "NEW", "", "T4"}, "prices.txt")
	want := []string{
		`no price for GPU model "T4"; its GPUs cost 0 (give one with --prices)`,
		`no price for GPU model "NEW"; its GPUs cost 0 (give one with --prices)`,
		`prices.txt prices GPU model "A100-80G", which neither the catalog nor the cluster has`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
	if w := Default().Warnings([]string{"T4", "V100M16"}, ""); len(w) != 0 {
		t.Errorf("default prices on catalog models: %q", w)
	}
}

func FuzzReadPrices(f *testing.F) {
	f.Add([]byte("T4 0.35\nH100-80GB 11.06\n"))
	f.Add([]byte("# c\nX,1e3\n"))
	f.Add([]byte("'NVIDIA B200': 5\nNVIDIA H20 1\n\"x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if err := c.ReadPrices("fuzz", strings.NewReader(string(data))); err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, n := range c.Models() {
			if p := c.USDPerHour(n); p < 0 || p != p {
				t.Fatalf("accepted price %v for %s", p, n)
			}
		}
	})
}

// TestPricesIgnoreCase: the simulator matches GPU model names without regard
// to case, so prices do too. A node list writing "t4" is priced at the
// default T4 price, 0.35 USD per GPU-hour, without a "no price" warning (it
// warned that its GPUs cost 0, though they were priced); a prices line
// "t4 0.5" overrides the catalog's T4 (it was added as another model,
// ignored, and warned about as unknown); "mygpu 1" prices a cluster's
// "MYGPU" without a warning.
func TestPricesIgnoreCase(t *testing.T) {
	p := Default()
	if got := p.USDPerHour("t4"); got != 0.35 {
		t.Errorf("t4: %v USD/h, want 0.35", got)
	}
	if w := p.Warnings([]string{"t4", "v100m16"}, ""); len(w) != 0 {
		t.Errorf("lower-case catalog models: %q", w)
	}
	if err := p.ReadPrices("prices.txt", strings.NewReader("t4 0.5\nmygpu 1\n")); err != nil {
		t.Fatal(err)
	}
	if got := p.USDPerHour("T4"); got != 0.5 {
		t.Errorf("T4 after \"t4 0.5\": %v USD/h, want 0.5", got)
	}
	if got := p.USDPerHour("MyGPU"); got != 1 {
		t.Errorf("MyGPU: %v USD/h, want 1", got)
	}
	if w := p.Warnings([]string{"T4", "MYGPU"}, "prices.txt"); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
	if got := len(p.Models()); got != len(defaults)+1 {
		t.Errorf("%d models, want the %d defaults and mygpu", got, len(defaults))
	}
}

// TestPartitionUSDPerHour: a partition costs its share of the device. The
// MI300X's default 6.00 USD per hour over CPX's 8 GPUs is 0.75, over
// QPX's 4 1.50; an MI250X's GCD half of 3.93, 1.965; an H100-80GB its
// price; a mode the model lacks 0.
func TestPartitionUSDPerHour(t *testing.T) {
	p := Default()
	for _, tc := range []struct {
		model, mode string
		want        float64
	}{{"MI300X", "CPX/NPS1", 0.75}, {"MI300X", "QPX/NPS4", 1.50}, {"MI300X", "", 6.00}, {"MI250X", "", 1.965}, {"H100-80GB", "", 11.06}, {"H100-80GB", "CPX", 0}} {
		part, err := gpu.ParsePartition(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.PartitionUSDPerHour(tc.model, part); got != tc.want {
			t.Errorf("%s %s: %v USD/h, want %v", tc.model, tc.mode, got, tc.want)
		}
	}
}
