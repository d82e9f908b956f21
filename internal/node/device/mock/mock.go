// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Backend is the mock device backend. It is safe for concurrent use.
type Backend struct {
	profile    *Profile
	node       device.Node
	faultsFile string
	// migStateFile keeps the live MIG layouts (Options.MIGStateFile).
	migStateFile string
	start        time.Time
	now          func() time.Time

	mu      sync.Mutex
	step    int               // Sample calls so far
	lastXID map[string]uint64 // last XID per GPU or MIG device UUID

	migMu sync.Mutex
	migs  map[string]*migState // live MIG layouts by GPU UUID, once touched (mig.go)
}

var _ device.Backend = (*Backend)(nil)

// Options configure a mock backend.
type Options struct {
	// FaultsFile, when set, is a YAML file of current faults that
	// WatchHealth watches (see Faults); it need not exist yet.
	FaultsFile string
	// MIGStateFile, when set, is a JSON file holding the MIG devices
	// created and destroyed through MIGManager, read by New and written
	// after each change, so that they outlive the process as a GPU's do
	// (migstate.go); it need not exist yet. Empty: in memory only.
	MIGStateFile string
	// Now is the clock (default time.Now); tests set it to make energy
	// readings exact.
	Now func() time.Time
}

// New returns a backend serving profile p. The faults file's directory must
// exist (the file itself need not).
func New(p *Profile, opts Options) (*Backend, error) {
	n, err := p.Node()
	if err != nil {
		return nil, fmt.Errorf("mock profile %s: %w", p.Name, err)
	}
	if opts.FaultsFile != "" {
		dir := filepath.Dir(opts.FaultsFile)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("mock faults file %s: directory %s does not exist", opts.FaultsFile, dir)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	b := &Backend{profile: p, node: n, faultsFile: opts.FaultsFile, migStateFile: opts.MIGStateFile, start: now(), now: now, lastXID: map[string]uint64{}}
	if b.migStateFile != "" {
		if err := b.loadMIGState(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Open loads a built-in profile by name or a profile file and returns its
// backend.
func Open(nameOrFile string, opts Options) (*Backend, error) {
	p, err := LoadProfile(nameOrFile)
	if err != nil {
		return nil, err
	}
	return New(p, opts)
}

// Discover returns the profile's node, with the faults file's current
// faults in Node.Faults. Each call returns a fresh copy. A faults file
// that does not parse is logged and ignored, as WatchHealth does.
func (b *Backend) Discover(ctx context.Context) (device.Node, error) {
	n, err := b.profile.Node()
	if err != nil {
		return n, err
	}
	b.overlayMIG(&n)
	faults := b.currentFaults()
	now := b.now()
	for _, f := range faults {
		ev := device.HealthEvent{UUID: f.UUID, Kind: device.HealthXID, XID: f.XID, Time: now}
		if f.Lost {
			ev.Kind = device.HealthLost
		}
		n.Faults = append(n.Faults, ev)
	}
	sort.Slice(n.Faults, func(i, j int) bool { return n.Faults[i].UUID < n.Faults[j].UUID })
	return n, nil
}

// currentFaults returns the faults file's faults of the profile's devices;
// none without a faults file or when it does not parse (logged).
func (b *Backend) currentFaults() map[string]Fault {
	if b.faultsFile == "" {
		return map[string]Fault{}
	}
	faults, err := b.readFaults()
	if err != nil {
		klog.ErrorS(err, "Ignoring faults file", "file", b.faultsFile)
		return map[string]Fault{}
	}
	for uuid := range faults {
		if _, _, ok := b.node.GPUByUUID(uuid); !ok {
			delete(faults, uuid)
		}
	}
	return faults
}

// Close does nothing; it exists to satisfy device.Backend.
func (b *Backend) Close() error { return nil }

// Discover opens the built-in profile or profile file nameOrFile and returns
// what discovery reports for it.
func Discover(nameOrFile string) (device.Node, error) {
	b, err := Open(nameOrFile, Options{})
	if err != nil {
		return device.Node{}, err
	}
	defer b.Close()
	return b.Discover(context.Background())
}

// DiscoverProfile parses profile YAML data (file names it in errors) and
// returns what discovery reports for it.
func DiscoverProfile(file string, data []byte) (device.Node, error) {
	p, err := ParseProfile(file, data)
	if err != nil {
		return device.Node{}, err
	}
	b, err := New(p, Options{})
	if err != nil {
		return device.Node{}, err
	}
	defer b.Close()
	return b.Discover(context.Background())
}

// Faults is the content of a faults file: the faults present now. When the
// file changes, a fault that appears is reported as an XID (or lost) event
// and one that disappears as recovered; an absent file means no faults.
//
//	faults:
//	  - uuid: GPU-...   # a GPU or MIG device UUID
//	    xid: 79
//	  - uuid: GPU-...
//	    lost: true
type Faults struct {
	Faults []Fault `json:"faults"`
}

// Fault is one current fault of a device.
type Fault struct {
	// UUID is the GPU or MIG device UUID.
	UUID string `json:"uuid"`
	// XID is the XID error code (exclusive with Lost).
	XID uint64 `json:"xid,omitempty"`
	// Lost marks the device as fallen off the bus.
	Lost bool `json:"lost,omitempty"`
}

// ParseFaults parses a faults file's content; file is used in errors.
// Unknown fields are rejected; UUIDs must be unique and each fault must be
// either an XID or lost.
func ParseFaults(file string, data []byte) (map[string]Fault, error) {
	var f Faults
	chk, err := decodeStrict(file, data, &f)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Fault, len(f.Faults))
	for i, x := range f.Faults {
		switch {
		case x.UUID == "":
			return nil, chk.Locate(file, fmt.Errorf("faults[%d].uuid: required", i))
		case (x.XID == 0) == !x.Lost:
			return nil, chk.Locate(file, fmt.Errorf("faults[%d]: give exactly one of xid and lost", i))
		}
		if _, dup := out[x.UUID]; dup {
			return nil, chk.Locate(file, fmt.Errorf("faults[%d].uuid: %q is listed twice", i, x.UUID))
		}
		out[x.UUID] = x
	}
	return out, nil
}

// readFaults reads the faults file; a missing file is no faults.
func (b *Backend) readFaults() (map[string]Fault, error) {
	data, err := os.ReadFile(b.faultsFile)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Fault{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseFaults(b.faultsFile, data)
}

// WatchHealth reports the faults file's changes as health events until ctx
// is done. Faults present when it starts are reported first, so a restarted
// agent sees them again. Without a faults file it only waits for ctx. A
// faults file that does not parse is logged and ignored until it changes.
func (b *Backend) WatchHealth(ctx context.Context, ch chan<- device.HealthEvent) error {
	if b.faultsFile == "" {
		<-ctx.Done()
		return ctx.Err()
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("mock faults file: %w", err)
	}
	defer w.Close()
	dir := filepath.Dir(b.faultsFile)
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("mock faults file: watching %s: %w", dir, err)
	}
	cur := map[string]Fault{}
	update := func() error {
		next, err := b.readFaults()
		if err != nil {
			klog.ErrorS(err, "Ignoring faults file", "file", b.faultsFile)
			return nil
		}
		for uuid := range next {
			if _, _, ok := b.node.GPUByUUID(uuid); !ok {
				klog.ErrorS(nil, "Ignoring fault of a device the profile does not have", "file", b.faultsFile, "uuid", uuid)
				delete(next, uuid)
			}
		}
		for _, ev := range b.diff(cur, next) {
			select {
			case ch <- ev:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		cur = next
		return nil
	}
	if err := update(); err != nil {
		return err
	}
	base := filepath.Clean(b.faultsFile)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-w.Errors:
			klog.ErrorS(err, "Watching faults file", "file", b.faultsFile)
		case ev := <-w.Events:
			if filepath.Clean(ev.Name) != base {
				continue
			}
			if err := update(); err != nil {
				return err
			}
		}
	}
}

// diff turns a change of the fault set into events, sorted by UUID.
func (b *Backend) diff(cur, next map[string]Fault) []device.HealthEvent {
	now := b.now()
	var evs []device.HealthEvent
	for uuid, f := range next {
		if old, ok := cur[uuid]; ok && old == f {
			continue
		}
		ev := device.HealthEvent{UUID: uuid, Kind: device.HealthXID, XID: f.XID, Time: now}
		if f.Lost {
			ev.Kind = device.HealthLost
		} else {
			// The device's own last XID, as the nvml backend records an
			// XID NVML attributes to a MIG device on that device.
			b.mu.Lock()
			b.lastXID[uuid] = f.XID
			b.mu.Unlock()
		}
		evs = append(evs, ev)
	}
	for uuid := range cur {
		if _, ok := next[uuid]; !ok {
			evs = append(evs, device.HealthEvent{UUID: uuid, Kind: device.HealthRecovered, Time: now})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].UUID < evs[j].UUID })
	return evs
}

// Sample returns one reading per GPU and per MIG device, what the nvml
// backend reads from such a GPU, except the devices the faults file marks
// lost (a lost GPU takes its MIG devices): like a GPU fallen off the bus,
// they give no telemetry. GPU utilisation is the profile's curve at the
// current step (the n-th call reads value n mod len); energy is PowerW
// times the seconds since the backend started, in millijoules, and the
// NVLink bandwidth counter NVLinkBandwidthPerSec times those seconds. GPUs
// of compute capability 9 and later (Hopper, Blackwell) have GPU Performance
// Monitoring: their profiling ratios are the utilisation (engine and SM
// active) and half of it (tensor and DRAM active). A MIG device reports
// its share of the frame buffer, its last XID and, on those GPUs only, the
// same profiling ratios (NVML's per-GPU-instance GPM samples); never
// DCGM_FI_DEV_GPU_UTIL, which NVML and dcgm-exporter have only for whole
// GPUs. A GPU in MIG mode has no utilisation, memory copy utilisation or
// profiling ratios of its own.
func (b *Backend) Sample(ctx context.Context) ([]device.Sample, error) {
	faults := b.currentFaults()
	b.mu.Lock()
	step := b.step
	b.step++
	b.mu.Unlock()
	now := b.now()
	secs := now.Sub(b.start).Seconds()
	var out []device.Sample
	specs := b.specs()
	for i, g := range b.node.GPUs {
		if faults[g.UUID].Lost {
			continue
		}
		t := specs[i].Telemetry
		util := 0.0
		if len(t.UtilizationPct) > 0 {
			util = t.UtilizationPct[step%len(t.UtilizationPct)]
		}
		temp, memTemp, power := or(t.TemperatureC, 40), or(t.MemoryTemperatureC, 45), or(t.PowerW, 100)
		reserved := min(t.MemoryReservedMiB, float64(g.MemoryMiB))
		used := min(t.MemoryUsedMiB, float64(g.MemoryMiB)-reserved)
		b.mu.Lock()
		xid := float64(b.lastXID[g.UUID])
		b.mu.Unlock()
		s := device.Sample{
			UUID: g.UUID, Time: now,
			GPUUtil: f(util), MemCopyUtil: f(t.MemCopyUtilPct),
			FBUsedMiB: f(used), FBFreeMiB: f(float64(g.MemoryMiB) - reserved - used), FBReservedMiB: f(reserved),
			GPUTemp: f(temp), MemoryTemp: f(memTemp),
			PowerW: f(power), TotalEnergyMJ: f(power * secs * 1000),
			SMClockMHz: f(or(t.SMClockMHz, 1410)), MemClockMHz: f(or(t.MemClockMHz, 1215)),
			LastXID: f(xid), PCIeReplay: f(t.PCIeReplay),
			ECCSBEVolatile: f(t.ECCSBE), ECCDBEVolatile: f(t.ECCDBE),
			ECCSBEAggregate: f(t.ECCSBE), ECCDBEAggregate: f(t.ECCDBE),
			RowRemapCorrectable: f(t.RowRemapCorrectable), RowRemapUncorrectable: f(t.RowRemapUncorrectable),
			RowRemapPending: f(0), RowRemapFailure: f(0),
			EncUtil: f(t.EncUtilPct), DecUtil: f(t.DecUtilPct),
			PCIeTxBytesPerSec: f(t.PCIeTxBytesPerSec), PCIeRxBytesPerSec: f(t.PCIeRxBytesPerSec),
		}
		if b.hasNVLink(i) {
			s.NVLinkBandwidthTotal = f(t.NVLinkBandwidthPerSec * secs)
		}
		gpm := g.ComputeMajor >= 9
		switch {
		case g.MIGEnabled:
			// NVML has no utilisation rates for a GPU in MIG mode; its
			// activity is its MIG devices'.
			s.GPUUtil, s.MemCopyUtil = nil, nil
		case gpm:
			setProf(&s, util)
		}
		out = append(out, s)
		for _, m := range g.MIG {
			if faults[m.UUID].Lost {
				continue
			}
			mu := used * float64(m.MemoryMiB) / float64(max(g.MemoryMiB, 1))
			b.mu.Lock()
			mxid := float64(b.lastXID[m.UUID])
			b.mu.Unlock()
			ms := device.Sample{
				UUID: m.UUID, Time: now,
				FBUsedMiB: f(mu), FBFreeMiB: f(float64(m.MemoryMiB) - mu), LastXID: f(mxid),
			}
			if gpm {
				setProf(&ms, util)
			}
			out = append(out, ms)
		}
	}
	return out, nil
}

// setProf sets the profiling ratios of a GPM sample at utilisation util
// percent.
func setProf(s *device.Sample, util float64) {
	s.ProfGrEngineActive, s.ProfSMActive = f(util/100), f(util/100)
	s.ProfTensorActive, s.ProfDRAMActive = f(util/200), f(util/200)
}

// hasNVLink reports whether GPU i has an NVLink to another GPU.
func (b *Backend) hasNVLink(i int) bool {
	if i >= len(b.node.Links) {
		return false
	}
	for j, l := range b.node.Links[i] {
		if j != i && l.Type == device.LinkNVLink {
			return true
		}
	}
	return false
}

// specs expands the profile's GPU entries to one per GPU.
func (b *Backend) specs() []GPUSpec {
	var out []GPUSpec
	for _, s := range b.profile.GPUs {
		for c := 0; c < max(s.Count, 1); c++ {
			out = append(out, s)
		}
	}
	return out
}

func f(v float64) *float64 { return &v }

func or(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
