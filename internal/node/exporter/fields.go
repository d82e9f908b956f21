package exporter

import (
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
	{"DCGM_FI_DEV_SM_CLOCK", Gauge, "SM clock frequency (in MHz).", func(s *device.Sample) *float64 { return s.SMClockMHz }, nil},
	{"DCGM_FI_DEV_MEM_CLOCK", Gauge, "Memory clock frequency (in MHz).", func(s *device.Sample) *float64 { return s.MemClockMHz }, nil},
	{"DCGM_FI_DEV_MEMORY_TEMP", Gauge, "Memory temperature (in C).", func(s *device.Sample) *float64 { return s.MemoryTemp }, nil},
	{"DCGM_FI_DEV_GPU_TEMP", Gauge, "GPU temperature (in C).", func(s *device.Sample) *float64 { return s.GPUTemp }, nil},
	{"DCGM_FI_DEV_POWER_USAGE", Gauge, "Power draw (in W).", func(s *device.Sample) *float64 { return s.PowerW }, nil},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Counter, "Total energy consumption since the driver was loaded (in mJ).", func(s *device.Sample) *float64 { return s.TotalEnergyMJ }, nil},
	{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Counter, "Total number of PCIe replays (retries).", func(s *device.Sample) *float64 { return s.PCIeReplay }, nil},
	{"DCGM_FI_DEV_GPU_UTIL", Gauge, "GPU utilization (in %).", func(s *device.Sample) *float64 { return s.GPUUtil }, nil},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", Gauge, "Memory copy utilization (in %).", func(s *device.Sample) *float64 { return s.MemCopyUtil }, nil},
	{"DCGM_FI_DEV_XID_ERRORS", Gauge, "Value of the last XID error seen (0 for none).", func(s *device.Sample) *float64 { return s.LastXID }, nil},
	{"DCGM_FI_DEV_FB_FREE", Gauge, "Frame buffer memory free (in MiB).", func(s *device.Sample) *float64 { return s.FBFreeMiB }, nil},
	{"DCGM_FI_DEV_FB_USED", Gauge, "Frame buffer memory used (in MiB).", func(s *device.Sample) *float64 { return s.FBUsedMiB }, nil},
	{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Counter, "Total number of single-bit volatile ECC errors.", func(s *device.Sample) *float64 { return s.ECCSBEVolatile }, nil},
	{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Counter, "Total number of double-bit volatile ECC errors.", func(s *device.Sample) *float64 { return s.ECCDBEVolatile }, nil},
	{"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", Counter, "Total number of single-bit persistent ECC errors.", func(s *device.Sample) *float64 { return s.ECCSBEAggregate }, nil},
	{"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", Counter, "Total number of double-bit persistent ECC errors.", func(s *device.Sample) *float64 { return s.ECCDBEAggregate }, nil},
	{"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", Counter, "Number of rows remapped for correctable errors.", func(s *device.Sample) *float64 { return s.RowRemapCorrectable }, nil},
	{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Counter, "Number of rows remapped for uncorrectable errors.", func(s *device.Sample) *float64 { return s.RowRemapUncorrectable }, nil},
	{"DCGM_FI_DEV_ROW_REMAP_PENDING", Gauge, "Whether a row remapping is pending (1) or not (0).", func(s *device.Sample) *float64 { return s.RowRemapPending }, nil},
	{"DCGM_FI_DEV_ROW_REMAP_FAILURE", Gauge, "Whether a row remapping has failed (1) or not (0).", func(s *device.Sample) *float64 { return s.RowRemapFailure }, nil},
	{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Gauge, "Ratio of time the graphics engine is active (0 to 1).", func(s *device.Sample) *float64 { return s.ProfGrEngineActive }, nil},
	{"DCGM_FI_PROF_SM_ACTIVE", Gauge, "Ratio of cycles an SM has at least one warp assigned (0 to 1).", func(s *device.Sample) *float64 { return s.ProfSMActive }, nil},
	{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Gauge, "Ratio of cycles the tensor pipe is active (0 to 1).", func(s *device.Sample) *float64 { return s.ProfTensorActive }, nil},
	{"DCGM_FI_PROF_DRAM_ACTIVE", Gauge, "Ratio of cycles the device memory interface is active sending or receiving data (0 to 1).", func(s *device.Sample) *float64 { return s.ProfDRAMActive }, nil},
	{"DCGM_FI_DEV_ENC_UTIL", Gauge, "Encoder utilization (in %).", func(s *device.Sample) *float64 { return s.EncUtil }, nil},
	{"DCGM_FI_DEV_DEC_UTIL", Gauge, "Decoder utilization (in %).", func(s *device.Sample) *float64 { return s.DecUtil }, nil},
	{"DCGM_FI_DEV_FB_RESERVED", Gauge, "Frame buffer memory reserved (in MiB).", func(s *device.Sample) *float64 { return s.FBReservedMiB }, nil},
	{"DCGM_FI_PROF_PCIE_TX_BYTES", Gauge, "Rate of data transmitted over the PCIe bus (in bytes per second).", func(s *device.Sample) *float64 { return s.PCIeTxBytesPerSec }, nil},
	{"DCGM_FI_PROF_PCIE_RX_BYTES", Gauge, "Rate of data received over the PCIe bus (in bytes per second).", func(s *device.Sample) *float64 { return s.PCIeRxBytesPerSec }, nil},
	{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", Counter, "Total of NVLink bandwidth counter 0 over all links.", func(s *device.Sample) *float64 { return s.NVLinkBandwidthTotal }, nil},
	{"DCGM_FI_DRIVER_VERSION", Label, "Driver version.", nil, func(n *device.Node) string { return n.DriverVersion }},
}

// xidField is the field whose series also carry err_code and err_msg, as
// dcgm-exporter's (internal/pkg/collector/gpu_collector.go).
const xidField = "DCGM_FI_DEV_XID_ERRORS"

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
