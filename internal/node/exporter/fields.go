// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Type is a Prometheus metric type of a served field.
type Type string

// The metric types dcgm-exporter's counters file names. A label field is
// served as a label on every device series, not as a metric.
const (
	Gauge   Type = "gauge"
	Counter Type = "counter"
	Label   Type = "label"
)

// Field is one telemetry field served under dcgm-exporter's name.
type Field struct {
	// Name is the metric name, dcgm-exporter's DCGM field name, e.g.
	// "DCGM_FI_DEV_GPU_UTIL".
	Name string
	// Type is the metric type (gauge or counter), as dcgm-exporter serves it.
	Type Type
	// Help is the metric's help text; it names the unit.
	Help string
	// value returns the field of a sample, nil when the device does not
	// support it; nil for a label field.
	value func(*device.Sample) *float64
	// label returns a label field's value for the node; nil for metrics.
	label func(*device.Node) string
}

// fields is every field gpuplane serves, in the order it serves them. Names,
// types and units are dcgm-exporter's.
var fields = []Field{
	{metrics.DCGMDevSMClock, Gauge, "SM clock frequency (in MHz).", func(s *device.Sample) *float64 { return s.SMClockMHz }, nil},
	{metrics.DCGMDevMemClock, Gauge, "Memory clock frequency (in MHz).", func(s *device.Sample) *float64 { return s.MemClockMHz }, nil},
	{metrics.DCGMDevMemoryTemp, Gauge, "Memory temperature (in C).", func(s *device.Sample) *float64 { return s.MemoryTemp }, nil},
	{metrics.DCGMDevGPUTemp, Gauge, "GPU temperature (in C).", func(s *device.Sample) *float64 { return s.GPUTemp }, nil},
	{metrics.DCGMDevPowerUsage, Gauge, "Power draw (in W).", func(s *device.Sample) *float64 { return s.PowerW }, nil},
	{metrics.DCGMDevTotalEnergyConsumption, Counter, "Total energy consumption since the driver was loaded (in mJ).", func(s *device.Sample) *float64 { return s.TotalEnergyMJ }, nil},
	{metrics.DCGMDevPCIeReplayCounter, Counter, "Total number of PCIe replays (retries).", func(s *device.Sample) *float64 { return s.PCIeReplay }, nil},
	{metrics.DCGMDevGPUUtil, Gauge, "GPU utilization (in %).", func(s *device.Sample) *float64 { return s.GPUUtil }, nil},
	{metrics.DCGMDevMemCopyUtil, Gauge, "Memory copy utilization (in %).", func(s *device.Sample) *float64 { return s.MemCopyUtil }, nil},
	{metrics.DCGMDevXIDErrors, Gauge, "Value of the last XID error seen (0 for none).", func(s *device.Sample) *float64 { return s.LastXID }, nil},
	{metrics.DCGMDevFBFree, Gauge, "Frame buffer memory free (in MiB).", func(s *device.Sample) *float64 { return s.FBFreeMiB }, nil},
	{metrics.DCGMDevFBUsed, Gauge, "Frame buffer memory used (in MiB).", func(s *device.Sample) *float64 { return s.FBUsedMiB }, nil},
	{metrics.DCGMDevECCSBEVolTotal, Counter, "Total number of single-bit volatile ECC errors.", func(s *device.Sample) *float64 { return s.ECCSBEVolatile }, nil},
	{metrics.DCGMDevECCDBEVolTotal, Counter, "Total number of double-bit volatile ECC errors.", func(s *device.Sample) *float64 { return s.ECCDBEVolatile }, nil},
	{metrics.DCGMDevECCSBEAggTotal, Counter, "Total number of single-bit persistent ECC errors.", func(s *device.Sample) *float64 { return s.ECCSBEAggregate }, nil},
	{metrics.DCGMDevECCDBEAggTotal, Counter, "Total number of double-bit persistent ECC errors.", func(s *device.Sample) *float64 { return s.ECCDBEAggregate }, nil},
	{metrics.DCGMDevCorrectableRemappedRows, Counter, "Number of rows remapped for correctable errors.", func(s *device.Sample) *float64 { return s.RowRemapCorrectable }, nil},
	{metrics.DCGMDevUncorrectableRemappedRows, Counter, "Number of rows remapped for uncorrectable errors.", func(s *device.Sample) *float64 { return s.RowRemapUncorrectable }, nil},
	{metrics.DCGMDevRowRemapPending, Gauge, "Whether a row remapping is pending (1) or not (0).", func(s *device.Sample) *float64 { return s.RowRemapPending }, nil},
	{metrics.DCGMDevRowRemapFailure, Gauge, "Whether a row remapping has failed (1) or not (0).", func(s *device.Sample) *float64 { return s.RowRemapFailure }, nil},
	{metrics.DCGMProfGrEngineActive, Gauge, "Ratio of time the graphics engine is active (0 to 1).", func(s *device.Sample) *float64 { return s.ProfGrEngineActive }, nil},
	{metrics.DCGMProfSMActive, Gauge, "Ratio of cycles an SM has at least one warp assigned (0 to 1).", func(s *device.Sample) *float64 { return s.ProfSMActive }, nil},
	{metrics.DCGMProfPipeTensorActive, Gauge, "Ratio of cycles the tensor pipe is active (0 to 1).", func(s *device.Sample) *float64 { return s.ProfTensorActive }, nil},
	{metrics.DCGMProfDRAMActive, Gauge, "Ratio of cycles the device memory interface is active sending or receiving data (0 to 1).", func(s *device.Sample) *float64 { return s.ProfDRAMActive }, nil},
	{metrics.DCGMDevENCUtil, Gauge, "Encoder utilization (in %).", func(s *device.Sample) *float64 { return s.EncUtil }, nil},
	{metrics.DCGMDevDECUtil, Gauge, "Decoder utilization (in %).", func(s *device.Sample) *float64 { return s.DecUtil }, nil},
	{metrics.DCGMDevFBReserved, Gauge, "Frame buffer memory reserved (in MiB).", func(s *device.Sample) *float64 { return s.FBReservedMiB }, nil},
	{metrics.DCGMProfPCIeTXBytes, Gauge, "Rate of data transmitted over the PCIe bus (in bytes per second).", func(s *device.Sample) *float64 { return s.PCIeTxBytesPerSec }, nil},
	{metrics.DCGMProfPCIeRXBytes, Gauge, "Rate of data received over the PCIe bus (in bytes per second).", func(s *device.Sample) *float64 { return s.PCIeRxBytesPerSec }, nil},
	{metrics.DCGMDevNVLinkBandwidthTotal, Counter, "Total of NVLink bandwidth counter 0 over all links.", func(s *device.Sample) *float64 { return s.NVLinkBandwidthTotal }, nil},
	{metrics.DCGMDriverVersion, Label, "Driver version.", nil, func(n *device.Node) string { return n.DriverVersion }},
}

// xidField is the field whose series also carry err_code and err_msg, as
// dcgm-exporter's (internal/pkg/collector/gpu_collector.go).
const xidField = metrics.DCGMDevXIDErrors

// AllFields returns every field gpuplane can serve, the default set.
func AllFields() []Field {
	out := make([]Field, len(fields))
	copy(out, fields)
	return out
}

// lookupField returns the served field of that name.
func lookupField(name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}
