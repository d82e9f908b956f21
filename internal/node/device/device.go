// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package device discovers a node's GPUs, watches their health and samples
// their telemetry, behind one small interface with two backends: nvml (real
// GPUs through NVIDIA's go-nvml) and mock (GPUs described by a profile file or
// a built-in profile name).
//
// Callers: internal/node/deviceplugin (resources, preferred allocation, health),
// internal/node/labels (feature labels) and internal/node/exporter (metrics).
package device

import (
	"context"
	"fmt"
	"time"
)

// LinkType is the interconnect between two GPUs, ordered from worst to best,
// as nvidia-smi topo -m names the levels.
type LinkType int

const (
	// LinkUnknown: nothing is known about the pair.
	LinkUnknown LinkType = iota
	// LinkCrossSocket (SYS): the path crosses the inter-socket link (QPI/UPI).
	LinkCrossSocket
	// LinkSameSocket (NODE): same NUMA node, across PCIe host bridges.
	LinkSameSocket
	// LinkHostBridge (PHB): through one PCIe host bridge (the CPU root port).
	LinkHostBridge
	// LinkMultiSwitch (PXB): through several PCIe switches, not the host
	// bridge.
	LinkMultiSwitch
	// LinkPCIeSwitch (PIX): through one PCIe switch.
	LinkPCIeSwitch
	// LinkNVLink (NV#): direct NVLink; Link.NVLinks gives the number of links.
	LinkNVLink
)

// String returns the nvidia-smi topo -m name of the level: SYS, NODE, PHB,
// PXB, PIX, NV (without the link count) or "?" for LinkUnknown.
func (t LinkType) String() string {
	switch t {
	case LinkCrossSocket:
		return "SYS"
	case LinkSameSocket:
		return "NODE"
	case LinkHostBridge:
		return "PHB"
	case LinkMultiSwitch:
		return "PXB"
	case LinkPCIeSwitch:
		return "PIX"
	case LinkNVLink:
		return "NV"
	}
	return "?"
}

// ParseLink parses one cell of nvidia-smi topo -m: "NV<n>" (n ≥ 1 NVLinks),
// "PIX" (one PCIe switch), "PXB" (several), "PHB", "NODE" or "SYS". It returns an error
// naming the cell for anything else, including the diagonal "X".
func ParseLink(cell string) (Link, error) {
	switch cell {
	case "SYS":
		return Link{Type: LinkCrossSocket}, nil
	case "NODE":
		return Link{Type: LinkSameSocket}, nil
	case "PHB":
		return Link{Type: LinkHostBridge}, nil
	case "PXB":
		return Link{Type: LinkMultiSwitch}, nil
	case "PIX":
		return Link{Type: LinkPCIeSwitch}, nil
	}
	if len(cell) > 2 && cell[:2] == "NV" {
		n := 0
		for _, c := range cell[2:] {
			if c < '0' || c > '9' || n > 1000 {
				return Link{}, fmt.Errorf("link %q: want NV<number>, PIX, PXB, PHB, NODE or SYS", cell)
			}
			n = n*10 + int(c-'0')
		}
		if n < 1 {
			return Link{}, fmt.Errorf("link %q: NVLink count must be at least 1", cell)
		}
		return Link{Type: LinkNVLink, NVLinks: n}, nil
	}
	return Link{}, fmt.Errorf("link %q: want NV<number>, PIX, PXB, PHB, NODE or SYS", cell)
}

// String returns the link as nvidia-smi topo -m writes it, e.g. "NV2".
func (l Link) String() string {
	if l.Type == LinkNVLink {
		return fmt.Sprintf("NV%d", l.NVLinks)
	}
	return l.Type.String()
}

// Link is the interconnect between one ordered pair of GPUs.
type Link struct {
	Type LinkType
	// NVLinks is the number of NVLink links between the pair; 0 unless Type
	// is LinkNVLink.
	NVLinks int
}

// MIGDevice is one MIG device (a GPU instance with its compute instance).
type MIGDevice struct {
	// UUID is the MIG device UUID ("MIG-...").
	UUID string
	// Profile is the MIG profile name, e.g. "1g.10gb".
	Profile string
	// GPUInstanceID and ComputeInstanceID identify the device on its parent GPU.
	GPUInstanceID, ComputeInstanceID int
	// MemoryMiB is the device's memory in MiB.
	MemoryMiB int64
	// Multiprocessors is the number of SMs in the device.
	Multiprocessors int
}

// GPU is one physical GPU.
type GPU struct {
	Index int
	UUID  string
	// ProductName is NVML's name, e.g. "NVIDIA H100 80GB HBM3".
	ProductName string
	// Brand is NVML's brand as go-nvlib names it (GetBrandAsString),
	// e.g. "Nvidia", "Tesla"; empty when NVML does not tell.
	Brand string
	// Model is the internal/gpu catalog name, e.g. "H100-80GB"; empty when
	// the product is not in the catalog.
	Model     string
	MemoryMiB int64
	// PCIBusID is the PCI address, e.g. "00000000:07:00.0".
	PCIBusID string
	// Minor is the device node minor number (/dev/nvidia<Minor>).
	Minor int
	// NUMANode is the NUMA node the GPU is attached to; -1 when unknown.
	NUMANode                   int
	ComputeMajor, ComputeMinor int
	// Multiprocessors is the GPU's SM count: NVML's
	// (nvmlDeviceGetAttributes), else the count gpu.Multiprocessors cites
	// for the product (NVIDIA's published count, else a public CUDA report;
	// a whole H200, where NVML answers NOT_SUPPORTED, issue 35); 0 only for
	// a board with neither.
	Multiprocessors int
	// MIGEnabled is the current MIG mode; MIG lists the MIG devices when on.
	MIGEnabled bool
	MIG        []MIGDevice
}

// Node is what discovery returns for the whole machine.
type Node struct {
	GPUs []GPU
	// Links[i][j] is the interconnect between GPUs[i] and GPUs[j]; the
	// matrix is square and symmetric, Links[i][i] is unused.
	Links [][]Link
	// DriverVersion is the kernel driver version, e.g. "550.54.15".
	DriverVersion string
	// CUDADriverMajor and CUDADriverMinor are the CUDA version the driver
	// supports, e.g. 12 and 4.
	CUDADriverMajor, CUDADriverMinor int
	// Faults are the faults discovery found (a GPU lost, a fault of the
	// mock's faults file), as health events; WatchHealth reports them
	// again when it starts.
	Faults []HealthEvent
}

// HealthKind says what a HealthEvent reports.
type HealthKind int

const (
	// HealthXID: the device reported an XID error (HealthEvent.XID).
	HealthXID HealthKind = iota + 1
	// HealthLost: the device fell off the bus or stopped answering.
	HealthLost
	// HealthRecovered: the device works again after an XID or loss.
	HealthRecovered
)

// HealthEvent is one health change of a GPU or MIG device.
type HealthEvent struct {
	// UUID is the GPU's or MIG device's UUID.
	UUID string
	Kind HealthKind
	// XID is the XID error code when Kind is HealthXID.
	XID  uint64
	Time time.Time
}

// Sample is one telemetry reading of a GPU or MIG device, in dcgm-exporter's
// units. A field the device does not support is left nil.
type Sample struct {
	UUID string
	Time time.Time
	// GPUUtil and MemCopyUtil are percent (0..100).
	GPUUtil, MemCopyUtil *float64
	// FBUsedMiB and FBFreeMiB are frame-buffer MiB.
	FBUsedMiB, FBFreeMiB *float64
	// GPUTemp and MemoryTemp are degrees Celsius.
	GPUTemp, MemoryTemp *float64
	// PowerW is watts; TotalEnergyMJ is millijoules since driver load.
	PowerW, TotalEnergyMJ *float64
	// SMClockMHz and MemClockMHz are MHz.
	SMClockMHz, MemClockMHz *float64
	// LastXID is the last XID seen (0 for none).
	LastXID *float64
	// PCIeReplay is the PCIe replay counter.
	PCIeReplay *float64
	// ECC error counters (volatile and aggregate, single- and double-bit).
	ECCSBEVolatile, ECCDBEVolatile, ECCSBEAggregate, ECCDBEAggregate *float64
	// Row-remapping counters.
	RowRemapCorrectable, RowRemapUncorrectable, RowRemapPending, RowRemapFailure *float64
	// Profiling ratios (0..1), on GPUs with GPU Performance Monitoring
	// (Hopper and later), and on their MIG devices.
	ProfGrEngineActive, ProfSMActive, ProfTensorActive, ProfDRAMActive *float64
	// EncUtil and DecUtil are the video encoder and decoder utilisation,
	// percent (0..100).
	EncUtil, DecUtil *float64
	// FBReservedMiB is the frame buffer the driver reserves, MiB.
	FBReservedMiB *float64
	// PCIeTxBytesPerSec and PCIeRxBytesPerSec are the PCIe throughput,
	// bytes per second.
	PCIeTxBytesPerSec, PCIeRxBytesPerSec *float64
	// NVLinkBandwidthTotal is NVML's NVLink bandwidth counter 0 summed over
	// all links (NVML_FI_DEV_NVLINK_BANDWIDTH_C0_TOTAL), in the counter's
	// configured unit.
	NVLinkBandwidthTotal *float64
}

// GPUByUUID returns the GPU with the given UUID, or the GPU holding the MIG
// device with that UUID, and the MIG device's index in GPU.MIG (-1 for the
// GPU itself).
func (n *Node) GPUByUUID(uuid string) (gpu *GPU, mig int, ok bool) {
	for i := range n.GPUs {
		g := &n.GPUs[i]
		if g.UUID == uuid {
			return g, -1, true
		}
		for j := range g.MIG {
			if g.MIG[j].UUID == uuid {
				return g, j, true
			}
		}
	}
	return nil, -1, false
}

// Backend discovers GPUs, reports health and samples telemetry. Methods are
// safe for concurrent use.
type Backend interface {
	// Discover returns the node's GPUs and their interconnect.
	Discover(ctx context.Context) (Node, error)
	// WatchHealth sends health events to ch until ctx is done; it returns
	// ctx's error then, or another error if watching fails.
	WatchHealth(ctx context.Context, ch chan<- HealthEvent) error
	// Sample reads telemetry of every GPU and every MIG device.
	Sample(ctx context.Context) ([]Sample, error)
	// Close releases the backend.
	Close() error
}
