// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "strings"

// FromLabel returns the catalog model of a GPU product label as NVIDIA's
// gpu-feature-discovery publishes it in nvidia.com/gpu.product: the NVML
// device name with each space made '-' ("NVIDIA-A100-SXM4-80GB",
// "NVIDIA-H100-80GB-HBM3", "Tesla-T4", "NVIDIA-L4"), "-SHARED" appended
// when time-slicing shares the GPU under its own resource name
// (github.com/NVIDIA/k8s-device-plugin, internal/lm/resource.go,
// productLabel), or AMD's node labeller in amd.com/gpu.product-name: the
// amdgpu driver's product name with '_' for ' ' ("AMD_Instinct_MI300X";
// ROCm/k8s-device-plugin, cmd/k8s-node-labeller/main.go). Only a label
// that begins with NVIDIA-, Tesla- or AMD_ (case aside) is read; a MIG
// device's label (MODEL-MIG-PROFILE), a product the catalog lacks and
// any other name give false.
func FromLabel(label string) (Model, bool) {
	u := strings.ToUpper(label)
	if strings.HasPrefix(u, "AMD_") {
		m, ok := Lookup(ModelOfProduct(label))
		return m, ok && m.Vendor == AMD
	}
	if !strings.HasPrefix(u, "NVIDIA-") && !strings.HasPrefix(u, "TESLA-") || IsMIGLabel(label) {
		return Model{}, false
	}
	if strings.HasSuffix(u, "-SHARED") {
		label = label[:len(label)-len("-SHARED")]
	}
	return Lookup(ModelOfProduct(label))
}

// IsMIGLabel reports whether a product label names a MIG device, as
// gpu-feature-discovery labels one: the GPU's label, "-MIG-" and the
// profile ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb").
func IsMIGLabel(label string) bool {
	return strings.Contains(strings.ToUpper(label), "-MIG-")
}

// about says what each catalog name stands for where the name alone does
// not: the codes of the Alibaba openb trace's node list (clusterdata
// cluster-trace-gpu-v2023), as this catalog reads them (memory above; G2
// and G3 are not disclosed, and internal/cost/prices prices them as a
// V100 by assumption).
var about = map[string]string{
	"P100":    "NVIDIA Tesla P100 16 GB (openb code)",
	"T4":      "NVIDIA T4 16 GB",
	"V100M16": "NVIDIA V100 16 GB (openb code)",
	"V100M32": "NVIDIA V100 32 GB (openb code)",
	"A10":     "NVIDIA A10 24 GB",
	"G2":      "undisclosed openb model, memory unknown, priced as a V100",
	"G3":      "undisclosed openb model, memory unknown, priced as a V100",
	"MI250X":  "AMD Instinct MI250X 128 GB (two GCDs of 64 GB)",
	"MI300X":  "AMD Instinct MI300X 192 GB",
	"MI325X":  "AMD Instinct MI325X 256 GB",
	"MI355X":  "AMD Instinct MI355X 288 GB",
	"Gaudi2":  "Intel Gaudi 2 96 GB",
	"Gaudi3":  "Intel Gaudi 3 128 GB",
}

// About says what a catalog model is: for an openb code, the GPU it stands
// for ("V100M16": "NVIDIA V100 16 GB (openb code)"); for an AMD or Intel
// model, its maker's name for it ("MI300X": "AMD Instinct MI300X 192
// GB"); for another catalog model, "NVIDIA " and its name; "" for a name
// the catalog lacks.
func About(name string) string {
	m, ok := Lookup(name)
	if !ok {
		return ""
	}
	if a, ok := about[m.Name]; ok {
		return a
	}
	return "NVIDIA " + m.Name
}
