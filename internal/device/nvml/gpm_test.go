package nvml

import (
	"context"
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuplane/gpuplane/internal/device"
)

// TestGPMOnH100 runs Sample on go-nvml's mock DGX H100 with GPM support:
// the first sample has no profiling ratios (GPM needs two samples), the
// second has the metrics GpmMetricsGet returns, as ratios.
func TestGPMOnH100(t *testing.T) {
	s := dgxh100.New()
	for i, dev := range s.Devices {
		d := dev.(*server.Device)
		d.UUID = fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i)
		complete(d, i)
		d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
			return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
		}
	}
	alloc, freed := 0, 0
	s.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		alloc++
		return &mock.GpmSample{
			GetFunc:  func(nvml.Device) nvml.Return { return nvml.SUCCESS },
			FreeFunc: func() nvml.Return { freed++; return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	// Percent per metric: graphics 80, SM 60, tensor 25, DRAM 40.
	pct := map[uint32]float64{uint32(nvml.GPM_METRIC_GRAPHICS_UTIL): 80, uint32(nvml.GPM_METRIC_SM_UTIL): 60, uint32(nvml.GPM_METRIC_ANY_TENSOR_UTIL): 25, uint32(nvml.GPM_METRIC_DRAM_BW_UTIL): 40}
	s.GpmMetricsGetFunc = func(m *nvml.GpmMetricsGetType) nvml.Return {
		if m.Sample1 == nil || m.Sample2 == nil || m.NumMetrics != 4 {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		for i := 0; i < int(m.NumMetrics); i++ {
			m.Metrics[i].Value = pct[m.Metrics[i].MetricId]
		}
		return nvml.SUCCESS
	}
	b, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := n.GPUs[0]; g.Model != "H100-80GB" || g.ComputeMajor != 9 {
		t.Errorf("GPU 0: %s %d.%d", g.Model, g.ComputeMajor, g.ComputeMinor)
	}
	first, err := b.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if first[0].ProfSMActive != nil {
		t.Errorf("first sample has SM active %v", *first[0].ProfSMActive)
	}
	second, _ := b.Sample(context.Background())
	s0 := second[0]
	for name, got := range map[string]*float64{"gr": s0.ProfGrEngineActive, "sm": s0.ProfSMActive, "tensor": s0.ProfTensorActive, "dram": s0.ProfDRAMActive} {
		want := map[string]float64{"gr": 0.8, "sm": 0.6, "tensor": 0.25, "dram": 0.4}[name]
		if got == nil || *got != want {
			t.Errorf("%s active = %v, want %v", name, got, want)
		}
	}
	// 8 GPUs x 2 samples allocated; the 8 first ones freed after use.
	if alloc != 16 || freed != 8 {
		t.Errorf("GPM samples: %d allocated, %d freed; want 16, 8", alloc, freed)
	}
	b.Close()
	if freed != 16 {
		t.Errorf("Close freed %d samples in all, want 16", freed)
	}
}

// TestDirectNVLinks: GPUs linked to each other (no NVSwitch) count the
// links whose remote PCI device is the peer GPU; pairs without NVLink take
// the PCIe level.
func TestDirectNVLinks(t *testing.T) {
	m := newMachine(t)
	bus := func(i int) string { return fmt.Sprintf("00000000:%02X:00.0", 0x07+i*0x10) }
	// GPU 0 has 2 links to GPU 1 and 1 to GPU 2; GPU 1 has 2 to GPU 0; GPU 2 1 to GPU 0.
	peers := map[int][]int{0: {1, 1, 2}, 1: {0, 0}, 2: {0}}
	for i, dev := range m.Devices {
		d := dev.(*server.Device)
		ps := peers[i]
		d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
			if l >= 12 {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			if l < len(ps) {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		d.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) { return nvml.NVLINK_DEVICE_TYPE_GPU, nvml.SUCCESS }
		d.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			for k, c := range bus(ps[l]) {
				p.BusId[k] = int8(c)
			}
			return p, nvml.SUCCESS
		}
		idx := i
		d.GetTopologyCommonAncestorFunc = func(o nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			j := o.(*server.Device).Index
			if idx/4 == j/4 {
				return nvml.TOPOLOGY_HOSTBRIDGE, nvml.SUCCESS
			}
			return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
		}
	}
	b, _ := New(m)
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		i, j int
		want device.Link
	}{
		{0, 1, device.Link{Type: device.LinkNVLink, NVLinks: 2}},
		{2, 0, device.Link{Type: device.LinkNVLink, NVLinks: 1}},
		{1, 2, device.Link{Type: device.LinkHostBridge}},
		{3, 4, device.Link{Type: device.LinkCrossSocket}},
	} {
		if got := n.Links[c.i][c.j]; got != c.want {
			t.Errorf("link %d-%d = %v, want %v", c.i, c.j, got, c.want)
		}
	}
}
