// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/health"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// Label sets. Every series carries the device labels (and the label fields
// selected, e.g. DCGM_FI_DRIVER_VERSION); MIG devices add the GPU instance
// labels, attributed series the pod labels, and under Options.VirtualGPUs a
// time-slicing replica's series add vgpu. The XID field's series add
// err_code and err_msg.
var (
	deviceLabels = []string{metrics.LabelGPU, metrics.LabelUUID, metrics.LabelPCIBusID, metrics.LabelDevice, metrics.LabelModelName, metrics.LabelHostname}
	migLabels    = []string{metrics.LabelGPUInstanceProfile, metrics.LabelGPUInstanceID}
	podLabels    = []string{metrics.LabelPod, metrics.LabelNamespace, metrics.LabelContainer}
	vgpuLabel    = metrics.LabelVGPU
	xidLabels    = []string{metrics.LabelErrCode, metrics.LabelErrMsg}
)

// A variant is one of the label sets: bit 0 set for MIG devices, bit 1 for
// series attributed to a pod, bit 2 for a replica's series (with bit 1).
type variant int

const (
	variantMIG variant = 1 << iota
	variantPod
	variantVGPU
	variants = 8
)

// labelNames returns the label names of variant v, after the device labels
// base.
func (v variant) labelNames(base []string) []string {
	names := slices.Clone(base)
	if v&variantMIG != 0 {
		names = append(names, migLabels...)
	}
	if v&variantPod != 0 {
		names = append(names, podLabels...)
	}
	if v&variantVGPU != 0 {
		names = append(names, vgpuLabel)
	}
	return names
}

// descs is a metric family: its name, help and type, and its descriptor
// for each label set.
type descs struct {
	name, help string
	counter    bool
	header     []byte // # HELP and # TYPE lines (text.go)
	d          [variants]*prometheus.Desc
}

// newDescs returns the descriptors of a metric whose device labels are base,
// with the labels extra after the others.
func newDescs(name, help string, counter bool, base, extra []string) *descs {
	d := &descs{name: name, help: help, counter: counter, header: textHeader(name, help, counter)}
	for v := range variant(variants) {
		d.d[v] = prometheus.NewDesc(name, help, append(v.labelNames(base), extra...), nil)
	}
	return d
}

// gpuplane's per-device metrics, published with the samples.
const (
	healthName     = metrics.DeviceHealth
	podsName       = metrics.DevicePods
	allocationName = metrics.DeviceAllocation
	shareName      = metrics.DeviceAllocationShare
)

// devInfo is one discovered GPU or MIG device and its label values.
type devInfo struct {
	uuid string
	mig  bool
	// values are the values of the device labels (deviceLabels, then the
	// label fields), then migLabels on MIG devices.
	values []string
}

// target is one label set a device's series are served under: the device
// alone, or the device and one container it is allocated to (and one
// replica, under Options.VirtualGPUs).
type target struct {
	v      variant
	values []string
	labels []*dto.LabelPair
	// text is labels in the text format, {name="value",...}, rendered once
	// per label set; nil when the registry would refuse one (text.go).
	text []byte
}

type sampleAt struct {
	s  device.Sample
	at time.Time
}

// state is what the exporter knows; only the Run goroutine touches it. Each
// change is turned into an immutable snapshot.
type state struct {
	fields      []Field // metric fields
	labelFields []Field // label fields, e.g. DCGM_FI_DRIVER_VERSION
	base        []string
	hostname    string
	virtualGPUs bool
	fdescs      []*descs
	health      *descs
	pods        *descs
	alloc       *descs
	share       *descs
	// replicas returns the time-slicing replicas of a resource as NVIDIA
	// names it (configv1.Config.Replicas); nil counts every resource as
	// unshared.
	replicas func(resource string) int

	devices []*devInfo // discovery order: each GPU, then its MIG devices
	byUUID  map[string]*devInfo
	byIndex map[string]*devInfo // GPU index as a decimal string
	byMinor map[string]*devInfo // GPU device node minor as a decimal string
	// claims tells DRA claims' shares (Options.Claims); nil: unknown.
	claims    ClaimShares
	samples   map[string]sampleAt
	devHealth *health.State
	mapping   *podresources.Mapping
	// Rebuilt when devices or the mapping change.
	targets map[string]*deviceTargets
}

// deviceTargets are the label sets of one device.
type deviceTargets struct {
	// own is the device's label set without pod labels, for
	// gpuplane_device_health and gpuplane_device_pods.
	own target
	// targets are the label sets its DCGM series are served under: own
	// when no container or several hold the device, else the container's;
	// under Options.VirtualGPUs, one per container and replica.
	targets []target
	// containers are the label sets of each container holding the device,
	// for gpuplane_device_allocation.
	containers []target
	// shares are the fraction of the device each container holds, in the
	// order of containers, for gpuplane_device_allocation_share; -1 when
	// unknown (a replica of a resource the configuration does not share).
	shares []float64
	// pods is the number of distinct pods holding the device.
	pods int
}

// newState returns an empty state that serves fields and ignores the given
// application XIDs in its health; with virtualGPUs, a time-sliced device
// has one series per replica held, labelled vgpu.
func newState(fields []Field, hostname string, ignoredXIDs []uint64, virtualGPUs bool) *state {
	s := &state{
		hostname:    hostname,
		virtualGPUs: virtualGPUs,
		samples:     make(map[string]sampleAt),
		devHealth:   health.NewState(device.Node{}, ignoredXIDs),
		base:        slices.Clone(deviceLabels),
	}
	for _, f := range fields {
		if f.Type == Label {
			s.labelFields = append(s.labelFields, f)
			s.base = append(s.base, f.Name)
		} else {
			s.fields = append(s.fields, f)
		}
	}
	s.health = newDescs(healthName, "Whether the device is healthy (1) or not (0): it, or the GPU of a MIG device, is lost or had an XID error not caused by an application.", false, s.base, nil)
	s.pods = newDescs(podsName, "Number of pods the device is allocated to; above 1 when the GPU is shared by time-slicing.", false, s.base, nil)
	s.alloc = newDescs(allocationName, "1 for each container the device is allocated to.", false, s.base, nil)
	s.share = newDescs(shareName, "Fraction of the device (GPU or MIG device) the container holds: 1 whole, k/replicas for k time-slicing replicas, units/1000 for gpuplane.io/gpu-milli; for a DRA device its consumed milliGPU/1000, and for a DRA MIG device not yet discovered its compute slices/7 of the GPU.", false, s.base, nil)
	for _, f := range s.fields {
		var extra []string
		if f.Name == xidField {
			extra = xidLabels
		}
		s.fdescs = append(s.fdescs, newDescs(f.Name, f.Help, f.Type == Counter, s.base, extra))
	}
	s.setNode(device.Node{})
	return s
}

// setNode replaces the known devices.
func (s *state) setNode(n device.Node) {
	s.devHealth.SetNode(n)
	s.devices = nil
	s.byUUID = make(map[string]*devInfo)
	s.byIndex = make(map[string]*devInfo)
	s.byMinor = make(map[string]*devInfo)
	for _, g := range n.GPUs {
		idx := strconv.Itoa(g.Index)
		base := []string{idx, g.UUID, g.PCIBusID, "nvidia" + idx, g.ProductName, s.hostname}
		for _, f := range s.labelFields {
			base = append(base, f.label(&n))
		}
		d := &devInfo{uuid: g.UUID, values: base}
		s.devices = append(s.devices, d)
		s.byUUID[g.UUID] = d
		s.byIndex[idx] = d
		s.byMinor[strconv.Itoa(g.Minor)] = d
		for _, m := range g.MIG {
			md := &devInfo{uuid: m.UUID, mig: true, values: append(slices.Clip(base), m.Profile, strconv.Itoa(m.GPUInstanceID))}
			s.devices = append(s.devices, md)
			s.byUUID[m.UUID] = md
		}
	}
	for uuid := range s.samples {
		if s.byUUID[uuid] == nil {
			delete(s.samples, uuid)
		}
	}
	s.rebuildTargets()
}

// addSamples keeps the newest sample of each known device, received at at.
// It reports whether a sample was of an unknown device.
func (s *state) addSamples(samples []device.Sample, at time.Time) (unknown bool) {
	for _, smp := range samples {
		if s.byUUID[smp.UUID] == nil {
			unknown = true
			continue
		}
		s.samples[smp.UUID] = sampleAt{s: smp, at: at}
	}
	return unknown
}

// applyHealth records a health event under the health policy.
func (s *state) applyHealth(ev device.HealthEvent) { s.devHealth.Apply(ev) }

// setMapping replaces the pod mapping; it reports whether it changed.
func (s *state) setMapping(m *podresources.Mapping) bool {
	if m == s.mapping {
		return false
	}
	s.mapping = m
	s.rebuildTargets()
	return true
}

// resolve maps a device plugin's device ID to a known device: a GPU or MIG
// UUID, a time-slicing replica of one (see device.ID), or a GPU index (the
// device ID of NVIDIA's plugin under deviceIDStrategy index).
func (s *state) resolve(id string) *devInfo {
	uuid := device.ID(id).UUID()
	if d := s.byUUID[uuid]; d != nil {
		return d
	}
	return s.byIndex[uuid]
}

// holder is a container holding a device, through one replica under
// Options.VirtualGPUs.
type holder struct {
	owner podresources.Owner
	vgpu  string // the replica part of the device ID ("3" of "<uuid>::3"); "" for a whole device
}

// rebuildTargets computes each device's label sets from the devices and the
// pod mapping, once per change rather than once per scrape. A device held by
// one container is served under its labels; one shared by several
// containers through time-slicing is served once without pod labels, as
// dcgm-exporter serves it once (with one of the pods' labels), unless
// Options.VirtualGPUs asks for one series per replica.
func (s *state) rebuildTargets() {
	holders, shares, partial := s.collectHolders()
	s.targets = make(map[string]*deviceTargets, len(s.devices))
	for _, d := range s.devices {
		v := variant(0)
		if d.mig {
			v |= variantMIG
		}
		self := s.newTarget(v, d.values)
		dt := &deviceTargets{own: self}
		s.targets[d.uuid] = dt
		hs := holders[d.uuid]
		slices.SortFunc(hs, func(a, b holder) int {
			return cmp.Or(cmp.Compare(a.owner.Namespace, b.owner.Namespace), cmp.Compare(a.owner.Pod, b.owner.Pod),
				cmp.Compare(a.owner.Container, b.owner.Container), cmp.Compare(len(a.vgpu), len(b.vgpu)), cmp.Compare(a.vgpu, b.vgpu))
		})
		for i, h := range hs {
			if i == 0 || h.owner.Namespace != hs[i-1].owner.Namespace || h.owner.Pod != hs[i-1].owner.Pod {
				dt.pods++
			}
			if i == 0 || h.owner != hs[i-1].owner {
				dt.containers = append(dt.containers, s.newTarget(v|variantPod, append(slices.Clip(d.values), h.owner.Pod, h.owner.Namespace, h.owner.Container)))
				dt.shares = append(dt.shares, shares[d.uuid][h.owner].value())
			}
		}
		switch {
		case s.virtualGPUs && len(hs) > 0:
			for _, h := range hs {
				vals := append(slices.Clip(d.values), h.owner.Pod, h.owner.Namespace, h.owner.Container)
				if h.vgpu == "" {
					dt.targets = append(dt.targets, s.newTarget(v|variantPod, vals))
				} else {
					dt.targets = append(dt.targets, s.newTarget(v|variantPod|variantVGPU, append(vals, h.vgpu)))
				}
			}
		case len(dt.containers) == 1 && !partial[d.uuid]:
			dt.targets = dt.containers
		default:
			dt.targets = []target{self}
		}
	}
}

// collectHolders reads the pod mapping: the containers holding each device
// (by UUID), what share each holds, and the GPUs a container holds only
// part of through a MIG device the exporter does not know (their DCGM
// series keep no pod labels).
func (s *state) collectHolders() (map[string][]holder, map[string]map[podresources.Owner]*shareAcc, map[string]bool) {
	holders := make(map[string][]holder)
	shares := make(map[string]map[podresources.Owner]*shareAcc)
	partial := make(map[string]bool)
	if s.mapping == nil {
		return holders, shares, partial
	}
	seen := make(map[podresources.Allocation]bool)
	for _, a := range s.mapping.Allocations {
		var d *devInfo
		dra := draHolding{share: -1}
		switch {
		case a.DRA.Driver != "":
			var ok bool
			if dra, ok = s.resolveDRA(a); !ok {
				continue // another driver's device, or no GPU of this node
			}
			d = dra.d
			partial[d.uuid] = partial[d.uuid] || dra.ofParent
		case resource.IsGPU(a.ResourceName):
			d = s.resolve(a.DeviceID)
		}
		if d == nil {
			continue // another device plugin's device, e.g. a NIC
		}
		if !seen[a] {
			seen[a] = true
			if shares[d.uuid] == nil {
				shares[d.uuid] = make(map[podresources.Owner]*shareAcc)
			}
			acc := shares[d.uuid][a.Owner]
			if acc == nil {
				acc = &shareAcc{}
				shares[d.uuid][a.Owner] = acc
			}
			if a.DRA.Driver != "" {
				acc.addDRA(dra.share)
			} else {
				acc.add(a, s.replicas)
			}
		}
		h := holder{owner: a.Owner}
		if s.virtualGPUs && a.DRA.Driver == "" {
			_, h.vgpu, _ = strings.Cut(a.DeviceID, "::")
		}
		if !slices.Contains(holders[d.uuid], h) {
			holders[d.uuid] = append(holders[d.uuid], h)
		}
	}
	return holders, shares, partial
}

// shareAcc counts the devices of one device (GPU or MIG device) a container
// holds, by kind of device ID.
type shareAcc struct {
	whole    bool // the device's own UUID or index
	milli    int  // gpuplane.io/gpu-milli units ("<uuid>::m<k>")
	replicas int  // time-slicing replicas held ("<uuid>::<n>")
	of       int  // the resource's replica count; 0 when not shared
	// dra is the sum of the fractions of DRA allocations; draUnknown: one
	// of them had no known share.
	dra        float64
	draUnknown bool
}

// addDRA counts a DRA allocation of the fraction share (-1: unknown).
func (c *shareAcc) addDRA(share float64) {
	if share < 0 {
		c.draUnknown = true
		return
	}
	c.dra += share
}

// add counts allocation a; replicas gives a resource's time-slicing
// replicas (nil: 1).
func (c *shareAcc) add(a podresources.Allocation, replicas func(string) int) {
	_, part, ok := strings.Cut(a.DeviceID, "::")
	switch {
	case !ok:
		c.whole = true
	case strings.TrimSuffix(a.ResourceName, resource.SharedSuffix) == resource.GPUMilli:
		c.milli++
	default:
		if _, err := strconv.Atoi(part); err != nil {
			return // neither a replica nor a milli-GPU unit: not counted
		}
		c.replicas++
		if replicas != nil {
			c.of = replicas(strings.TrimSuffix(a.ResourceName, resource.SharedSuffix))
		}
	}
}

// value returns the fraction of the device held, capped at 1, or -1 when
// unknown: replicas of a resource the configuration does not share (the
// node agent's configuration differs from the device plugin's).
func (c *shareAcc) value() float64 {
	switch {
	case c == nil:
		return -1
	case c.whole:
		return 1
	case c.draUnknown:
		return -1
	case c.dra > 0:
		return min(c.dra, 1)
	case c.milli > 0:
		return min(float64(c.milli)/resource.MilliPerGPU, 1)
	case c.replicas > 0 && c.of > 1:
		return min(float64(c.replicas)/float64(c.of), 1)
	}
	return -1
}

// newTarget returns the target of variant v with those label values.
func (s *state) newTarget(v variant, values []string) target {
	labels := labelPairs(v.labelNames(s.base), values)
	return target{v: v, values: values, labels: labels, text: labelText(labels)}
}

// labelPairs returns the label pairs of names and values, sorted by name as
// client_golang expects.
func labelPairs(names, values []string) []*dto.LabelPair {
	out := make([]*dto.LabelPair, len(names))
	for i := range names {
		out[i] = &dto.LabelPair{Name: &names[i], Value: &values[i]}
	}
	slices.SortFunc(out, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// snapshot is what a scrape serves: groups of ready-made metrics.
type snapshot struct {
	groups []group
	// text is the groups' series in the registry's order (text.go); nil
	// when a series is one the registry would refuse, so that scrapes take
	// the registry's path and its errors.
	text *textSnapshot
}

// group is the metrics of one sample, served while it is fresh, or (when
// at is zero) metrics that never go stale.
type group struct {
	at      time.Time
	metrics []*constMetric
}

// snapshot builds the metrics of the current state.
func (s *state) snapshot() *snapshot {
	snap := &snapshot{}
	var fixed []*constMetric
	for _, d := range s.devices {
		dt := s.targets[d.uuid]
		if smp, ok := s.samples[d.uuid]; ok {
			g := group{at: smp.at}
			for _, t := range dt.targets {
				for i, f := range s.fields {
					p := f.value(&smp.s)
					if p == nil {
						continue
					}
					mt := t
					if f.Name == xidField {
						code, msg := xidLabelValues(*p)
						names := append(t.v.labelNames(s.base), xidLabels...)
						mt.labels = labelPairs(names, append(slices.Clip(t.values), code, msg))
						mt.text = labelText(mt.labels)
					}
					g.metrics = append(g.metrics, newMetric(s.fdescs[i], mt, *p))
				}
			}
			snap.groups = append(snap.groups, g)
		}
		healthy := 1.0
		if !s.devHealth.Healthy(d.uuid) {
			healthy = 0
		}
		fixed = append(fixed,
			newMetric(s.health, dt.own, healthy),
			newMetric(s.pods, dt.own, float64(dt.pods)))
		for i, t := range dt.containers {
			fixed = append(fixed, newMetric(s.alloc, t, 1))
			if dt.shares[i] >= 0 {
				fixed = append(fixed, newMetric(s.share, t, dt.shares[i]))
			}
		}
	}
	snap.groups = append(snap.groups, group{metrics: fixed})
	snap.text = orderText(snap.groups)
	return snap
}

// constMetric is a metric whose protobuf parts are built once per snapshot
// and shared, read-only, by every scrape of it.
type constMetric struct {
	fam     *descs
	desc    *prometheus.Desc
	labels  []*dto.LabelPair
	text    []byte // target.text
	value   float64
	gauge   *dto.Gauge
	counter *dto.Counter
}

// newMetric returns the series of family fam under label set t.
func newMetric(fam *descs, t target, val float64) *constMetric {
	m := &constMetric{fam: fam, desc: fam.d[t.v], labels: t.labels, text: t.text, value: val}
	if fam.counter {
		m.counter = &dto.Counter{Value: &m.value}
	} else {
		m.gauge = &dto.Gauge{Value: &m.value}
	}
	return m
}

// Desc implements prometheus.Metric.
func (m *constMetric) Desc() *prometheus.Desc { return m.desc }

// Write implements prometheus.Metric.
func (m *constMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Gauge = m.gauge
	out.Counter = m.counter
	return nil
}

// collector is the Exporter as a prometheus.Collector: it serves the current
// snapshot, leaving out samples older than StaleAfter.
type collector Exporter

// Describe sends nothing: the collector is unchecked, since a metric's label
// set differs between GPUs, MIG devices and attributed series.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.current.Load()
	now := c.now()
	for _, g := range snap.groups {
		if !g.at.IsZero() && now.Sub(g.at) > c.opts.StaleAfter {
			continue
		}
		for _, m := range g.metrics {
			ch <- m
		}
	}
}
