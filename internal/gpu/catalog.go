// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package gpu is gpuplane's accelerator model catalog: the models gpuplane
// knows, of three vendors (Vendor: NVIDIA GPUs, AMD Instinct GPUs, Intel
// Gaudi accelerators), and their hardware facts (memory, compute units,
// partition scheme, architecture, compute capability, product names).
// Prices are internal/cost/prices's.
//
// Model names are the short names used by the Alibaba openb trace (P100, T4,
// V100M16, V100M32, A10, G2, G3) and by NVIDIA's data-centre line (A100-40GB,
// A100-80GB, H100-80GB, H200-141GB, L4, L40S, and the other GPUs NVIDIA's
// MIG user guide lists as MIG-capable: H100-NVL (94 GB), H20 (96 GB),
// GH200 (the H100 of a GH200 Grace Hopper superchip, 96 GB), B200 (180 GB)),
// AMD's Instinct names (MI250X, MI300X, MI325X, MI355X) and Intel's
// (Gaudi2, Gaudi3).
package gpu

import (
	"sort"
	"strings"
)

// Model describes one accelerator model: one physical device (an AMD
// MI250X is one model of two GCDs, an MI300X one of eight XCDs; Partitions
// says how many schedulable GPUs a device is).
type Model struct {
	// Name is the catalog name, e.g. "A100-80GB", "V100M16" or "MI300X".
	Name string
	// Vendor is the model's maker; NVIDIA (the zero value) for every model
	// of NVIDIA's.
	Vendor Vendor
	// ComputeUnits is the device's compute units as its vendor counts
	// them, where gpuplane reads them: AMD's compute units (CUs), Intel
	// Gaudi's tensor processor cores (TPCs); 0 for NVIDIA's models (their
	// SMs are sm.go's, by product).
	ComputeUnits int
	// MemoryMiB is the frame-buffer (HBM) size of one device in MiB as the
	// vendor's data sheet gives it (GB × 1024); 0 when undisclosed.
	MemoryMiB int64
	// MIGCapable reports whether the model supports Multi-Instance GPU.
	MIGCapable bool
	// Family is the architecture family as gpu-feature-discovery names it
	// (pascal, volta, turing, ampere, ada-lovelace, hopper); empty when
	// undisclosed.
	Family string
	// ComputeMajor and ComputeMinor are the CUDA compute capability.
	ComputeMajor, ComputeMinor int
	// ProductNames are substrings of product names that identify this
	// model, matched case-insensitively: NVML's (nvmlDeviceGetName) for
	// NVIDIA, the amdgpu driver's product_name for AMD ("AMD Instinct
	// MI300X"), Intel's for Gaudi ("HL-325" is a Gaudi 3 OAM).
	ProductNames []string
	// PCIDeviceIDs are the PCI device IDs of the model's boards, as
	// mig-parted's device-filter writes them (device << 16 | vendor
	// 0x10DE: 0x20B210DE). Sources: the PCI ID database (pci.ids, vendor
	// 10de, as vendored in github.com/NVIDIA/go-nvlib pkg/pciids) and the
	// device-filters of the GPU Operator's default mig-parted config
	// (github.com/NVIDIA/mig-parted, examples, and gpu-operator's
	// default-mig-parted-config); a filter naming a board of another model
	// (an A800, H800) is counted with the model of the same MIG profiles.
	PCIDeviceIDs []uint32
}

var catalog = []Model{
	{Name: "P100", MemoryMiB: 16 * 1024, Family: "pascal", ComputeMajor: 6, ComputeMinor: 0, ProductNames: []string{"P100"}},
	{Name: "T4", MemoryMiB: 16 * 1024, Family: "turing", ComputeMajor: 7, ComputeMinor: 5, ProductNames: []string{"T4"}},
	{Name: "V100M16", MemoryMiB: 16 * 1024, Family: "volta", ComputeMajor: 7, ComputeMinor: 0, ProductNames: []string{"V100-SXM2-16GB", "V100-PCIE-16GB", "V100-16GB"}},
	{Name: "V100M32", MemoryMiB: 32 * 1024, Family: "volta", ComputeMajor: 7, ComputeMinor: 0, ProductNames: []string{"V100-SXM2-32GB", "V100-PCIE-32GB", "V100-32GB", "V100S"}},
	{Name: "A10", MemoryMiB: 24 * 1024, Family: "ampere", ComputeMajor: 8, ComputeMinor: 6, ProductNames: []string{"A10G", "A10 "}},
	{Name: "G2"},
	{Name: "G3"},
	// A100 SXM4 40GB, PCIe 40GB (2 IDs), A800 40GB PCIe.
	{Name: "A100-40GB", MemoryMiB: 40 * 1024, MIGCapable: true, Family: "ampere", ComputeMajor: 8, ComputeMinor: 0, ProductNames: []string{"A100-SXM4-40GB", "A100-PCIE-40GB", "A100 40GB"},
		PCIDeviceIDs: []uint32{0x20B010DE, 0x20B110DE, 0x20F110DE, 0x20F610DE}},
	// A100 SXM4 80GB, PCIe 80GB, A800 SXM4 80GB, A800 80GB PCIe.
	{Name: "A100-80GB", MemoryMiB: 80 * 1024, MIGCapable: true, Family: "ampere", ComputeMajor: 8, ComputeMinor: 0, ProductNames: []string{"A100-SXM4-80GB", "A100-PCIE-80GB", "A100 80GB"},
		PCIDeviceIDs: []uint32{0x20B210DE, 0x20B510DE, 0x20F310DE, 0x20F510DE}},
	// H100 SXM5 80GB, PCIe 80GB, H800 PCIe, H800.
	{Name: "H100-80GB", MemoryMiB: 80 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H100"},
		PCIDeviceIDs: []uint32{0x233010DE, 0x233110DE, 0x232210DE, 0x232410DE}},
	// H200 SXM 141GB, H200 NVL.
	{Name: "H200-141GB", MemoryMiB: 141 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H200"},
		PCIDeviceIDs: []uint32{0x233510DE, 0x233B10DE}},
	// "L4 " so that an L40 (48 GB, not catalogued) is not taken for it.
	{Name: "L4", MemoryMiB: 24 * 1024, Family: "ada-lovelace", ComputeMajor: 8, ComputeMinor: 9, ProductNames: []string{"L4 "}},
	{Name: "L40S", MemoryMiB: 48 * 1024, Family: "ada-lovelace", ComputeMajor: 8, ComputeMinor: 9, ProductNames: []string{"L40S"}},
	// H100 NVL (pci.ids "H100L 94GB"), H800 NVL: 94 GB (NVML reports
	// 95830 MiB usable).
	{Name: "H100-NVL", MemoryMiB: 94 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H100 NVL", "H100L", "H800 NVL"},
		PCIDeviceIDs: []uint32{0x232110DE, 0x233A10DE}},
	// H20 (NVML "NVIDIA H20"; "H20 " so that H200 is not taken for it):
	// 96 GB.
	{Name: "H20", MemoryMiB: 96 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"H20 ", "H20-", "H20 HBM3e"},
		PCIDeviceIDs: []uint32{0x232910DE}},
	// The H100 of a GH200 Grace Hopper superchip, 96 GB HBM3 (NVML
	// "NVIDIA GH200 480GB"); the MIG user guide's "H100 on GH200". The
	// 144 GB HBM3e GH200 (0x2348) has other profiles and is not
	// catalogued.
	{Name: "GH200", MemoryMiB: 96 * 1024, MIGCapable: true, Family: "hopper", ComputeMajor: 9, ComputeMinor: 0, ProductNames: []string{"GH200"},
		PCIDeviceIDs: []uint32{0x234210DE}},
	// B200 SXM (HGX/DGX B200), 180 GB HBM3e (NVML "NVIDIA B200"; go-nvml's
	// mock "NVIDIA B200 180GB HBM3e", 184320 MiB; " B200" so that a GB200
	// is not taken for it). PCI IDs: 0x2901 (the GPU Operator's default
	// mig-parted config, "# B200"), 0x2B00 (go-nvml's mock, pkg/nvml/mock/
	// gpus/b200.go); the vendored pci.ids predates both.
	{Name: "B200", MemoryMiB: 180 * 1024, MIGCapable: true, Family: "blackwell", ComputeMajor: 10, ComputeMinor: 0, ProductNames: []string{" B200"},
		PCIDeviceIDs: []uint32{0x290110DE, 0x2B0010DE}},
	// AMD Instinct (CDNA 2, 3, 4). Memory and CUs: AMD's data sheets,
	// www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html
	// (192 GB HBM3, 304 CUs), .../mi300/mi325x.html (256 GB HBM3E, 304
	// CUs), .../mi350/mi355x.html (288 GB HBM3E, 256 CUs),
	// .../mi200/mi250x.html (128 GB HBM2e, 220 CUs on two GCDs). Product
	// names as the amdgpu driver's product_name gives them, which AMD's
	// node labeller writes in amd.com/gpu.product-name with '_' for ' '
	// (ROCm/k8s-device-plugin, cmd/k8s-node-labeller/main.go).
	{Name: "MI250X", Vendor: AMD, ComputeUnits: 220, MemoryMiB: 128 * 1024, Family: "cdna2", ProductNames: []string{"MI250X"}},
	{Name: "MI300X", Vendor: AMD, ComputeUnits: 304, MemoryMiB: 192 * 1024, Family: "cdna3", ProductNames: []string{"MI300X"}},
	{Name: "MI325X", Vendor: AMD, ComputeUnits: 304, MemoryMiB: 256 * 1024, Family: "cdna3", ProductNames: []string{"MI325X"}},
	{Name: "MI355X", Vendor: AMD, ComputeUnits: 256, MemoryMiB: 288 * 1024, Family: "cdna4", ProductNames: []string{"MI355X"}},
	// Intel Gaudi: Gaudi 2 (96 GB HBM2E, 24 TPCs and 2 MMEs; Intel Gaudi 2
	// AI accelerator white paper, habana.ai), Gaudi 3 (128 GB HBM2e, 64
	// TPCs and 8 MMEs; Intel Gaudi 3 AI Accelerator White Paper,
	// intel.com). HL-225 and HL-325 are their OAM boards.
	{Name: "Gaudi2", Vendor: Intel, ComputeUnits: 24, MemoryMiB: 96 * 1024, Family: "gaudi2", ProductNames: []string{"Gaudi2", "Gaudi 2", "HL-225"}},
	{Name: "Gaudi3", Vendor: Intel, ComputeUnits: 64, MemoryMiB: 128 * 1024, Family: "gaudi3", ProductNames: []string{"Gaudi3", "Gaudi 3", "HL-325"}},
	// Not catalogued yet: GB200, the 144 GB GH200, A30, RTX PRO 6000
	// Blackwell (the cost example, examples/cost/day.om, uses "NVIDIA RTX
	// PRO 6000 Blackwell" as its GPU outside the catalog).
}

// ModelOfPCIDeviceID returns the catalog model of a PCI device ID as
// mig-parted's device-filter gives it (0x20B210DE), false for an ID the
// catalog lacks.
func ModelOfPCIDeviceID(id uint32) (Model, bool) {
	for _, m := range catalog {
		for _, x := range m.PCIDeviceIDs {
			if x == id {
				return m, true
			}
		}
	}
	return Model{}, false
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
	m, n := c.fromProductName(product)
	return m, n > 0
}

// fromProductName is FromProductName with the length of the match.
func (c *Catalog) fromProductName(product string) (Model, int) {
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
	return best, bestLen
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
	// The longest match over both spellings: "NVIDIA-H100-NVL" is the
	// H100-NVL ("H100 NVL" with '-' read as ' '), not the H100-80GB
	// ("H100").
	best, n := "", 0
	for _, p := range []string{product, strings.ReplaceAll(product, "-", " ")} {
		if m, l := c.fromProductName(p); l > n {
			best, n = m.Name, l
		}
	}
	if n > 0 {
		return best
	}
	return product
}

// builtin is the built-in catalog for ModelOfProduct; read only.
var builtin = Default()
