// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package nvml

import (
	"context"
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuplane/gpuplane/internal/node/device"
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

// TestGPMPerMIGInstance: on a GPU with GPM, each MIG device gets its GPU
// instance's profiling ratios from nvmlGpmMigSampleGet (GPM metrics per GPU
// instance; the NVML API reference names Hopper and later), from the second
// sample on; the GPU itself, its GPM samples refused in MIG mode, gets
// none. The machine is the A100 mock with GPM switched on for GPU 0 (MIG:
// a 3g.20gb and two 1g.5gb GPU instances), which is what the
// backend sees on an H100 in MIG mode.
func TestGPMPerMIGInstance(t *testing.T) {
	m := newMachine(t)
	d0 := m.Devices[0].(*server.Device)
	d0.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
	}
	gi := map[nvml.GpmSample]int{} // GPU instance each sample was taken of
	m.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		smp := &mock.GpmSample{FreeFunc: func() nvml.Return { return nvml.SUCCESS }}
		smp.GetFunc = func(nvml.Device) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
		smp.MigGetFunc = func(d nvml.Device, id int) nvml.Return {
			if d != m.Devices[0] {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			gi[smp] = id
			return nvml.SUCCESS
		}
		return smp, nvml.SUCCESS
	}
	// Graphics engine active 10 % times the GPU instance ID; SM, tensor
	// and DRAM fixed.
	m.GpmMetricsGetFunc = func(mg *nvml.GpmMetricsGetType) nvml.Return {
		id, ok := gi[mg.Sample2]
		if !ok || gi[mg.Sample1] != id {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		for i := 0; i < int(mg.NumMetrics); i++ {
			switch nvml.GpmMetricId(mg.Metrics[i].MetricId) {
			case nvml.GPM_METRIC_GRAPHICS_UTIL:
				mg.Metrics[i].Value = 10 * float64(id)
			case nvml.GPM_METRIC_SM_UTIL:
				mg.Metrics[i].Value = 50
			default:
				mg.Metrics[i].Value = 20
			}
		}
		return nvml.SUCCESS
	}
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n, _ := b.Discover(context.Background())
	first, _ := b.Sample(context.Background())
	if first[1].ProfGrEngineActive != nil {
		t.Errorf("first sample of a MIG device has a profiling ratio")
	}
	ss, _ := b.Sample(context.Background())
	if ss[0].ProfGrEngineActive != nil {
		t.Errorf("GPU 0 in MIG mode has graphics engine active %v", *ss[0].ProfGrEngineActive)
	}
	for k, mig := range n.GPUs[0].MIG {
		s := ss[1+k]
		want := 10 * float64(mig.GPUInstanceID) / 100 // GPM percent as a ratio
		if s.UUID != mig.UUID || s.ProfGrEngineActive == nil || *s.ProfGrEngineActive != want ||
			*s.ProfSMActive != 0.5 || *s.ProfTensorActive != 0.2 || *s.ProfDRAMActive != 0.2 {
			t.Errorf("MIG %s (GPU instance %d): %+v, want graphics engine active %v", mig.UUID, mig.GPUInstanceID, s, want)
		}
		if s.GPUUtil != nil {
			t.Errorf("MIG %s has GPU utilisation", mig.UUID)
		}
	}
	// GPU 1 (no GPM) and its 7g.40gb: none.
	if ss[4].ProfGrEngineActive != nil || ss[5].ProfGrEngineActive != nil {
		t.Error("GPU 1 without GPM has profiling ratios")
	}
}
