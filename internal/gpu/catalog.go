// Package gpu is gpuplane's GPU model catalog: the models gpuplane knows,
// their memory, MIG capability and default price.
//
// Model names are the short names used by the Alibaba openb trace (P100, T4,
// V100M16, V100M32, A10, G2, G3) and by NVIDIA's data-centre line (A100-40GB,
// A100-80GB, H100-80GB, H200-141GB, L4, L40S).
package gpu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Model describes one GPU model.
type Model struct {
	// Name is the catalog name, e.g. "A100-80GB" or "V100M16".
	Name string
	// MemoryMiB is the frame-buffer size in MiB as the vendor's data sheet
	// gives it (GB × 1024); 0 when undisclosed.
	MemoryMiB int64
	// MIGCapable reports whether the model supports Multi-Instance GPU.
	MIGCapable bool
	// PriceUSDPerHour is the default on-demand price of one GPU, in USD per
	// GPU-hour. See the Source field for where it comes from.
	PriceUSDPerHour float64
	// PriceSource names where the default price comes from.
	PriceSource string
	// Family is the architecture family as gpu-feature-discovery names it
	// (pascal, volta, turing, ampere, ada-lovelace, hopper); empty when
	// undisclosed.
	Family string
	// ComputeMajor and ComputeMinor are the CUDA compute capability.
	ComputeMajor, ComputeMinor int
	// ProductNames are substrings of NVML product names (nvmlDeviceGetName)
	// that identify this model, matched case-insensitively.
	ProductNames []string
}

// Price sources. On-demand list prices of single-GPU (or per-GPU share of
// multi-GPU) cloud instances as the providers' public pricing pages gave them
// in 2025, rounded; cloud prices change often. They are defaults for
// comparing policies, not quotes: override them with a prices file (see
// LoadPrices, gpuplane simulate --prices) for real budgets.
const (
	srcGCP     = "Google Cloud Compute Engine GPU pricing, us-central1 on-demand, per GPU, 2025"
	srcAWSg5   = "AWS EC2 g5.xlarge on-demand (1x A10G), us-east-1, 2025"
	srcAWSg6e  = "AWS EC2 g6e.xlarge on-demand (1x L40S), us-east-1, 2025"
	srcAWSp3dn = "AWS EC2 p3dn.24xlarge on-demand (8x V100 32GB) / 8, us-east-1, 2025"
	srcAWSp5e  = "AWS EC2 p5e.48xlarge on-demand (8x H200) / 8, us-east-1, 2025"
	srcOpaque  = "undisclosed model in the Alibaba openb trace; priced as a V100 (GCP) by assumption"
)

var catalog = []Model{
	{Name: "P100", MemoryMiB: 16 * 1024, PriceUSDPerHour: 1.46, PriceSource: srcGCP, Family: "pascal", ComputeMajor: 6, ComputeMinor: 0, ProductNames: []string{"P100"}},
	{Name: "T4", MemoryMiB: 16 * 1024, PriceUSDPerHour: 0.35, PriceSource: srcGCP, Family: "turing", ComputeMajor: 7, ComputeMinor: 5, ProductNames: []string{"T4"}},
	{Name: "V100M16", MemoryMiB: 16 * 1024, PriceUSDPerHour: 2.48, PriceSource: srcGCP, Family: "volta", ComputeMajor: 7, ComputeMinor: 0, ProductNames: []string{"V100-SXM2-16GB", "V100-PCIE-16GB", "V100-16GB"}},
	{Name: "V100M32", MemoryMiB: 32 * 1024, PriceUSDPerHour: 3.90, PriceSource: srcAWSp3dn, Family: "volta", ComputeMajor: 7, ComputeMinor: 0, ProductNames: []string{"V100-SXM2-32GB", "V100-PCIE-32GB", "V100-32GB", "V100S"}},
	{Name: "A10", MemoryMiB: 24 * 1024, PriceUSDPerHour: 1.006, PriceSource: srcAWSg5, Family: "ampere", ComputeMajor: 8, ComputeMinor: 6, ProductNames: []string{"A10G", "A10 "}},
	{Name: "G2", PriceUSDPerHour: 2.48, PriceSource: srcOpaque},
	{Name: "G3", PriceUSDPerHour: 2.48, PriceSource: srcOpaque},
	{Name: "A100-40GB", MemoryMiB: 40 * 1024, MIGCapable: true, PriceUSDPerHour: 2.93, PriceSource: srcGCP, Family: "ampere", ComputeMajor: 8, ComputeMinor: 0, ProductNames: []string{"A100-SXM4-40GB", "A100-PCIE-40GB", "A100 40GB"}},
	{Name: "A100-80GB", MemoryMiB: 80 * 1024, MIGCapable: true, PriceUSDPerHour: 3.93, PriceSource: srcGCP, Family: "ampere", ComputeMajor: 8, ComputeMinor: 0, ProductNames: []string{"A100-SXM4-80GB", "A100-PCIE-80GB", "A100 80GB"}},
	{Name: "H100-80GB", MemoryMiB: 80 * 1024, MIGCapable: true, PriceUSDPerHour: 11.06, PriceSource: srcGCP, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H100"}},
	{Name: "H200-141GB", MemoryMiB: 141 * 1024, MIGCapable: true, PriceUSDPerHour: 10.76, PriceSource: srcAWSp5e, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H200"}},
	{Name: "L4", MemoryMiB: 24 * 1024, PriceUSDPerHour: 0.56, PriceSource: srcGCP, Family: "ada-lovelace", ComputeMajor: 8, ComputeMinor: 9, ProductNames: []string{"L4"}},
	{Name: "L40S", MemoryMiB: 48 * 1024, PriceUSDPerHour: 1.861, PriceSource: srcAWSg6e, Family: "ada-lovelace", ComputeMajor: 8, ComputeMinor: 9, ProductNames: []string{"L40S"}},
}

// Catalog is a set of GPU models keyed by name. The zero value is empty; use
// Default for the built-in catalog.
type Catalog struct {
	byName map[string]Model
}

// Default returns a fresh copy of the built-in catalog; callers may change
// its prices without affecting other copies.
func Default() *Catalog {
	c := &Catalog{byName: make(map[string]Model, len(catalog))}
	for _, m := range catalog {
		c.byName[m.Name] = m
	}
	return c
}

// Get returns the model called name (exact, case-sensitive catalog name).
func (c *Catalog) Get(name string) (Model, bool) {
	m, ok := c.byName[name]
	return m, ok
}

// Names returns the catalog's model names, sorted.
func (c *Catalog) Names() []string {
	out := make([]string, 0, len(c.byName))
	for n := range c.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Price returns the price of one GPU of the named model in USD per GPU-hour,
// or 0 and false when the model is not in the catalog.
func (c *Catalog) Price(name string) (float64, bool) {
	m, ok := c.byName[name]
	return m.PriceUSDPerHour, ok
}

// FromProductName maps an NVML product name (for example
// "NVIDIA H100 80GB HBM3" or "Tesla V100-SXM2-16GB") to a catalog model. The
// longest matching ProductNames entry wins, so "L40S" is not taken for "L4".
func (c *Catalog) FromProductName(product string) (Model, bool) {
	p := strings.ToUpper(product) + " "
	var best Model
	bestLen := 0
	for _, m := range c.byName {
		for _, s := range m.ProductNames {
			if len(s) > bestLen && strings.Contains(p, strings.ToUpper(s)) {
				best, bestLen = m, len(s)
			}
		}
	}
	return best, bestLen > 0
}

// LoadPrices overrides prices from a file of lines "MODEL USD_PER_GPU_HOUR"
// (whitespace- or comma-separated; '#' starts a comment). A model not yet in
// the catalog is added as an opaque model with only a price. Errors name the
// file and line.
func (c *Catalog) LoadPrices(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.ReadPrices(path, f)
}

// ReadPrices is LoadPrices on a reader; name is used in errors.
func (c *Catalog) ReadPrices(name string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if line == 1 {
			s = strings.TrimPrefix(s, "\ufeff")
		}
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return fmt.Errorf("%s:%d: want \"MODEL USD_PER_GPU_HOUR\", got %d fields", name, line, len(fields))
		}
		p, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || p < 0 || p != p || p > 1e6 {
			return fmt.Errorf("%s:%d: price %q is not a non-negative number of USD per GPU-hour", name, line, fields[1])
		}
		m, ok := c.byName[fields[0]]
		if !ok {
			m = Model{Name: fields[0]}
		}
		m.PriceUSDPerHour = p
		m.PriceSource = fmt.Sprintf("%s line %d", name, line)
		c.byName[m.Name] = m
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
