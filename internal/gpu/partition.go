// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"strings"
)

// Scheme is how a model's device is split into schedulable GPUs.
type Scheme uint8

const (
	// SchemeWhole: a device is one GPU, shared at most by time-slicing
	// (NVIDIA GPUs without MIG, Intel Gaudi).
	SchemeWhole Scheme = iota
	// SchemeMIG: NVIDIA's Multi-Instance GPU, instances of the profiles
	// of mig.go on a MIG-enabled GPU.
	SchemeMIG
	// SchemeAMD: AMD Instinct compute and memory partitioning
	// (Partition), each partition a GPU of its own (AMD's device plugin
	// advertises one amd.com/gpu per partition).
	SchemeAMD
)

// String returns "whole", "mig" or "amd-partition".
func (s Scheme) String() string {
	switch s {
	case SchemeMIG:
		return "mig"
	case SchemeAMD:
		return "amd-partition"
	}
	return "whole"
}

// Scheme returns the model's partition scheme: MIG for a MIG-capable
// model, AMD's for an Instinct model, whole devices otherwise.
func (m Model) Scheme() Scheme {
	switch {
	case m.MIGCapable:
		return SchemeMIG
	case m.Vendor == AMD:
		return SchemeAMD
	}
	return SchemeWhole
}

// Partition is an AMD Instinct GPU's partition mode: its compute
// partitioning, SPX, DPX, QPX or CPX (the device's compute dies, XCDs,
// as 1, 2, 4 GPUs, or one GPU per XCD), and its memory partitioning,
// NPS1, NPS2 or NPS4 (its HBM as 1, 2 or 4 NUMA domains). The zero value
// is the device as it comes (SPX and NPS1). Source: AMD Instinct
// documentation, "AMD Instinct MI300X GPU Partitioning Overview"
// (instinct.docs.amd.com/projects/amdgpu-docs/en/latest/gpu-partitioning/
// mi300x/overview.html) and AMD SMI's "GPU partitioning"
// (rocm.docs.amd.com/projects/amdsmi/en/latest/conceptual/partition.html).
type Partition struct {
	// Compute is "SPX", "DPX", "QPX", "CPX" or "" (SPX).
	Compute string
	// Memory is "NPS1", "NPS2", "NPS4" or "" (NPS1).
	Memory string
}

// computeModes are the compute partitioning modes and the GPUs each makes
// of a device of 8 XCDs (CPX: one per XCD).
var computeModes = map[string]int{"SPX": 1, "DPX": 2, "QPX": 4, "CPX": 8}

// memoryModes are the memory partitioning modes and their NUMA domains.
var memoryModes = map[string]int{"NPS1": 1, "NPS2": 2, "NPS4": 4}

// String returns the mode as "CPX/NPS1", "" for the zero value.
func (p Partition) String() string {
	if p == (Partition{}) {
		return ""
	}
	return p.compute() + "/" + p.memory()
}

// Label returns the mode as AMD's node labeller writes it in
// amd.com/gpu.compute-memory-partition and AMD's device plugin names its
// resource under its mixed strategy (amd.com/cpx_nps1): compute and memory
// mode in lower case joined by '_' (ROCm/k8s-device-plugin,
// internal/pkg/amdgpu/amdgpu.go UniquePartitionConfigCount); "" for the
// zero value.
func (p Partition) Label() string {
	if p == (Partition{}) {
		return ""
	}
	return strings.ToLower(p.compute() + "_" + p.memory())
}

func (p Partition) compute() string {
	if p.Compute == "" {
		return "SPX"
	}
	return p.Compute
}

func (p Partition) memory() string {
	if p.Memory == "" {
		return "NPS1"
	}
	return p.Memory
}

// ParsePartition reads a partition mode: a compute mode, a memory mode or
// both, joined by '/', '_' or a space, case aside ("CPX/NPS1", "cpx_nps4",
// as AMD's node labeller writes it, "QPX"); the mode left out is SPX or
// NPS1. "" is the zero value. Errors name the word not understood.
func ParsePartition(s string) (Partition, error) {
	var p Partition
	f := strings.FieldsFunc(strings.ToUpper(s), func(r rune) bool { return r == '/' || r == '_' || r == ' ' })
	if len(f) > 2 {
		return p, fmt.Errorf("partition %q: want COMPUTE/MEMORY, e.g. CPX/NPS1", s)
	}
	for _, w := range f {
		_, c := computeModes[w]
		_, m := memoryModes[w]
		switch {
		case c && p.Compute == "":
			p.Compute = w
		case m && p.Memory == "":
			p.Memory = w
		default:
			return Partition{}, fmt.Errorf("partition %q: %q is not a compute mode (SPX, DPX, QPX, CPX) or memory mode (NPS1, NPS2, NPS4) given once", s, w)
		}
	}
	return p, nil
}

// amdLayout is what partitioning an AMD model can make of one device.
type amdLayout struct {
	// whole is the GPUs of the device as it comes: 1, or 2 for an
	// MI250X, whose two GCDs are two GPUs to ROCm and to AMD's device
	// plugin and which has no partition modes.
	whole int
	// xcds is the compute dies compute partitioning divides; 0 for a
	// model without partition modes.
	xcds int
	// memory are the model's memory partitioning modes.
	memory []string
}

// amdLayouts are the AMD models' partitioning. MI300X and MI325X: 8 XCDs
// of 38 CUs, SPX, DPX, QPX, CPX, and NPS1 or NPS4 (AMD's MI300X
// partitioning overview; the MI325X is the MI300X's CDNA 3 die with more
// HBM). MI355X: 8 XCDs of 32 CUs, NPS1 or NPS2 (AMD's MI350 series
// partitioning, instinct.docs.amd.com .../gpu-partitioning/mi355x).
// MI250X: two GCDs, no modes (AMD Instinct MI250X data sheet).
var amdLayouts = map[string]amdLayout{
	"MI250X": {whole: 2},
	"MI300X": {whole: 1, xcds: 8, memory: []string{"NPS1", "NPS4"}},
	"MI325X": {whole: 1, xcds: 8, memory: []string{"NPS1", "NPS4"}},
	"MI355X": {whole: 1, xcds: 8, memory: []string{"NPS1", "NPS2"}},
}

// Split is one device as schedulable GPUs under a partition mode.
type Split struct {
	// GPUs is the schedulable GPUs one device is.
	GPUs int
	// MemoryMiB and ComputeUnits are each GPU's share of the device's
	// memory (MiB) and compute units; 0 where the catalog has none.
	MemoryMiB    int64
	ComputeUnits int
}

// Partitions returns what one device of model is as schedulable GPUs in
// partition mode p (the one home of that rule):
//   - a model without partition modes (NVIDIA's, whose partitioning is
//     MIG; Intel Gaudi; a model the catalog lacks) in the zero mode: one
//     GPU, the whole device (an MI250X: its two GCDs);
//   - an AMD model of XCDs: as many GPUs as the compute mode makes (SPX 1,
//     DPX 2, QPX 4, CPX one per XCD), each with its share of the memory
//     and of the CUs. The memory mode must be the model's and its NUMA
//     domains must divide the GPUs (NPS4 needs QPX or CPX), as the amdgpu
//     driver checks a mode (Linux drivers/gpu/drm/amd/amdgpu/
//     aqua_vanjaram.c, __aqua_vanjaram_is_valid_mode) and AMD's DRA
//     driver lists the MI300X-class modes (ROCm/k8s-gpu-dra-driver, its
//     consts package, ValidPartitionConfigs: SPX, DPX, QPX, CPX with
//     NPS1; QPX and CPX with NPS4).
//
// A mode the model does not have is an error naming the model.
func Partitions(model string, p Partition) (Split, error) {
	m, _ := Lookup(model)
	l, ok := amdLayouts[m.Name]
	if !ok || l.xcds == 0 {
		if p != (Partition{}) {
			return Split{}, fmt.Errorf("model %s has no compute or memory partitioning (%s partitions AMD Instinct MI300X, MI325X and MI355X; NVIDIA's is MIG)", model, p)
		}
		n := max(l.whole, 1)
		return Split{GPUs: n, MemoryMiB: m.MemoryMiB / int64(n), ComputeUnits: m.ComputeUnits / n}, nil
	}
	c := computeModes[p.compute()] * l.xcds / 8
	mem := memoryModes[p.memory()]
	if !contains(l.memory, p.memory()) || c%mem != 0 {
		return Split{}, fmt.Errorf("model %s has no partition mode %s (memory modes %s; NPS2 needs DPX or more, NPS4 QPX or CPX)", model, p.compute()+"/"+p.memory(), strings.Join(l.memory, ", "))
	}
	return Split{GPUs: c, MemoryMiB: m.MemoryMiB / int64(c), ComputeUnits: m.ComputeUnits / c}, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
