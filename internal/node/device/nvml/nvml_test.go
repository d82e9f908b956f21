// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package nvml

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/devicetest"
)

// machine is go-nvml's mock DGX A100 (8x A100-SXM4-40GB), completed with
// the NVML calls its mock leaves out (NUMA, NVLink, MIG device handles,
// telemetry, events), and with MIG on GPUs 0 and 1:
//
//	GPU 0: 3g.20gb, 1g.5gb, 1g.5gb
//	GPU 1: 7g.40gb
type machine struct {
	*server.Server
	events chan nvml.EventData
}

func newMachine(t *testing.T) *machine {
	t.Helper()
	m := &machine{Server: dgxa100.New(), events: make(chan nvml.EventData, 16)}
	for i, dev := range m.Devices {
		d := dev.(*server.Device)
		d.UUID = fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i) // stable for the test
		complete(d, i)
	}
	m.mig(t, 0, nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	m.mig(t, 1, nvml.GPU_INSTANCE_PROFILE_7_SLICE)
	es := &mock.EventSet{
		WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
			select {
			case ev := <-m.events:
				return ev, nvml.SUCCESS
			case <-time.After(time.Duration(ms) * time.Millisecond / 10):
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
		},
		FreeFunc: func() nvml.Return { return nvml.SUCCESS },
	}
	m.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return es, nvml.SUCCESS }
	return m
}

// mig enables MIG on GPU i and creates one GPU instance (with a full
// compute instance) per profile.
func (m *machine) mig(t *testing.T, i int, profiles ...int) {
	d := m.Devices[i].(*server.Device)
	d.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	for _, p := range profiles {
		gi := m.gpuInstance(t, d, p)
		ciProfile := map[int]int{
			nvml.GPU_INSTANCE_PROFILE_1_SLICE: nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE,
			nvml.GPU_INSTANCE_PROFILE_3_SLICE: nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE,
			nvml.GPU_INSTANCE_PROFILE_7_SLICE: nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE,
		}[p]
		computeInstances(t, gi, ciProfile, 1)
	}
}

// gpuInstance creates a GPU instance of profile p on d, which must have MIG
// enabled, with the lookup of its compute instances by ID that go-nvml's
// mock leaves out.
func (m *machine) gpuInstance(t *testing.T, d *server.Device, p int) *server.GpuInstance {
	t.Helper()
	gip, ret := d.GetGpuInstanceProfileInfo(p)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	created, ret := d.CreateGpuInstance(&gip)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	gi := created.(*server.GpuInstance)
	gi.GetComputeInstanceByIdFunc = func(id int) (nvml.ComputeInstance, nvml.Return) {
		for ci := range gi.ComputeInstances {
			if int(ci.Info.Id) == id {
				return ci, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	return gi
}

// computeInstances creates count compute instances of profile ci in gi.
func computeInstances(t *testing.T, gi *server.GpuInstance, ci, count int) {
	t.Helper()
	cip, ret := gi.GetComputeInstanceProfileInfo(ci, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	for k := 0; k < count; k++ {
		if _, ret := gi.CreateComputeInstance(&cip); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
	}
}

func notSupported() nvml.Return { return nvml.ERROR_NOT_SUPPORTED }

// complete fills in the NVML calls go-nvml's mock device lacks.
func complete(d *server.Device, i int) {
	bus := fmt.Sprintf("00000000:%02X:00.0", 0x07+i*0x10)
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		var p nvml.PciInfo
		for k, c := range bus {
			p.BusId[k] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	d.GetNumaNodeIdFunc = func() (int, nvml.Return) { return i / 4, nvml.SUCCESS }
	d.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) {
		return nvml.DeviceAttributes{MultiprocessorCount: 108}, nvml.SUCCESS
	}
	// 12 NVLinks per A100, all to the NVSwitches.
	d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
		if l >= 12 {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	d.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
		return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
	}
	d.GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
		return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(k int) (nvml.Device, nvml.Return) {
		migs := migDevices(d)
		if k >= len(migs) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migs[k], nvml.SUCCESS
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		for gi := range d.GpuInstances {
			if int(gi.Info.Id) == id {
				return gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	// Telemetry: fixed readings; ECC and row remapping not supported.
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 42, Memory: 7}, nvml.SUCCESS }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 51, nvml.SUCCESS }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 312500, nvml.SUCCESS } // mW
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 9000000, nvml.SUCCESS }
	d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_SM {
			return 1410, nvml.SUCCESS
		}
		return 1215, nvml.SUCCESS
	}
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 3, nvml.SUCCESS }
	d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, notSupported() }
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, notSupported() }
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) { return nvml.GpmSupport{}, nvml.SUCCESS } // Ampere: no GPM
	d.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	// 1 GiB used by processes, 300 MiB reserved by the driver.
	setMemory(&d.Device, d.MemoryInfo.Total, 300<<20, 1<<30)
	d.GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 5, 167000, nvml.SUCCESS }
	d.GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 11, 167000, nvml.SUCCESS }
	d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
		if c == nvml.PCIE_UTIL_TX_BYTES {
			return 2000, nvml.SUCCESS // KiB/s
		}
		return 500, nvml.SUCCESS
	}
	// NVLink bandwidth counter 0, all links: an unsigned long long.
	d.GetFieldValuesFunc = func(v []nvml.FieldValue) nvml.Return {
		for k := range v {
			if v[k].FieldId != nvml.FI_DEV_NVLINK_BANDWIDTH_C0_TOTAL {
				v[k].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
				continue
			}
			v[k].ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
			binary.NativeEndian.PutUint64(v[k].Value[:], 123456789)
		}
		return nvml.SUCCESS
	}
}

// setMemory makes d's memory info total, reserved and used bytes as NVML
// gives them: v2 (nvmlDeviceGetMemoryInfo_v2) with used excluding the
// reserved memory, v1 with used including it (used + reserved), the same
// free in both (NVML's nvmlMemory_t and nvmlMemory_v2_t docs in nvml.h).
func setMemory(d *mock.Device, total, reserved, used uint64) {
	free := total - reserved - used
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: total, Used: used + reserved, Free: free}, nvml.SUCCESS
	}
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		return nvml.Memory_v2{Total: total, Reserved: reserved, Used: used, Free: free}, nvml.SUCCESS
	}
}

// migDevices returns mock MIG device handles of d, ordered by GPU and
// compute instance ID.
func migDevices(d *server.Device) []nvml.Device {
	var gis []*server.GpuInstance
	for gi := range d.GpuInstances {
		gis = append(gis, gi)
	}
	sort.Slice(gis, func(a, b int) bool { return gis[a].Info.Id < gis[b].Info.Id })
	var out []nvml.Device
	for _, gi := range gis {
		p := d.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
		for ci := range gi.ComputeInstances {
			giID, ciID := int(gi.Info.Id), int(ci.Info.Id)
			uuid := fmt.Sprintf("MIG-%s-%d-%d", d.UUID[4:12], giID, ciID)
			mem := p.MemorySizeMB
			out = append(out, &mock.Device{
				GetUUIDFunc: func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
				// What go-nvlib's MigDevice.GetProfile asks besides.
				IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
				GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return d, nvml.SUCCESS },
				GetGpuInstanceIdFunc:                   func() (int, nvml.Return) { return giID, nvml.SUCCESS },
				GetComputeInstanceIdFunc:               func() (int, nvml.Return) { return ciID, nvml.SUCCESS },
				GetAttributesFunc: func() (nvml.DeviceAttributes, nvml.Return) {
					return nvml.DeviceAttributes{MultiprocessorCount: p.MultiprocessorCount, MemorySizeMB: mem}, nvml.SUCCESS
				},
			})
			// 256 MiB used, 20 MiB reserved (figures of this test only).
			setMemory(out[len(out)-1].(*mock.Device), mem<<20, 20<<20, 256<<20)
		}
	}
	return out
}

func TestConformance(t *testing.T) {
	m := newMachine(t)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	devicetest.Run(t, devicetest.Harness{
		Backend: b, GPUs: 8, MIGDevices: 4,
		InjectXID: func(t *testing.T, uuid string, xid uint64) {
			d, _ := m.DeviceGetHandleByUUID(uuid)
			m.events <- nvml.EventData{Device: d, EventType: nvml.EventTypeXidCriticalError, EventData: xid, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}
		},
	})
}

func TestDiscoverDGXA100(t *testing.T) {
	m := newMachine(t)
	// go-nvml's DGX A100 reports NVML_BRAND_NVIDIA; GPU 3 here
	// NVML_BRAND_TESLA, which go-nvlib names "Tesla".
	m.Devices[3].(*server.Device).GetBrandFunc = func() (nvml.BrandType, nvml.Return) { return nvml.BRAND_TESLA, nvml.SUCCESS }
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n.DriverVersion != "550.54.15" || n.CUDADriverMajor != 12 || n.CUDADriverMinor != 4 {
		t.Errorf("driver %s CUDA %d.%d, want 550.54.15 CUDA 12.4", n.DriverVersion, n.CUDADriverMajor, n.CUDADriverMinor)
	}
	if n.GPUs[5].Brand != "Nvidia" || n.GPUs[3].Brand != "Tesla" {
		t.Errorf("brands %q and %q, want Nvidia and Tesla", n.GPUs[5].Brand, n.GPUs[3].Brand)
	}
	g := n.GPUs[5]
	if g.Model != "A100-40GB" || g.MemoryMiB != 40960 || g.PCIBusID != "00000000:57:00.0" || g.NUMANode != 1 || g.ComputeMajor != 8 || g.Multiprocessors != 108 || g.MIGEnabled {
		t.Errorf("GPU 5 = %+v", g)
	}
	// All pairs through the NVSwitches with 12 links each: NV12.
	if l := n.Links[2][6]; l != (device.Link{Type: device.LinkNVLink, NVLinks: 12}) {
		t.Errorf("link 2-6 = %v, want NV12", l)
	}
	var got []string
	for _, gi := range []int{0, 1} {
		for _, m := range n.GPUs[gi].MIG {
			got = append(got, fmt.Sprintf("%d:%s/%dMiB/%dSM/gi%d", gi, m.Profile, m.MemoryMiB, m.Multiprocessors, m.GPUInstanceID))
		}
	}
	// A100-40GB MIG profiles: 3g.20gb = 19968 MiB, 42 SMs; 1g.5gb = 4864 MiB,
	// 14 SMs; 7g.40gb = 40192 MiB, 98 SMs.
	want := "0:3g.20gb/19968MiB/42SM/gi0 0:1g.5gb/4864MiB/14SM/gi1 0:1g.5gb/4864MiB/14SM/gi2 1:7g.40gb/40192MiB/98SM/gi0"
	if strings.Join(got, " ") != want {
		t.Errorf("MIG devices:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestSampleDGXA100(t *testing.T) {
	b, err := New(newMachine(t))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := b.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 12 {
		t.Fatalf("%d samples, want 8 GPUs + 4 MIG devices", len(ss))
	}
	// Order: GPU 0, its three MIG devices, GPU 1, its MIG device, GPUs 2-7.
	s := ss[0]
	if *s.GPUUtil != 42 || *s.MemCopyUtil != 7 || *s.GPUTemp != 51 || *s.PowerW != 312.5 || *s.TotalEnergyMJ != 9e6 ||
		*s.SMClockMHz != 1410 || *s.MemClockMHz != 1215 || *s.PCIeReplay != 3 || *s.FBUsedMiB != 1024 || *s.FBFreeMiB != 40960-1024-300 {
		t.Errorf("GPU 0 sample wrong: util %v/%v temp %v power %v energy %v clocks %v/%v replay %v fb %v/%v",
			*s.GPUUtil, *s.MemCopyUtil, *s.GPUTemp, *s.PowerW, *s.TotalEnergyMJ, *s.SMClockMHz, *s.MemClockMHz, *s.PCIeReplay, *s.FBUsedMiB, *s.FBFreeMiB)
	}
	if s.ECCSBEVolatile != nil || s.RowRemapPending != nil || s.MemoryTemp != nil || s.ProfSMActive != nil {
		t.Errorf("unsupported fields are not nil")
	}
	if *s.LastXID != 0 {
		t.Errorf("LastXID = %v", *s.LastXID)
	}
	// 2000 and 500 KiB/s of PCIe: 2048000 and 512000 bytes/s.
	if *s.EncUtil != 5 || *s.DecUtil != 11 || *s.FBReservedMiB != 300 || *s.PCIeTxBytesPerSec != 2048000 ||
		*s.PCIeRxBytesPerSec != 512000 || *s.NVLinkBandwidthTotal != 123456789 {
		t.Errorf("GPU 0: encoder %v decoder %v reserved %v PCIe %v/%v NVLink %v", *s.EncUtil, *s.DecUtil, *s.FBReservedMiB,
			*s.PCIeTxBytesPerSec, *s.PCIeRxBytesPerSec, *s.NVLinkBandwidthTotal)
	}
	mig := ss[1] // GPU 0's first MIG device (3g.20gb)
	if !strings.HasPrefix(mig.UUID, "MIG-") || *mig.FBUsedMiB != 256 || *mig.FBFreeMiB != 19968-256-20 || *mig.FBReservedMiB != 20 {
		t.Errorf("MIG sample %s: used %v free %v reserved %v", mig.UUID, *mig.FBUsedMiB, *mig.FBFreeMiB, *mig.FBReservedMiB)
	}
	// NVML has no utilisation for a MIG device, and an A100 has no GPM.
	if mig.GPUUtil != nil || mig.ProfGrEngineActive != nil || mig.EncUtil != nil {
		t.Errorf("A100 MIG sample has util %v, profiling %v, encoder %v; want none", mig.GPUUtil, mig.ProfGrEngineActive, mig.EncUtil)
	}
}

func TestLostAndRecovered(t *testing.T) {
	m := newMachine(t)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	b.LostPollInterval = 10 * time.Millisecond
	lost := make(chan bool, 1)
	lost <- false
	d := m.Devices[3].(*server.Device)
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		l := <-lost
		lost <- l
		if l {
			return 0, nvml.ERROR_GPU_IS_LOST
		}
		return 50, nvml.SUCCESS
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan device.HealthEvent, 4)
	go b.WatchHealth(ctx, ch)
	<-lost
	lost <- true
	if ev := <-ch; ev.UUID != d.UUID || ev.Kind != device.HealthLost {
		t.Fatalf("event %+v, want GPU 3 lost", ev)
	}
	<-lost
	lost <- false
	if ev := <-ch; ev.UUID != d.UUID || ev.Kind != device.HealthRecovered {
		t.Fatalf("event %+v, want GPU 3 recovered", ev)
	}
}

func TestMIGXID(t *testing.T) {
	m := newMachine(t)
	b, _ := New(m)
	n, _ := b.Discover(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan device.HealthEvent, 4)
	go b.WatchHealth(ctx, ch)
	// XID 43 in GPU instance 2, compute instance 0 of GPU 0: the second 1g.5gb.
	m.events <- nvml.EventData{Device: m.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 43, GpuInstanceId: 2, ComputeInstanceId: 0}
	ev := <-ch
	if want := n.GPUs[0].MIG[2].UUID; ev.UUID != want || ev.XID != 43 {
		t.Errorf("event %+v, want XID 43 on %s", ev, want)
	}
	ss, _ := b.Sample(context.Background())
	if *ss[3].LastXID != 43 {
		t.Errorf("MIG LastXID = %v", *ss[3].LastXID)
	}
}

// An XID names the MIG device live when it happens, not as discovered
// when the watch started: a MIG device created since (on demand, for a
// DRA claim) is named, and one destroyed since is not, its XID falling to
// its GPU.
func TestMIGXIDLive(t *testing.T) {
	m := newMachine(t)
	d0, d2 := m.Devices[0].(*server.Device), m.Devices[2].(*server.Device)
	d2.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	failCI := false
	nvmlRules(d2, &failCI)
	b, _ := New(m)
	n, _ := b.Discover(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan device.HealthEvent, 4)
	go b.WatchHealth(ctx, ch)
	xid := func(d *server.Device, gi, ci uint32) string {
		m.events <- nvml.EventData{Device: d, EventType: nvml.EventTypeXidCriticalError, EventData: 43, GpuInstanceId: gi, ComputeInstanceId: ci}
		return (<-ch).UUID
	}
	// The GPU's own XID: the watch has discovered the GPUs.
	if got := xid(d2, math.MaxUint32, math.MaxUint32); got != d2.UUID {
		t.Fatalf("GPU 2's XID on %s", got)
	}

	created, err := b.CreateMIG(ctx, d2.UUID, "1g.5gb", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := xid(d2, uint32(created.GPUInstanceID), uint32(created.ComputeInstanceID)); got != created.UUID {
		t.Errorf("XID on the MIG device created since the start: on %s, want %s", got, created.UUID)
	}
	// GPU 0's second 1g.5gb (GPU instance 2) is destroyed.
	if err := b.DestroyMIG(ctx, d0.UUID, 2, n.GPUs[0].MIG[2].UUID); err != nil {
		t.Fatal(err)
	}
	if got := xid(d0, 2, 0); got != d0.UUID {
		t.Errorf("XID on GPU instance 2 after %s was destroyed: on %s, want the GPU %s", n.GPUs[0].MIG[2].UUID, got, d0.UUID)
	}
	if got := xid(d0, 1, 0); got != n.GPUs[0].MIG[1].UUID {
		t.Errorf("XID on GPU instance 1: on %s, want %s", got, n.GPUs[0].MIG[1].UUID)
	}
}

func TestOpenWithoutDriver(t *testing.T) {
	b, err := Open()
	if err == nil {
		b.Close()
		t.Skip("this machine has NVML")
	}
	if !strings.Contains(err.Error(), "NVML library (libnvidia-ml.so.1) not found") {
		t.Errorf("Open() = %v", err)
	}
}

// TestMIGProfileNames: MIG devices are named by go-nvlib's rule from their
// GPU and compute instance profiles and memory (A100-SXM4-40GB, 40960 MiB):
// a 7-slice GPU instance (40192 MiB: 40192/40960 rounds up to 8/8 of 40 GB)
// split into seven 1-slice compute instances gives seven "1c.7g.40gb", not
// "7g.40gb"; the 1-slice profile with media extensions (4864 MiB: 1/8 of
// 40 GB) is "1g.5gb+me" (go-nvlib pkg/nvlib/device/mig_profile.go).
func TestMIGProfileNames(t *testing.T) {
	m := newMachine(t)
	d := m.Devices[2].(*server.Device)
	d.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	computeInstances(t, m.gpuInstance(t, d, nvml.GPU_INSTANCE_PROFILE_7_SLICE), nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 7)
	d = m.Devices[3].(*server.Device)
	d.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	computeInstances(t, m.gpuInstance(t, d, nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1), nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 1)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range n.GPUs[2:4] {
		for _, x := range g.MIG {
			got = append(got, x.Profile)
		}
	}
	want := "1c.7g.40gb 1c.7g.40gb 1c.7g.40gb 1c.7g.40gb 1c.7g.40gb 1c.7g.40gb 1c.7g.40gb 1g.5gb+me"
	if strings.Join(got, " ") != want {
		t.Errorf("profiles %v, want %s", got, want)
	}
}

// loseGPU makes every per-GPU query of GPU i answer ERROR_GPU_IS_LOST, as
// NVML does for a GPU fallen off the bus, except the UUID when withUUID is
// set (without it, the handle itself is refused).
func loseGPU(m *machine, i int, withUUID bool) {
	d := m.Devices[i].(*server.Device)
	isLost := func() nvml.Return { return nvml.ERROR_GPU_IS_LOST }
	d.GetNameFunc = func() (string, nvml.Return) { return "", isLost() }
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, isLost() }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, isLost() }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, isLost() }
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, isLost() }
	d.GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, isLost() }
	d.GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) { return 0, isLost() }
	if !withUUID {
		d.GetUUIDFunc = func() (string, nvml.Return) { return "", isLost() }
		byIndex := m.DeviceGetHandleByIndexFunc
		m.DeviceGetHandleByIndexFunc = func(k int) (nvml.Device, nvml.Return) {
			if k == i {
				return nil, isLost()
			}
			return byIndex(k)
		}
	}
}

// TestLostGPUAtDiscovery: one lost GPU of eight (GPU 3) does not fail
// discovery or sampling: the seven others are discovered and sampled; the
// lost one, when NVML still gives its UUID, is listed and reported lost in
// Node.Faults, else left out.
func TestLostGPUAtDiscovery(t *testing.T) {
	for _, withUUID := range []bool{true, false} {
		m := newMachine(t)
		lostUUID := m.Devices[3].(*server.Device).UUID
		loseGPU(m, 3, withUUID)
		b, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		n, err := b.Discover(context.Background())
		if err != nil {
			t.Fatalf("withUUID %v: Discover: %v", withUUID, err)
		}
		var idx []string
		for _, g := range n.GPUs {
			idx = append(idx, fmt.Sprint(g.Index))
		}
		want, wantFaults := "0 1 2 3 4 5 6 7", 1
		if !withUUID {
			want, wantFaults = "0 1 2 4 5 6 7", 0
		}
		if strings.Join(idx, " ") != want || len(n.Faults) != wantFaults {
			t.Errorf("withUUID %v: GPUs %v, faults %v; want GPUs %s, %d fault", withUUID, idx, n.Faults, want, wantFaults)
		}
		if withUUID {
			if ev := n.Faults[0]; ev.UUID != lostUUID || ev.Kind != device.HealthLost {
				t.Errorf("fault %+v, want GPU 3 lost", ev)
			}
			if n.GPUs[3].UUID != lostUUID || n.Links[3][5].Type != device.LinkUnknown || n.Links[2][6].NVLinks != 12 {
				t.Errorf("GPU 3 %+v, links 3-5 %v, 2-6 %v", n.GPUs[3], n.Links[3][5], n.Links[2][6])
			}
		}
		// 7 GPUs and the 4 MIG devices of GPUs 0 and 1.
		ss, err := b.Sample(context.Background())
		if err != nil {
			t.Fatalf("withUUID %v: Sample: %v", withUUID, err)
		}
		if len(ss) != 11 {
			t.Errorf("withUUID %v: %d samples, want 11", withUUID, len(ss))
		}
		for _, s := range ss {
			if s.UUID == lostUUID {
				t.Errorf("withUUID %v: sample of the lost GPU", withUUID)
			}
		}
	}
}

// TestLostGPUAfterStart: a GPU lost after discovery stops giving samples;
// the others keep theirs.
func TestLostGPUAfterStart(t *testing.T) {
	m := newMachine(t)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	if ss, err := b.Sample(context.Background()); err != nil || len(ss) != 12 {
		t.Fatalf("before: %d samples, %v", len(ss), err)
	}
	loseGPU(m, 6, true)
	ss, err := b.Sample(context.Background())
	if err != nil || len(ss) != 11 {
		t.Fatalf("after GPU 6 is lost: %d samples, %v; want 11", len(ss), err)
	}
}

// TestRecoveryClearsMIGDevices: a GPU lost at start is reported lost first;
// when it answers again it is reported recovered with each of its MIG
// devices, so an XID of a MIG device does not outlive the GPU's reset.
func TestRecoveryClearsMIGDevices(t *testing.T) {
	m := newMachine(t)
	d := m.Devices[0].(*server.Device)
	name, temp := d.GetNameFunc, d.GetTemperatureFunc
	lost := make(chan bool, 1)
	lost <- true
	isLost := func() bool { l := <-lost; lost <- l; return l }
	d.GetNameFunc = func() (string, nvml.Return) {
		if isLost() {
			return "", nvml.ERROR_GPU_IS_LOST
		}
		return name()
	}
	d.GetTemperatureFunc = func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
		if isLost() {
			return 0, nvml.ERROR_GPU_IS_LOST
		}
		return temp(s)
	}
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	b.LostPollInterval = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan device.HealthEvent, 8)
	go b.WatchHealth(ctx, ch)
	if ev := <-ch; ev.UUID != d.UUID || ev.Kind != device.HealthLost {
		t.Fatalf("first event %+v, want GPU 0 lost", ev)
	}
	<-lost
	lost <- false
	var got []string
	for len(got) < 4 {
		ev := <-ch
		if ev.Kind != device.HealthRecovered {
			t.Fatalf("event %+v, want recovered", ev)
		}
		got = append(got, ev.UUID)
	}
	// GPU 0, then its MIG devices (3g.20gb, 1g.5gb, 1g.5gb).
	var want []string
	want = append(want, d.UUID)
	for _, h := range migDevices(d) {
		u, _ := h.GetUUID()
		want = append(want, u)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("recovered %v, want %v", got, want)
	}
}

// TestFrameBufferAsNvidiaSmi checks DCGM_FI_DEV_FB_USED, _FB_FREE and
// _FB_RESERVED against nvidia-smi's figures on the H200 of issue 35 (driver
// 580.159.04): total 143771 MiB, of which the driver reserves 615.125 MiB
// (v1 used 615.1 MiB idle; nvidia-smi shows Reserved 616 MiB, rounded up).
// nvidia-smi's memory.used is v2's used: 0 idle, 1011 MiB under load. A
// driver without v2 gives v1's used, reserved included, and no reserved.
func TestFrameBufferAsNvidiaSmi(t *testing.T) {
	const mib = 1 << 20
	const total, reserved = 143771 * mib, 615*mib + mib/8
	for _, tc := range []struct {
		name               string
		used               uint64
		noSymbol, v2Fails  bool
		wantUsed, wantFree float64
		wantReserved       float64 // -1: none
	}{
		{name: "idle", used: 0, wantUsed: 0, wantFree: 143771 - 615.125, wantReserved: 615.125},
		{name: "loaded", used: 1011 * mib, wantUsed: 1011, wantFree: 143771 - 615.125 - 1011, wantReserved: 615.125},
		{name: "library without v2", noSymbol: true, wantUsed: 615.125, wantFree: 143771 - 615.125, wantReserved: -1},
		{name: "v2 not supported", v2Fails: true, used: 1011 * mib, wantUsed: 1626.125, wantFree: 143771 - 1626.125, wantReserved: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine(t)
			d := m.Devices[2].(*server.Device)
			setMemory(&d.Device, total, reserved, tc.used)
			if tc.noSymbol {
				m.LookupSymbolFunc = func(s string) error {
					if s == "nvmlDeviceGetMemoryInfo_v2" {
						return fmt.Errorf("undefined symbol: %s", s)
					}
					return nil
				}
				d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
					t.Error("nvmlDeviceGetMemoryInfo_v2 called on a library without it")
					return nvml.Memory_v2{}, nvml.ERROR_FUNCTION_NOT_FOUND
				}
			}
			if tc.v2Fails {
				d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED }
			}
			b, err := New(m)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := b.Sample(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ss {
				if s.UUID != d.UUID {
					continue
				}
				if *s.FBUsedMiB != tc.wantUsed || *s.FBFreeMiB != tc.wantFree {
					t.Errorf("used %v free %v MiB, want %v %v", *s.FBUsedMiB, *s.FBFreeMiB, tc.wantUsed, tc.wantFree)
				}
				switch {
				case tc.wantReserved < 0 && s.FBReservedMiB != nil:
					t.Errorf("reserved %v, want none", *s.FBReservedMiB)
				case tc.wantReserved >= 0 && (s.FBReservedMiB == nil || *s.FBReservedMiB != tc.wantReserved):
					t.Errorf("reserved %v, want %v", s.FBReservedMiB, tc.wantReserved)
				case tc.wantReserved >= 0 && *s.FBUsedMiB+*s.FBFreeMiB+*s.FBReservedMiB != 143771:
					t.Errorf("used + free + reserved != total 143771 MiB")
				}
				return
			}
			t.Fatalf("no sample of %s", d.UUID)
		})
	}
}

// TestMultiprocessorsFromCatalog: where nvmlDeviceGetAttributes is
// NOT_SUPPORTED (a whole H200, driver 580.159.04, issue 35) discovery takes
// NVIDIA's published SM count for the product (internal/gpu sm.go: H200
// 132, as CUDA reported on that GPU); a product without one stays 0; where
// NVML answers, its count stands (the A100's 108, TestDiscoverDGXA100).
func TestMultiprocessorsFromCatalog(t *testing.T) {
	m := newMachine(t)
	for i, name := range map[int]string{2: "NVIDIA H200", 3: "NVIDIA Unknown Board"} {
		d := m.Devices[i].(*server.Device)
		d.GetNameFunc = func() (string, nvml.Return) { return name, nvml.SUCCESS }
		d.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) { return nvml.DeviceAttributes{}, nvml.ERROR_NOT_SUPPORTED }
	}
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{n.GPUs[2].Multiprocessors, n.GPUs[3].Multiprocessors, n.GPUs[4].Multiprocessors}; got[0] != 132 || got[1] != 0 || got[2] != 108 {
		t.Errorf("SMs of the H200, the unknown board, an A100: %v, want [132 0 108]", got)
	}
}
