package exporter

import (
	"github.com/gpuplane/gpuplane/internal/device"
)

// Type is a Prometheus metric type of a served field.
type Type string

// The metric types dcgm-exporter's counters file names.
const (
	Gauge   Type = "gauge"
	Counter Type = "counter"
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
	// support it.
	value func(*device.Sample) *float64
}

// fields is every field gpuplane serves, in the order it serves them. Names,
// types and units are dcgm-exporter's.
var fields = []Field{
	{"DCGM_FI_DEV_SM_CLOCK", Gauge, "SM clock frequency (in MHz).", func(s *device.Sample) *float64 { return s.SMClockMHz }},
	{"DCGM_FI_DEV_MEM_CLOCK", Gauge, "Memory clock frequency (in MHz).", func(s *device.Sample) *float64 { return s.MemClockMHz }},
	{"DCGM_FI_DEV_MEMORY_TEMP", Gauge, "Memory temperature (in C).", func(s *device.Sample) *float64 { return s.MemoryTemp }},
	{"DCGM_FI_DEV_GPU_TEMP", Gauge, "GPU temperature (in C).", func(s *device.Sample) *float64 { return s.GPUTemp }},
	{"DCGM_FI_DEV_POWER_USAGE", Gauge, "Power draw (in W).", func(s *device.Sample) *float64 { return s.PowerW }},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Counter, "Total energy consumption since the driver was loaded (in mJ).", func(s *device.Sample) *float64 { return s.TotalEnergyMJ }},
	{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Counter, "Total number of PCIe replays (retries).", func(s *device.Sample) *float64 { return s.PCIeReplay }},
	{"DCGM_FI_DEV_GPU_UTIL", Gauge, "GPU utilization (in %).", func(s *device.Sample) *float64 { return s.GPUUtil }},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", Gauge, "Memory copy utilization (in %).", func(s *device.Sample) *float64 { return s.MemCopyUtil }},
	{"DCGM_FI_DEV_XID_ERRORS", Gauge, "Value of the last XID error seen (0 for none).", func(s *device.Sample) *float64 { return s.LastXID }},
	{"DCGM_FI_DEV_FB_FREE", Gauge, "Frame buffer memory free (in MiB).", func(s *device.Sample) *float64 { return s.FBFreeMiB }},
	{"DCGM_FI_DEV_FB_USED", Gauge, "Frame buffer memory used (in MiB).", func(s *device.Sample) *float64 { return s.FBUsedMiB }},
	{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Counter, "Total number of single-bit volatile ECC errors.", func(s *device.Sample) *float64 { return s.ECCSBEVolatile }},
	{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Counter, "Total number of double-bit volatile ECC errors.", func(s *device.Sample) *float64 { return s.ECCDBEVolatile }},
	{"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", Counter, "Total number of single-bit persistent ECC errors.", func(s *device.Sample) *float64 { return s.ECCSBEAggregate }},
	{"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", Counter, "Total number of double-bit persistent ECC errors.", func(s *device.Sample) *float64 { return s.ECCDBEAggregate }},
	{"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", Counter, "Number of rows remapped for correctable errors.", func(s *device.Sample) *float64 { return s.RowRemapCorrectable }},
	{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Counter, "Number of rows remapped for uncorrectable errors.", func(s *device.Sample) *float64 { return s.RowRemapUncorrectable }},
	{"DCGM_FI_DEV_ROW_REMAP_PENDING", Gauge, "Whether a row remapping is pending (1) or not (0).", func(s *device.Sample) *float64 { return s.RowRemapPending }},
	{"DCGM_FI_DEV_ROW_REMAP_FAILURE", Gauge, "Whether a row remapping has failed (1) or not (0).", func(s *device.Sample) *float64 { return s.RowRemapFailure }},
	{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Gauge, "Ratio of time the graphics engine is active (0 to 1).", func(s *device.Sample) *float64 { return s.ProfGrEngineActive }},
	{"DCGM_FI_PROF_SM_ACTIVE", Gauge, "Ratio of cycles an SM has at least one warp assigned (0 to 1).", func(s *device.Sample) *float64 { return s.ProfSMActive }},
	{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Gauge, "Ratio of cycles the tensor pipe is active (0 to 1).", func(s *device.Sample) *float64 { return s.ProfTensorActive }},
	{"DCGM_FI_PROF_DRAM_ACTIVE", Gauge, "Ratio of cycles the device memory interface is active sending or receiving data (0 to 1).", func(s *device.Sample) *float64 { return s.ProfDRAMActive }},
}

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
