// Package gpu is gpuplane's GPU model catalog: the models gpuplane knows and
// their hardware facts (memory, MIG capability, architecture, compute
// capability, NVML product names). Prices are internal/cost/prices's.
//
// Model names are the short names used by the Alibaba openb trace (P100, T4,
// V100M16, V100M32, A10, G2, G3) and by NVIDIA's data-centre line (A100-40GB,
// A100-80GB, H100-80GB, H200-141GB, L4, L40S).
package gpu

import (
	"sort"
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

var catalog = []Model{
	{Name: "P100", MemoryMiB: 16 * 1024, Family: "pascal", ComputeMajor: 6, ComputeMinor: 0, ProductNames: []string{"P100"}},
	{Name: "T4", MemoryMiB: 16 * 1024, Family: "turing", ComputeMajor: 7, ComputeMinor: 5, ProductNames: []string{"T4"}},
	{Name: "V100M16", MemoryMiB: 16 * 1024, Family: "volta", ComputeMajor: 7, ComputeMinor: 0, ProductNames: []string{"V100-SXM2-16GB", "V100-PCIE-16GB", "V100-16GB"}},
	{Name: "V100M32", MemoryMiB: 32 * 1024, Family: "volta", ComputeMajor: 7, ComputeMinor: 0, ProductNames: []string{"V100-SXM2-32GB", "V100-PCIE-32GB", "V100-32GB", "V100S"}},
	{Name: "A10", MemoryMiB: 24 * 1024, Family: "ampere", ComputeMajor: 8, ComputeMinor: 6, ProductNames: []string{"A10G", "A10 "}},
	{Name: "G2"},
	{Name: "G3"},
	{Name: "A100-40GB", MemoryMiB: 40 * 1024, MIGCapable: true, Family: "ampere", ComputeMajor: 8, ComputeMinor: 0, ProductNames: []string{"A100-SXM4-40GB", "A100-PCIE-40GB", "A100 40GB"}},
	{Name: "A100-80GB", MemoryMiB: 80 * 1024, MIGCapable: true, Family: "ampere", ComputeMajor: 8, ComputeMinor: 0, ProductNames: []string{"A100-SXM4-80GB", "A100-PCIE-80GB", "A100 80GB"}},
	{Name: "H100-80GB", MemoryMiB: 80 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H100"}},
	{Name: "H200-141GB", MemoryMiB: 141 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H200"}},
	{Name: "L4", MemoryMiB: 24 * 1024, Family: "ada-lovelace", ComputeMajor: 8, ComputeMinor: 9, ProductNames: []string{"L4"}},
	{Name: "L40S", MemoryMiB: 48 * 1024, Family: "ada-lovelace", ComputeMajor: 8, ComputeMinor: 9, ProductNames: []string{"L40S"}},
}

// Catalog is a set of GPU models keyed by name. The zero value is empty; use
// Default for the built-in catalog.
type Catalog struct {
	byName map[string]Model
}

// Default returns a fresh copy of the built-in catalog.
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

// ModelOfProduct returns the catalog model of a node's gpu-feature-discovery
// product label (nvidia.com/gpu.product): a catalog name ("V100M16", as the
// openb node lists and gpuplane's kwok nodes write it) or an NVML product
// name ("NVIDIA-A100-SXM4-80GB", matched with '-' read as ' ' too). A
// product the catalog lacks is its own model.
func ModelOfProduct(product string) string {
	c := builtin
	if m, ok := c.Get(product); ok {
		return m.Name
	}
	if m, ok := c.FromProductName(product); ok {
		return m.Name
	}
	if m, ok := c.FromProductName(strings.ReplaceAll(product, "-", " ")); ok {
		return m.Name
	}
	return product
}

// builtin is the built-in catalog for ModelOfProduct; read only.
var builtin = Default()
