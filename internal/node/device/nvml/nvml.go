// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package nvml is the device backend for real GPUs, through NVIDIA's go-nvml
// bindings. The NVML library (libnvidia-ml.so.1) is loaded at run time: on a
// machine without the NVIDIA driver, Open returns an error and nothing
// crashes.
package nvml

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	nvdev "github.com/NVIDIA/go-nvlib/pkg/nvlib/device"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Backend is the NVML device backend. It is safe for concurrent use.
type Backend struct {
	lib nvml.Interface
	cat *gpu.Catalog

	// LostPollInterval is how often a lost GPU is probed for recovery
	// (default 5s).
	LostPollInterval time.Duration
	// sysfs is the root of /sys, for the NUMA node of drivers that do not
	// report it; tests point it elsewhere.
	sysfs string
	// memV2 says the library has nvmlDeviceGetMemoryInfo_v2 (older
	// drivers lack it); go-nvml binds it lazily, so calling it on such a
	// library would abort the process.
	memV2 bool

	migMu   sync.Mutex // serialises MIG creation and destruction (mig.go)
	mu      sync.Mutex
	lastXID map[string]uint64
	gpm     map[string]nvml.GpmSample // previous GPM sample per GPU or MIG device UUID
	lost    map[int]bool              // GPUs (by index) found lost, to log each loss once
	closed  bool
}

var _ device.Backend = (*Backend)(nil)

// Open loads NVML and initialises it. Without the NVIDIA driver it returns
// an error saying so.
func Open() (*Backend, error) {
	return New(nvml.New())
}

// New initialises lib (the real library or a go-nvml mock) and returns a
// backend on it.
func New(lib nvml.Interface) (b *Backend, err error) {
	defer func() {
		// go-nvml panics if the library lacks a symbol it binds eagerly.
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("nvml: initialising NVML: %v", r)
		}
	}()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("nvml: NVML library (libnvidia-ml.so.1) not found: is the NVIDIA driver installed and the library on the loader path? (%v)", ret)
		}
		return nil, fmt.Errorf("nvml: initialising NVML: %v", ret)
	}
	memV2 := lib.Extensions().LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	return &Backend{lib: lib, memV2: memV2, cat: gpu.Default(), LostPollInterval: 5 * time.Second, sysfs: "/sys", lastXID: map[string]uint64{}, gpm: map[string]nvml.GpmSample{}, lost: map[int]bool{}}, nil
}

// Close frees GPM samples and shuts NVML down.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	for _, s := range b.gpm {
		s.Free()
	}
	if ret := b.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml: shutdown: %v", ret)
	}
	return nil
}

// nvErr is the error of an NVML call; errors.Is(err, errLost) holds when
// ret is ERROR_GPU_IS_LOST.
func nvErr(what string, ret nvml.Return) error {
	if ret == nvml.ERROR_GPU_IS_LOST {
		return fmt.Errorf("nvml: %s: %v: %w", what, ret, errLost)
	}
	return fmt.Errorf("nvml: %s: %v", what, ret)
}

// busID converts NVML's C string to Go.
func busID(p nvml.PciInfo) string {
	var sb strings.Builder
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// Discover queries every GPU, its MIG devices and the links between GPUs.
// One lost GPU (NVML answers ERROR_GPU_IS_LOST) does not fail discovery:
// when NVML still gives its UUID it is listed, with its index and UUID
// only, and reported lost in Node.Faults; without a UUID it is left out.
// Either way the loss is logged once.
func (b *Backend) Discover(ctx context.Context) (device.Node, error) {
	n, handles, err := b.discoverGPUs()
	if err != nil {
		return n, err
	}
	n.Links = b.links(handles, n.GPUs)
	return n, nil
}

// discoverGPUs is Discover without the links, which take the most NVML
// calls; Sample and WatchHealth need only the GPUs.
func (b *Backend) discoverGPUs() (device.Node, []nvml.Device, error) {
	var n device.Node
	v, ret := b.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return n, nil, nvErr("driver version", ret)
	}
	n.DriverVersion = v
	if cv, ret := b.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		n.CUDADriverMajor, n.CUDADriverMinor = cv/1000, cv%1000/10
	}
	count, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return n, nil, nvErr("device count", ret)
	}
	var handles []nvml.Device
	for i := 0; i < count; i++ {
		d, ret := b.lib.DeviceGetHandleByIndex(i)
		if ret == nvml.ERROR_GPU_IS_LOST {
			b.logLost(i, "", true)
			continue
		}
		if ret != nvml.SUCCESS {
			return n, nil, nvErr(fmt.Sprintf("GPU %d handle", i), ret)
		}
		g, err := b.gpu(i, d)
		if errors.Is(err, errLost) {
			b.logLost(i, g.UUID, true)
			if g.UUID == "" {
				continue
			}
			// Listed with its index and UUID; no handle, so no telemetry.
			n.GPUs = append(n.GPUs, device.GPU{Index: i, UUID: g.UUID, NUMANode: -1})
			n.Faults = append(n.Faults, device.HealthEvent{UUID: g.UUID, Kind: device.HealthLost, Time: time.Now()})
			handles = append(handles, nil)
			continue
		}
		if err != nil {
			return n, nil, err
		}
		b.logLost(i, g.UUID, false)
		handles = append(handles, d)
		n.GPUs = append(n.GPUs, g)
	}
	return n, handles, nil
}

// errLost marks a GPU that answers ERROR_GPU_IS_LOST.
var errLost = errors.New("GPU is lost")

// logLost logs GPU i's loss the first time discovery finds it lost, and
// its return the first time it answers again.
func (b *Backend) logLost(i int, uuid string, lost bool) {
	b.mu.Lock()
	was := b.lost[i]
	b.lost[i] = lost
	b.mu.Unlock()
	switch {
	case lost && !was && uuid == "":
		klog.ErrorS(nil, "GPU lost (NVML: ERROR_GPU_IS_LOST) and its UUID unknown: not advertised, no telemetry; the other GPUs are served", "index", i)
	case lost && !was:
		klog.ErrorS(nil, "GPU lost (NVML: ERROR_GPU_IS_LOST): advertised unhealthy, no telemetry; the other GPUs are served", "index", i, "uuid", uuid)
	case !lost && was:
		klog.InfoS("GPU answers again", "index", i, "uuid", uuid)
	}
}

func (b *Backend) gpu(i int, d nvml.Device) (device.GPU, error) {
	g := device.GPU{Index: i, NUMANode: -1}
	var ret nvml.Return
	if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		g.UUID = ""
		if ret == nvml.ERROR_GPU_IS_LOST {
			return g, errLost
		}
		return g, nvErr(fmt.Sprintf("GPU %d UUID", i), ret)
	}
	if g.ProductName, ret = d.GetName(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_GPU_IS_LOST {
			return g, errLost
		}
		return g, nvErr(fmt.Sprintf("GPU %d name", i), ret)
	}
	if m, ok := b.cat.FromProductName(g.ProductName); ok {
		g.Model = m.Name
	}
	if nd, err := nvdev.New(b.lib).NewDevice(d); err == nil {
		g.Brand, _ = nd.GetBrandAsString() // "" when NVML does not tell
	}
	if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemoryMiB = int64(mem.Total / (1 << 20))
	}
	if p, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
		g.PCIBusID = busID(p)
	}
	if m, ret := d.GetMinorNumber(); ret == nvml.SUCCESS {
		g.Minor = m
	}
	if numa, ret := d.GetNumaNodeId(); ret == nvml.SUCCESS {
		g.NUMANode = numa
	} else if g.PCIBusID != "" {
		g.NUMANode = b.sysfsNUMA(g.PCIBusID)
	}
	g.ComputeMajor, g.ComputeMinor, _ = d.GetCudaComputeCapability()
	if a, ret := d.GetAttributes(); ret == nvml.SUCCESS {
		g.Multiprocessors = int(a.MultiprocessorCount)
	}
	if g.Multiprocessors == 0 {
		// NOT_SUPPORTED on a whole H200 (issue 35): the product's cited count.
		g.Multiprocessors = gpu.Multiprocessors(g.ProductName)
	}
	if cur, _, ret := d.GetMigMode(); ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
		g.MIGEnabled = true
		migs, err := b.migDevices(d)
		if errors.Is(err, errLost) {
			return g, errLost
		}
		if err != nil {
			return g, fmt.Errorf("nvml: GPU %d MIG devices: %w", i, err)
		}
		g.MIG = migs
	}
	return g, nil
}

// sysfsNUMA reads the NUMA node of a PCI device from sysfs; -1 if unknown.
func (b *Backend) sysfsNUMA(bus string) int {
	// NVML's bus IDs have an 8-digit domain; sysfs uses 4 digits.
	id := strings.ToLower(bus)
	if len(id) == 16 {
		id = id[4:]
	}
	data, err := os.ReadFile(filepath.Join(b.sysfs, "bus/pci/devices", id, "numa_node"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func (b *Backend) migDevices(d nvml.Device) ([]device.MIGDevice, error) {
	max, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, nvErr("max MIG device count", ret)
	}
	var out []device.MIGDevice
	for i := 0; i < max; i++ {
		md, ret := d.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("MIG device %d handle", i), ret)
		}
		var m device.MIGDevice
		if m.UUID, ret = md.GetUUID(); ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("MIG device %d UUID", i), ret)
		}
		if m.GPUInstanceID, ret = md.GetGpuInstanceId(); ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("MIG device %d GPU instance", i), ret)
		}
		if m.ComputeInstanceID, ret = md.GetComputeInstanceId(); ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("MIG device %d compute instance", i), ret)
		}
		if a, ret := md.GetAttributes(); ret == nvml.SUCCESS {
			m.Multiprocessors = int(a.MultiprocessorCount)
			m.MemoryMiB = int64(a.MemorySizeMB)
		}
		if mem, ret := md.GetMemoryInfo(); ret == nvml.SUCCESS && m.MemoryMiB == 0 {
			m.MemoryMiB = int64(mem.Total / (1 << 20))
		}
		// NVIDIA's name (go-nvlib MigDevice.GetProfile, as NVIDIA's device
		// plugin and gpu-feature-discovery call it): GPU and compute instance
		// profiles, the MIG device's memory against the GPU's total
		// (device.MIGProfileName), not a table of known models.
		mig, err := nvdev.New(b.lib).NewMigDevice(md)
		if err != nil {
			return nil, fmt.Errorf("nvml: MIG device %d (%s): %w", i, m.UUID, err)
		}
		p, err := mig.GetProfile()
		if err != nil {
			return nil, fmt.Errorf("nvml: MIG device %d (%s) profile: %w", i, m.UUID, err)
		}
		m.Profile = p.String()
		out = append(out, m)
	}
	return out, nil
}

// links works out the link matrix: NVLinks counted per peer (links to
// NVSwitches connect every pair of switch-attached GPUs, with the smaller
// link count of the two), else the PCIe topology level.
func (b *Backend) links(hs []nvml.Device, gpus []device.GPU) [][]device.Link {
	n := len(hs)
	byBus := map[string]int{}
	for i, g := range gpus {
		byBus[strings.ToLower(g.PCIBusID)] = i
	}
	direct := make([][]int, n)
	switchLinks := make([]int, n)
	for i, d := range hs {
		direct[i] = make([]int, n)
		if d == nil {
			continue // lost
		}
		for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
			st, ret := d.GetNvLinkState(l)
			if ret != nvml.SUCCESS {
				if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
					break
				}
				continue
			}
			if st != nvml.FEATURE_ENABLED {
				continue
			}
			if t, ret := d.GetNvLinkRemoteDeviceType(l); ret == nvml.SUCCESS && t == nvml.NVLINK_DEVICE_TYPE_SWITCH {
				switchLinks[i]++
				continue
			}
			p, ret := d.GetNvLinkRemotePciInfo(l)
			if ret != nvml.SUCCESS {
				continue
			}
			if j, ok := byBus[strings.ToLower(busID(p))]; ok && j != i {
				direct[i][j]++
			}
		}
	}
	m := make([][]device.Link, n)
	for i := range m {
		m[i] = make([]device.Link, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			nv := max(direct[i][j], direct[j][i])
			if switchLinks[i] > 0 && switchLinks[j] > 0 {
				nv += min(switchLinks[i], switchLinks[j])
			}
			var l device.Link
			if nv > 0 {
				l = device.Link{Type: device.LinkNVLink, NVLinks: nv}
			} else if hs[i] == nil || hs[j] == nil {
				// A lost GPU: the link is unknown.
			} else if lvl, ret := hs[i].GetTopologyCommonAncestor(hs[j]); ret == nvml.SUCCESS {
				l = device.Link{Type: topoLevel(lvl)}
			}
			m[i][j], m[j][i] = l, l
		}
	}
	return m
}

func topoLevel(l nvml.GpuTopologyLevel) device.LinkType {
	switch {
	case l <= nvml.TOPOLOGY_SINGLE:
		// TOPOLOGY_INTERNAL (one board) is counted as PIX.
		return device.LinkPCIeSwitch
	case l <= nvml.TOPOLOGY_MULTIPLE:
		return device.LinkMultiSwitch
	case l <= nvml.TOPOLOGY_HOSTBRIDGE:
		return device.LinkHostBridge
	case l <= nvml.TOPOLOGY_NODE:
		return device.LinkSameSocket
	}
	return device.LinkCrossSocket
}

// handles returns the GPU handles by UUID.
func (b *Backend) handles() (map[string]nvml.Device, error) {
	count, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nvErr("device count", ret)
	}
	out := make(map[string]nvml.Device, count)
	for i := 0; i < count; i++ {
		d, ret := b.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		if u, ret := d.GetUUID(); ret == nvml.SUCCESS {
			out[u] = d
		}
	}
	return out, nil
}

// xidDevice returns the UUID of the device an XID on GPU gpuUUID names:
// the MIG device of GPU instance gi and compute instance ci, or the GPU
// itself when gi is math.MaxUint32 (NVML's "not a MIG device's") or no
// MIG device matches. The MIG devices are looked up live: the ones of n,
// discovered when the watch started, may since have been destroyed and
// their instance IDs reused (MIG devices created on demand for DRA
// claims); n's serve only when the live lookup fails.
func (b *Backend) xidDevice(ctx context.Context, n device.Node, gpuUUID string, gi, ci uint32) string {
	g, _, ok := n.GPUByUUID(gpuUUID)
	if !ok || gi == math.MaxUint32 {
		return gpuUUID
	}
	migs := g.MIG
	if live, err := b.MIGInstances(ctx, gpuUUID); err == nil {
		migs = make([]device.MIGDevice, 0, len(live))
		for _, in := range live {
			migs = append(migs, device.MIGDevice{UUID: in.UUID, GPUInstanceID: in.GPUInstanceID, ComputeInstanceID: in.ComputeInstanceID})
		}
	} else {
		klog.ErrorS(err, "Looking up the MIG device of an XID; taking the one discovered at the start", "gpu", gpuUUID, "gpuInstance", gi, "computeInstance", ci)
	}
	for _, m := range migs {
		if m.GPUInstanceID == int(gi) && m.ComputeInstanceID == int(ci) && m.UUID != "" {
			return m.UUID
		}
	}
	return gpuUUID
}

// WatchHealth registers for critical XID events on every GPU and reports
// them until ctx is done. An XID names the MIG device when NVML attributes
// it to one. GPUs lost when it starts (Node.Faults of discovery) are
// reported lost first. A GPU whose wait fails with ERROR_GPU_IS_LOST is
// reported lost, probed every LostPollInterval, and reported recovered
// when it answers again, and so are its MIG devices: the GPU came back
// reset, so their XIDs are gone too. NVML has no event for the end of an
// XID condition; a GPU with a critical XID stays unhealthy until it is
// lost and found again or the agent restarts after a GPU reset.
func (b *Backend) WatchHealth(ctx context.Context, ch chan<- device.HealthEvent) error {
	n, _, err := b.discoverGPUs()
	if err != nil {
		return err
	}
	set, ret := b.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return nvErr("creating event set", ret)
	}
	defer set.Free()
	if err := b.registerXIDs(&n, set); err != nil {
		return err
	}
	send := healthSender(ctx, ch)
	lost := map[string]bool{}
	for _, ev := range n.Faults {
		if ev.Kind == device.HealthLost {
			lost[ev.UUID] = true
			if err := send(ev); err != nil {
				return err
			}
		}
	}
	lastProbe := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, ret := set.Wait(500)
		switch ret {
		case nvml.SUCCESS:
			if err := b.sendXID(ctx, &n, data, send); err != nil {
				return err
			}
		case nvml.ERROR_TIMEOUT:
		case nvml.ERROR_GPU_IS_LOST:
			// The event set does not say which GPU: probe them all.
			lastProbe = time.Time{}
		default:
			// An unexpected error: avoid a busy loop.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
		if time.Since(lastProbe) >= b.LostPollInterval {
			lastProbe = time.Now()
			if err := b.probeLost(&n, lost, send); err != nil {
				return err
			}
		}
	}
}

// registerXIDs registers the GPUs of n for critical XID events on set; a
// GPU that does not support them is only watched for loss.
func (b *Backend) registerXIDs(n *device.Node, set nvml.EventSet) error {
	hs, err := b.handles()
	if err != nil {
		return err
	}
	for _, g := range n.GPUs {
		d := hs[g.UUID]
		if d == nil {
			continue
		}
		if ret := d.RegisterEvents(nvml.EventTypeXidCriticalError, set); ret != nvml.SUCCESS {
			// Not supported on this GPU: it is only watched for loss.
			continue
		}
	}
	return nil
}

// healthSender returns a send of health events to ch that gives up when
// ctx is done.
func healthSender(ctx context.Context, ch chan<- device.HealthEvent) func(device.HealthEvent) error {
	return func(ev device.HealthEvent) error {
		select {
		case ch <- ev: // first: an event already read is not dropped for a ctx just done
			return nil
		default:
		}
		select {
		case ch <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sendXID records and sends the critical XID of an event (data), on the
// MIG device NVML attributes it to if any; other events are ignored.
func (b *Backend) sendXID(ctx context.Context, n *device.Node, data nvml.EventData, send func(device.HealthEvent) error) error {
	if data.EventType&nvml.EventTypeXidCriticalError == 0 || data.Device == nil {
		return nil
	}
	uuid, ret := data.Device.GetUUID()
	if ret != nvml.SUCCESS {
		return nil
	}
	uuid = b.xidDevice(ctx, *n, uuid, data.GpuInstanceId, data.ComputeInstanceId)
	b.mu.Lock()
	b.lastXID[uuid] = data.EventData
	b.mu.Unlock()
	return send(device.HealthEvent{UUID: uuid, Kind: device.HealthXID, XID: data.EventData, Time: time.Now()})
}

// probeLost probes every GPU of n and sends what changed since the last
// probe: a GPU lost, or one lost (lost) that answers again, recovered.
func (b *Backend) probeLost(n *device.Node, lost map[string]bool, send func(device.HealthEvent) error) error {
	var err error
	for _, g := range n.GPUs {
		ok := b.probe(g.UUID)
		switch {
		case !ok && !lost[g.UUID]:
			lost[g.UUID] = true
			err = send(device.HealthEvent{UUID: g.UUID, Kind: device.HealthLost, Time: time.Now()})
		case ok && lost[g.UUID]:
			delete(lost, g.UUID)
			err = b.sendRecovered(g.UUID, send)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sendRecovered reports GPU uuid and its MIG devices (as discovered now)
// recovered.
func (b *Backend) sendRecovered(uuid string, send func(device.HealthEvent) error) error {
	now := time.Now()
	if err := send(device.HealthEvent{UUID: uuid, Kind: device.HealthRecovered, Time: now}); err != nil {
		return err
	}
	n, _, err := b.discoverGPUs()
	if err != nil {
		return nil // the GPU's MIG devices are unknown: they keep their state
	}
	if g, _, ok := n.GPUByUUID(uuid); ok {
		for _, m := range g.MIG {
			if err := send(device.HealthEvent{UUID: m.UUID, Kind: device.HealthRecovered, Time: now}); err != nil {
				return err
			}
		}
	}
	return nil
}

// probe reports whether the GPU answers.
func (b *Backend) probe(uuid string) bool {
	d, ret := b.lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return false
	}
	_, ret = d.GetTemperature(nvml.TEMPERATURE_GPU)
	return ret != nvml.ERROR_GPU_IS_LOST && ret != nvml.ERROR_UNKNOWN
}

// Sample reads every GPU's telemetry and every MIG device's memory, last
// XID and, on GPUs with GPU Performance Monitoring (Hopper and later), its
// GPU instance's profiling ratios (nvmlGpmMigSampleGet). A value the device
// does not support stays nil: NVML has no utilisation, clocks, power or
// encoder readings for a MIG device. GPM profiling ratios need two samples:
// the first call on a device leaves them nil.
func (b *Backend) Sample(ctx context.Context) ([]device.Sample, error) {
	n, hs, err := b.discoverGPUs()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []device.Sample
	for i, g := range n.GPUs {
		d := hs[i]
		if d == nil {
			continue // lost: no telemetry
		}
		s := device.Sample{UUID: g.UUID, Time: now}
		u, ret := d.GetUtilizationRates()
		if ret == nvml.ERROR_GPU_IS_LOST {
			continue // lost since discovery
		}
		if ret == nvml.SUCCESS {
			s.GPUUtil, s.MemCopyUtil = f(float64(u.Gpu)), f(float64(u.Memory))
		}
		readTelemetry(d, b.memV2, &s)
		b.mu.Lock()
		s.LastXID = f(float64(b.lastXID[g.UUID]))
		b.mu.Unlock()
		gpm := gpmSupported(d)
		if gpm {
			b.sampleGPM(g.UUID, func(smp nvml.GpmSample) nvml.Return { return smp.Get(d) }, &s)
		}
		out = append(out, s)
		for i := range g.MIG {
			ms := b.sampleMIG(d, g.MIG[i], now)
			if gpm {
				gi := g.MIG[i].GPUInstanceID
				b.sampleGPM(ms.UUID, func(smp nvml.GpmSample) nvml.Return { return smp.MigGet(d, gi) }, &ms)
			}
			out = append(out, ms)
		}
	}
	return out, nil
}

// readTelemetry reads GPU d's memory, temperature, power, energy, clocks,
// PCIe, encoder and decoder, NVLink, ECC and row remapping into s; a
// reading d does not support stays nil. v2: see readMemory.
func readTelemetry(d nvml.Device, v2 bool, s *device.Sample) {
	readMemory(d, v2, s)
	if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		s.GPUTemp = f(float64(t))
	}
	if p, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
		s.PowerW = f(float64(p) / 1000)
	}
	if e, ret := d.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		s.TotalEnergyMJ = f(float64(e))
	}
	if c, ret := d.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		s.SMClockMHz = f(float64(c))
	}
	if c, ret := d.GetClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS {
		s.MemClockMHz = f(float64(c))
	}
	if r, ret := d.GetPcieReplayCounter(); ret == nvml.SUCCESS {
		s.PCIeReplay = f(float64(r))
	}
	if u, _, ret := d.GetEncoderUtilization(); ret == nvml.SUCCESS {
		s.EncUtil = f(float64(u))
	}
	if u, _, ret := d.GetDecoderUtilization(); ret == nvml.SUCCESS {
		s.DecUtil = f(float64(u))
	}
	// NVML's PCIe throughput is KiB/s over a 20 ms window.
	if v, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); ret == nvml.SUCCESS {
		s.PCIeTxBytesPerSec = f(float64(v) * 1024)
	}
	if v, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); ret == nvml.SUCCESS {
		s.PCIeRxBytesPerSec = f(float64(v) * 1024)
	}
	s.NVLinkBandwidthTotal = fieldValue(d, nvml.FI_DEV_NVLINK_BANDWIDTH_C0_TOTAL)
	s.ECCSBEVolatile = ecc(d, nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
	s.ECCDBEVolatile = ecc(d, nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	s.ECCSBEAggregate = ecc(d, nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC)
	s.ECCDBEAggregate = ecc(d, nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
	if c, u, pending, failed, ret := d.GetRemappedRows(); ret == nvml.SUCCESS {
		s.RowRemapCorrectable, s.RowRemapUncorrectable = f(float64(c)), f(float64(u))
		s.RowRemapPending, s.RowRemapFailure = f(b2f(pending)), f(b2f(failed))
	}
}

// readMemory reads the frame buffer of GPU or MIG device d into s, MiB, as
// DCGM reports it (DCGM_FI_DEV_FB_USED, _FB_FREE, _FB_RESERVED) and
// nvidia-smi shows it: from nvmlDeviceGetMemoryInfo_v2, whose used excludes
// the memory the driver reserves, so used + free + reserved = total. On a
// driver without v2 (v2 false: the library lacks the symbol; or v2 returns
// anything but NVML_SUCCESS) it falls back to nvmlDeviceGetMemoryInfo (v1),
// whose used includes the reserved memory, and leaves FBReservedMiB nil. Measured on an H200 (driver 580.159.04,
// idle): v1 used 615.1 MiB, v2 used 0 and reserved 615 MiB, nvidia-smi
// used 0 (issue 35).
func readMemory(d nvml.Device, v2 bool, s *device.Sample) {
	const mib = 1 << 20
	if v2 {
		if m, ret := d.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
			s.FBUsedMiB, s.FBFreeMiB = f(float64(m.Used)/mib), f(float64(m.Free)/mib)
			s.FBReservedMiB = f(float64(m.Reserved) / mib)
			return
		}
	}
	if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		s.FBUsedMiB, s.FBFreeMiB = f(float64(m.Used)/mib), f(float64(m.Free)/mib)
	}
}

func (b *Backend) sampleMIG(parent nvml.Device, m device.MIGDevice, now time.Time) device.Sample {
	s := device.Sample{UUID: m.UUID, Time: now}
	max, ret := parent.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return s
	}
	for i := 0; i < max; i++ {
		md, ret := parent.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		if u, ret := md.GetUUID(); ret != nvml.SUCCESS || u != m.UUID {
			continue
		}
		readMemory(md, b.memV2, &s)
		b.mu.Lock()
		s.LastXID = f(float64(b.lastXID[m.UUID]))
		b.mu.Unlock()
		break
	}
	return s
}

// gpmSupported reports whether the GPU supports GPU Performance Monitoring
// (Hopper and later).
func gpmSupported(d nvml.Device) bool {
	sup, ret := d.GpmQueryDeviceSupport()
	return ret == nvml.SUCCESS && sup.IsSupportedDevice != 0
}

// sampleGPM fills the profiling ratios of the GPU or MIG device uuid from
// the GPU Performance Monitoring metrics between its previous sample and
// this one; get takes the sample (nvmlGpmSampleGet for a GPU,
// nvmlGpmMigSampleGet for a MIG device's GPU instance).
func (b *Backend) sampleGPM(uuid string, get func(nvml.GpmSample) nvml.Return, s *device.Sample) {
	cur, ret := b.lib.GpmSampleAlloc()
	if ret != nvml.SUCCESS {
		return
	}
	if ret := get(cur); ret != nvml.SUCCESS {
		cur.Free()
		return
	}
	b.mu.Lock()
	prev := b.gpm[uuid]
	b.gpm[uuid] = cur
	b.mu.Unlock()
	if prev == nil {
		return
	}
	defer prev.Free()
	ids := []nvml.GpmMetricId{nvml.GPM_METRIC_GRAPHICS_UTIL, nvml.GPM_METRIC_SM_UTIL, nvml.GPM_METRIC_ANY_TENSOR_UTIL, nvml.GPM_METRIC_DRAM_BW_UTIL}
	mg := &nvml.GpmMetricsGetType{NumMetrics: uint32(len(ids)), Sample1: prev, Sample2: cur}
	for i, id := range ids {
		mg.Metrics[i].MetricId = uint32(id)
	}
	if ret := b.lib.GpmMetricsGet(mg); ret != nvml.SUCCESS {
		return
	}
	dst := []**float64{&s.ProfGrEngineActive, &s.ProfSMActive, &s.ProfTensorActive, &s.ProfDRAMActive}
	for i := range ids {
		if mg.Metrics[i].NvmlReturn == uint32(nvml.SUCCESS) {
			// GPM reports percent; the profiling fields are ratios.
			*dst[i] = f(mg.Metrics[i].Value / 100)
		}
	}
}

// fieldValue reads one NVML field of the device as a number; nil when it
// is not supported.
func fieldValue(d nvml.Device, id uint32) *float64 {
	v := []nvml.FieldValue{{FieldId: id}}
	if ret := d.GetFieldValues(v); ret != nvml.SUCCESS || nvml.Return(v[0].NvmlReturn) != nvml.SUCCESS {
		return nil
	}
	raw := v[0].Value
	u := binary.NativeEndian.Uint64(raw[:])
	switch nvml.ValueType(v[0].ValueType) {
	case nvml.VALUE_TYPE_DOUBLE:
		return f(math.Float64frombits(u))
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return f(float64(binary.NativeEndian.Uint32(raw[:4])))
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return f(float64(u))
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return f(float64(int64(u)))
	case nvml.VALUE_TYPE_SIGNED_INT:
		return f(float64(int32(binary.NativeEndian.Uint32(raw[:4]))))
	}
	return nil
}

func ecc(d nvml.Device, t nvml.MemoryErrorType, c nvml.EccCounterType) *float64 {
	v, ret := d.GetTotalEccErrors(t, c)
	if ret != nvml.SUCCESS {
		return nil
	}
	return f(float64(v))
}

func f(v float64) *float64 { return &v }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
