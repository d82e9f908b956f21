package exporter

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/device"
	"github.com/gpuplane/gpuplane/internal/health"
	"github.com/gpuplane/gpuplane/internal/podresources"
)

// Label sets. Every series carries the device labels; MIG devices add the
// GPU instance labels and attributed series add the pod labels.
var (
	deviceLabels = []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"}
	migLabels    = []string{"GPU_I_PROFILE", "GPU_I_ID"}
	podLabels    = []string{"pod", "namespace", "container"}
)

// A variant is one of the four label sets: bit 0 set for MIG devices, bit 1
// for series attributed to a pod.
type variant int

const (
	variantMIG variant = 1 << iota
	variantPod
	variants = 4
)

func (v variant) labelNames() []string {
	names := slices.Clone(deviceLabels)
	if v&variantMIG != 0 {
		names = append(names, migLabels...)
	}
	if v&variantPod != 0 {
		names = append(names, podLabels...)
	}
	return names
}

// descs holds a metric's descriptor for each label set.
type descs [variants]*prometheus.Desc

func newDescs(name, help string) *descs {
	var d descs
	for v := range variant(variants) {
		d[v] = prometheus.NewDesc(name, help, v.labelNames(), nil)
	}
	return &d
}

// gpuplane's per-device metrics, published with the samples.
const (
	healthName     = "gpuplane_device_health"
	podsName       = "gpuplane_device_pods"
	allocationName = "gpuplane_device_allocation"
)

// devInfo is one discovered GPU or MIG device and its label values.
type devInfo struct {
	uuid string
	mig  bool
	// values are the values of deviceLabels, then migLabels on MIG devices.
	values []string
}

// target is one label set a device's series are served under: the device
// alone, or the device and one container it is allocated to.
type target struct {
	v      variant
	labels []*dto.LabelPair
}

type sampleAt struct {
	s  device.Sample
	at time.Time
}

// state is what the exporter knows; only the Run goroutine touches it. Each
// change is turned into an immutable snapshot.
type state struct {
	fields   []Field
	hostname string
	fdescs   []*descs
	health   *descs
	pods     *descs
	alloc    *descs

	devices   []*devInfo // discovery order: each GPU, then its MIG devices
	byUUID    map[string]*devInfo
	byIndex   map[string]*devInfo // GPU index as a decimal string
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
	// when no container holds the device, else one per container.
	targets []target
	// pods is the number of distinct pods holding the device.
	pods int
}

// newState returns an empty state that serves fields and ignores the given
// application XIDs in its health.
func newState(fields []Field, hostname string, ignoredXIDs []uint64) *state {
	s := &state{
		fields:    fields,
		hostname:  hostname,
		health:    newDescs(healthName, "Whether the device is healthy (1) or not (0): it, or the GPU of a MIG device, is lost or had an XID error not caused by an application."),
		pods:      newDescs(podsName, "Number of pods the device is allocated to; above 1 when the GPU is shared by time-slicing."),
		alloc:     newDescs(allocationName, "1 for each container the device is allocated to."),
		samples:   make(map[string]sampleAt),
		devHealth: health.NewState(device.Node{}, ignoredXIDs),
	}
	for _, f := range fields {
		s.fdescs = append(s.fdescs, newDescs(f.Name, f.Help))
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
	for _, g := range n.GPUs {
		idx := strconv.Itoa(g.Index)
		base := []string{idx, g.UUID, g.PCIBusID, "nvidia" + idx, g.ProductName, s.hostname}
		d := &devInfo{uuid: g.UUID, values: base}
		s.devices = append(s.devices, d)
		s.byUUID[g.UUID] = d
		s.byIndex[idx] = d
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

// rebuildTargets computes each device's label sets from the devices and the
// pod mapping, once per change rather than once per scrape.
func (s *state) rebuildTargets() {
	owners := make(map[string][]podresources.Owner)
	if s.mapping != nil {
		for _, a := range s.mapping.Allocations {
			if !configv1.IsGPUResource(a.ResourceName) {
				continue // another device plugin's device, e.g. a NIC
			}
			if d := s.resolve(a.DeviceID); d != nil && !slices.Contains(owners[d.uuid], a.Owner) {
				owners[d.uuid] = append(owners[d.uuid], a.Owner)
			}
		}
	}
	s.targets = make(map[string]*deviceTargets, len(s.devices))
	for _, d := range s.devices {
		v := variant(0)
		if d.mig {
			v |= variantMIG
		}
		self := target{v: v, labels: labelPairs(v, d.values)}
		dt := &deviceTargets{own: self}
		s.targets[d.uuid] = dt
		holders := owners[d.uuid]
		if len(holders) == 0 {
			dt.targets = []target{self}
			continue
		}
		slices.SortFunc(holders, func(a, b podresources.Owner) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container))
		})
		for i, o := range holders {
			if i == 0 || o.Namespace != holders[i-1].Namespace || o.Pod != holders[i-1].Pod {
				dt.pods++
			}
			vals := append(slices.Clip(d.values), o.Pod, o.Namespace, o.Container)
			dt.targets = append(dt.targets, target{v: v | variantPod, labels: labelPairs(v|variantPod, vals)})
		}
	}
}

// labelPairs returns the label pairs of a label set, sorted by name as
// client_golang expects.
func labelPairs(v variant, values []string) []*dto.LabelPair {
	names := v.labelNames()
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
}

// group is the metrics of one sample, served while it is fresh, or (when
// at is zero) metrics that never go stale.
type group struct {
	at      time.Time
	metrics []prometheus.Metric
}

// snapshot builds the metrics of the current state.
func (s *state) snapshot() *snapshot {
	snap := &snapshot{}
	var fixed []prometheus.Metric
	for _, d := range s.devices {
		dt := s.targets[d.uuid]
		if smp, ok := s.samples[d.uuid]; ok {
			g := group{at: smp.at}
			for _, t := range dt.targets {
				for i, f := range s.fields {
					if p := f.value(&smp.s); p != nil {
						g.metrics = append(g.metrics, newMetric(s.fdescs[i][t.v], t.labels, *p, f.Type == Counter))
					}
				}
			}
			snap.groups = append(snap.groups, g)
		}
		healthy := 1.0
		if !s.devHealth.Healthy(d.uuid) {
			healthy = 0
		}
		fixed = append(fixed,
			newMetric(s.health[dt.own.v], dt.own.labels, healthy, false),
			newMetric(s.pods[dt.own.v], dt.own.labels, float64(dt.pods), false))
		for _, t := range dt.targets {
			if t.v&variantPod != 0 {
				fixed = append(fixed, newMetric(s.alloc[t.v], t.labels, 1, false))
			}
		}
	}
	snap.groups = append(snap.groups, group{metrics: fixed})
	return snap
}

// constMetric is a metric whose protobuf parts are built once per snapshot
// and shared, read-only, by every scrape of it.
type constMetric struct {
	desc    *prometheus.Desc
	labels  []*dto.LabelPair
	gauge   *dto.Gauge
	counter *dto.Counter
}

func newMetric(d *prometheus.Desc, labels []*dto.LabelPair, v float64, counter bool) *constMetric {
	m := &constMetric{desc: d, labels: labels}
	if counter {
		m.counter = &dto.Counter{Value: &v}
	} else {
		m.gauge = &dto.Gauge{Value: &v}
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
