// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/owners"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// builder turns series into a Result as they arrive, one piece of one
// series at a time (a range query's answer for part of the window), so
// that no reader keeps the series: holdings are runs of steps, utilisation
// a float32 grid per device, memory a float32 span per pod and device.
type builder struct {
	w    Window
	n    int // grid times
	cat  *gpu.Catalog
	gpus map[string]gpuInfo
	// life is the span of grid times at which any series of a GPU (or of
	// its MIG devices) has a value: the GPU's life in the window.
	life  map[string]*seen
	known map[string]*seen // series keys seen
	// data marks the grid times at which any series has a value.
	data []bool
	// where, if set, names the file line of a series' value at a grid time
	// (ReadOpenMetrics); key is the series' key as given to add.
	where func(key string, t int64) string
	// badAt describes the first share value that is no fraction.
	badAt string
	// unknownModel holds the product names not in the catalog, warned.
	unknownModel map[string]bool
	noUUID       map[string]int // series without UUID, by metric
	shares       map[string]*shareRuns
	shareOrder   []string
	util         map[string]map[string][]float32 // metric -> device -> grid
	fb           map[usageKey]*Usage
	bad          int // share values that are no fraction
	unattributed int
	warnings     []string
	// The vendors' requests (vendor.go): node models, request series by
	// key in order of arrival, running containers' grid indexes.
	vendorNodes  map[string]vendorNode
	requests     map[string]*request
	requestOrder []string
	running      map[string]map[int64]bool
	// The vendors' exporters (exporter.go): each device's partition mode,
	// by its UUID as relabelled; the grid indexes at which an exporter
	// series names a pod, by namespace/pod; whether a series came
	// scraped without honor_labels.
	parts       map[string]gpu.Partition
	named       map[string]map[int64]bool
	exportedPod bool
}

type gpuInfo struct{ node, model string }

// seen is the span of a series' values on the grid: the first and last
// grid indexes and the number of values.
type seen struct{ first, last, n int64 }

type usageKey struct{ ns, pod, uuid, inst string }

// shareRuns is one share series: the holding it describes and its runs of
// consecutive steps with one value.
type shareRuns struct {
	h        alloc.Holding // without Start, End and the part
	base     alloc.Share
	key      string // the series key as given to add
	open     bool
	from, to int64 // the open run's first and last grid times
	v        float64
	out      []alloc.Holding
}

func newBuilder(w Window) *builder {
	return &builder{
		w: w, n: w.points(), cat: gpu.Default(), gpus: map[string]gpuInfo{}, life: map[string]*seen{}, known: map[string]*seen{}, data: make([]bool, w.points()),
		unknownModel: map[string]bool{}, noUUID: map[string]int{}, shares: map[string]*shareRuns{},
		util: map[string]map[string][]float32{}, fb: map[usageKey]*Usage{},
		vendorNodes: map[string]vendorNode{}, requests: map[string]*request{}, running: map[string]map[int64]bool{},
		parts: map[string]gpu.Partition{}, named: map[string]map[int64]bool{},
	}
}

// warn adds a warning once.
func (b *builder) warn(s string) {
	if !slices.Contains(b.warnings, s) {
		b.warnings = append(b.warnings, s)
	}
}

// gpu registers the GPU a series names and returns it.
func (b *builder) gpu(l map[string]string) gpuInfo {
	uuid := l[metrics.LabelUUID]
	if g, ok := b.gpus[uuid]; ok {
		return g
	}
	product := l[metrics.LabelModelName]
	g := gpuInfo{node: l[metrics.LabelHostname], model: product}
	if m, ok := b.cat.FromProductName(product); ok {
		g.model = m.Name
	} else if !b.unknownModel[product] {
		b.unknownModel[product] = true
		b.warnings = append(b.warnings, fmt.Sprintf("GPU model %q (modelName) is not in the catalog; priced by that name", product))
	}
	b.gpus[uuid] = g
	return g
}

// add takes the values v at grid times t (ascending, after those of any
// earlier piece of the series) of the series key of metric, labelled l.
func (b *builder) add(metric, key string, l map[string]string, t []int64, v []float64) error {
	if len(t) == 0 {
		return nil
	}
	switch metric {
	case KSMPodRequests, KSMNodeLabels, KSMContainerRunning:
		b.addVendor(metric, key, l, t, v)
		return nil
	case AMDTotalVRAM, AMDGFXActivity, GaudiUtilization:
		return b.addExporter(metric, key, l, t, v)
	}
	return b.addSeries(metric, key, l, t, v)
}

// addSeries takes a series in the node agent's labels (UUID, Hostname,
// modelName, pod, namespace, GPU_I_ID, GPU_I_PROFILE), as add does; the
// vendors' exporters' series come here relabelled (exporter.go).
func (b *builder) addSeries(metric, key string, l map[string]string, t []int64, v []float64) error {
	raw := key
	if metric == metrics.DeviceHealth {
		for i, x := range v {
			if err := checkHealth(metric, raw, x); err != nil {
				return fmt.Errorf("%w (at %s)", err, fmtTime(t[i]))
			}
		}
	}
	key = metric + "\x00" + key
	sn := b.known[key]
	first := sn == nil
	if first {
		sn = &seen{}
		b.known[key] = sn
	}
	for _, x := range t {
		if j := b.w.index(x); j >= 0 && j < int64(b.n) {
			b.data[j] = true
			if sn.n == 0 {
				sn.first = j
			}
			sn.last = j
			sn.n++
		}
	}
	uuid := l[metrics.LabelUUID]
	if uuid == "" {
		if first {
			b.noUUID[metric]++
		}
		return nil
	}
	g := b.gpu(l)
	if lo, hi := b.w.index(t[0]), b.w.index(t[len(t)-1]); hi >= 0 && lo < int64(b.n) {
		lo, hi = max(lo, 0), min(hi, int64(b.n)-1)
		if life := b.life[uuid]; life == nil {
			b.life[uuid] = &seen{first: lo, last: hi}
		} else {
			life.first, life.last = min(life.first, lo), max(life.last, hi)
		}
	}
	switch metric {
	case metrics.DeviceAllocationShare:
		return b.addShare(key, raw, l, g, t, v)
	case metrics.DCGMProfGrEngineActive, metrics.DCGMDevGPUUtil:
		b.addUtil(metric, l, t, v)
	case metrics.DCGMDevFBUsed:
		b.addFBUsed(l, g, uuid, t, v)
	}
	return nil
}

// addUtil keeps, per device (utilKey) and grid step, the highest
// utilisation of metric: a fraction of 1, or for DCGMDevGPUUtil a percent.
func (b *builder) addUtil(metric string, l map[string]string, t []int64, v []float64) {
	m := b.util[metric]
	if m == nil {
		m = map[string][]float32{}
		b.util[metric] = m
	}
	k := utilKey(l)
	grid := m[k]
	if grid == nil {
		grid = make([]float32, b.n)
		for i := range grid {
			grid[i] = float32(math.NaN())
		}
		m[k] = grid
	}
	top := 1.0
	if metric == metrics.DCGMDevGPUUtil {
		top = 100 // kept in percent, exact in float32; Grid.Scale 0.01
	}
	for i, x := range v {
		if math.IsNaN(x) {
			continue
		}
		j := b.w.index(t[i])
		if j < 0 || j >= int64(b.n) {
			continue // off the window; a reader never gives one
		}
		if u := float32(min(max(x, 0), top)); grid[j] != grid[j] || u > grid[j] {
			grid[j] = u
		}
	}
}

// addFBUsed keeps a pod's framebuffer use in MiB on device uuid (of g) per
// grid step, for right-sizing; series without a pod are left out.
func (b *builder) addFBUsed(l map[string]string, g gpuInfo, uuid string, t []int64, v []float64) {
	k := usageKey{l[metrics.LabelNamespace], l[metrics.LabelPod], uuid, l[metrics.LabelGPUInstanceID]}
	if k.ns == "" || k.pod == "" {
		return
	}
	u := b.fb[k]
	if u == nil {
		u = &Usage{Namespace: k.ns, Pod: k.pod, GPU: uuid, MIGProfile: l[metrics.LabelGPUInstanceProfile], MIGInstance: k.inst, Model: g.model, Start: t[0], Step: b.w.Step}
		b.fb[k] = u
	}
	for i, x := range v {
		j := int((t[i] - u.Start) / b.w.Step)
		if j < 0 {
			continue // an earlier piece of another series of the pod; not expected
		}
		for len(u.FBUsedMiB) <= j {
			u.FBUsedMiB = append(u.FBUsedMiB, float32(math.NaN()))
		}
		u.FBUsedMiB[j] = float32(x)
	}
}

func (b *builder) addShare(key, raw string, l map[string]string, g gpuInfo, t []int64, v []float64) error {
	s := b.shares[key]
	if s == nil {
		s = &shareRuns{key: raw, h: alloc.Holding{Namespace: l[metrics.LabelNamespace], Pod: l[metrics.LabelPod], GPU: l[metrics.LabelUUID]}}
		if s.h.Namespace == "" || s.h.Pod == "" {
			b.unattributed++
			s.h.Namespace, s.h.Pod = "", ""
		}
		// The job from the pod labels the series carry (the one home of
		// that rule: owners.JobFromLabels); none: the pod.
		s.h.Job = owners.JobFromLabels(l, "")
		if inst := l[metrics.LabelGPUInstanceID]; inst != "" {
			s.h.Util = s.h.GPU + "/" + inst
		}
		if profile := l[metrics.LabelGPUInstanceProfile]; profile != "" {
			var err error
			if s.base, err = alloc.MIGShare(g.model, profile); err != nil {
				return fmt.Errorf("%s{UUID=%q, %s=%q}: %w", metrics.DeviceAllocationShare, s.h.GPU, metrics.LabelGPUInstanceProfile, profile, err)
			}
		}
		b.shares[key] = s
		b.shareOrder = append(b.shareOrder, key)
	}
	for i, x := range v {
		if s.open && t[i] == s.to+b.w.Step && x == s.v {
			s.to = t[i]
			continue
		}
		b.closeRun(s)
		s.open, s.from, s.to, s.v = true, t[i], t[i], x
	}
	return nil
}

// closeRun turns s's open run into a holding.
func (b *builder) closeRun(s *shareRuns) {
	if !s.open {
		return
	}
	s.open = false
	num, den, ok := fraction(s.v)
	if !ok {
		if b.bad == 0 {
			b.badAt = fmt.Sprintf("%v of %s at %s", s.v, s.key, fmtTime(s.from))
			if b.where != nil {
				if at := b.where(s.key, s.from); at != "" {
					b.badAt = at + ": " + b.badAt
				}
			}
		}
		b.bad++
		return
	}
	h := s.h
	h.Share = s.base
	if num != den {
		h.Share.Num, h.Share.Den = num, den
	}
	h.Start, h.End = s.from, s.to+b.w.Step
	s.out = append(s.out, h)
}

// finish returns the Result.
func (b *builder) finish() (*Result, error) {
	w := b.w
	vgpus, vholds := b.vendorHoldings()
	if len(b.gpus) == 0 && len(vgpus) == 0 {
		return nil, fmt.Errorf("no GPU series (%s, %s) from %s to %s: no node agent data in the window", metrics.DeviceHealth, metrics.DeviceAllocationShare,
			time.UnixMilli(w.From).UTC().Format(time.RFC3339), time.UnixMilli(w.To).UTC().Format(time.RFC3339))
	}
	r := &Result{Input: alloc.Input{From: w.From, To: w.To, UtilGrid: map[string]alloc.Grid{}}, Series: len(b.known), Unattributed: b.unattributed}
	r.Warnings = b.warnings
	for _, m := range Metrics {
		if n := b.noUUID[m]; n > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d %s series without a UUID label: not placed on any GPU", n, m))
		}
	}
	r.Input.GPUs = append(b.gpuList(), vgpus...)
	// Utilisation: the graphics engine activity where the device has any,
	// else DCGM_FI_DEV_GPU_UTIL / 100.
	for k, g := range b.util[metrics.DCGMProfGrEngineActive] {
		r.Input.UtilGrid[k] = alloc.Grid{Start: w.From, Step: w.Step, U: g, Scale: 1}
	}
	for k, g := range b.util[metrics.DCGMDevGPUUtil] {
		if _, ok := r.Input.UtilGrid[k]; !ok {
			r.Input.UtilGrid[k] = alloc.Grid{Start: w.From, Step: w.Step, U: g, Scale: 0.01}
		}
	}
	for _, k := range b.shareOrder {
		s := b.shares[k]
		b.closeRun(s)
		r.Input.Holdings = append(r.Input.Holdings, s.out...)
	}
	r.Input.Holdings = append(r.Input.Holdings, vholds...)
	if b.bad > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d %s values are no fraction k/n with n <= 1024 in (0, 1]; not counted (the first: %s)", b.bad, metrics.DeviceAllocationShare, b.badAt))
	}
	r.Warnings = append(r.Warnings, b.coverage()...)
	b.addUsage(r)
	return r, nil
}

// gpuList returns the GPUs seen, by UUID, each with the part of the
// window it costs.
func (b *builder) gpuList() []alloc.GPU {
	w := b.w
	var gpus []alloc.GPU
	uuids := make([]string, 0, len(b.gpus))
	for u := range b.gpus {
		uuids = append(uuids, u)
	}
	sort.Strings(uuids)
	for _, u := range uuids {
		g := alloc.GPU{Node: b.gpus[u].node, UUID: u, Model: b.gpus[u].model, Partition: b.parts[u]}
		// A GPU first or last seen inside the window (a node added or
		// removed) costs from its first grid time to one step past its
		// last; one seen at the window's ends, the whole window.
		if life := b.life[u]; life != nil {
			if life.first > 0 {
				g.Start = w.From + life.first*w.Step
			}
			if life.last < int64(b.n)-1 {
				g.End = min(w.From+(life.last+1)*w.Step, w.To)
			}
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// addUsage adds the memory and utilisation samples of each pod's device
// (r.Usage, in order) and drops those of MIG devices no pod held.
func (b *builder) addUsage(r *Result) {
	w := b.w
	for k, u := range b.fb {
		u.Util = make([]float32, len(u.FBUsedMiB))
		g, ok := r.Input.UtilGrid[utilKey(map[string]string{metrics.LabelUUID: k.uuid, metrics.LabelGPUInstanceID: k.inst})]
		for i := range u.Util {
			u.Util[i] = float32(math.NaN())
			if j := w.index(u.Start) + int64(i); ok && j < int64(len(g.U)) {
				u.Util[i] = float32(float64(g.U[j]) * g.Scale)
			}
		}
		r.Usage = append(r.Usage, *u)
	}
	// A MIG device's samples serve its holders only: a window in which no
	// pod held the device has no use for them (cost/alloc would warn of
	// samples for a device not in the GPU list).
	held := map[string]bool{}
	for _, h := range r.Input.Holdings {
		held[h.Util] = true
	}
	for k := range r.Input.UtilGrid {
		if strings.Contains(k, "/") && !held[k] {
			delete(r.Input.UtilGrid, k)
		}
	}
	sort.Slice(r.Usage, func(i, j int) bool {
		a, b := r.Usage[i], r.Usage[j]
		return strings.Compare(a.Namespace+"\x00"+a.Pod+"\x00"+a.GPU+"\x00"+a.MIGInstance, b.Namespace+"\x00"+b.Pod+"\x00"+b.GPU+"\x00"+b.MIGInstance) < 0
	})
}

// coverage returns warnings for a window the data does not cover: each
// stretch of at least two grid times without any value (before the first,
// after the last or between; the first three, then a count), whose cost
// is idle; and series with values at fewer than three in four of the steps
// between their first and last, the sign of a step shorter than the scrape
// interval.
func (b *builder) coverage() []string {
	var out []string
	w := b.w
	var gaps [][2]int
	from := -1
	for i := 0; i <= b.n; i++ {
		if i < b.n && !b.data[i] {
			if from < 0 {
				from = i
			}
			continue
		}
		if from >= 0 && i-from >= 2 {
			gaps = append(gaps, [2]int{from, i})
		}
		from = -1
	}
	for k, g := range gaps {
		if k == 3 {
			out = append(out, fmt.Sprintf("%d more stretches of two steps or more without samples, idle too", len(gaps)-3))
			break
		}
		start := w.From + int64(g[0])*w.Step
		end := min(w.From+int64(g[1])*w.Step, w.To)
		msg := fmt.Sprintf("no samples from %s to %s (%s, %d%% of the window): the GPUs' cost there is idle", fmtTime(start), fmtTime(end), span(end-start), 100*(end-start)/(w.To-w.From))
		if 10*int64(g[1]-g[0]) >= int64(b.n) {
			msg += fmt.Sprintf("; is the window (from %s to %s) the data's?", fmtTime(w.From), fmtTime(w.To))
		} else {
			msg += " (the node agents or Prometheus down?)"
		}
		out = append(out, msg)
	}
	var steps, values int64
	for _, sn := range b.known {
		if sn.n > 0 {
			steps += sn.last - sn.first + 1
			values += sn.n
		}
	}
	if 4*values < 3*steps {
		out = append(out, fmt.Sprintf("%d%% of the steps between a series' first and last samples have no sample: a step (%v) shorter than the scrape interval, or a grid off the samples' phase? those steps count as not held",
			100*(steps-values)/steps, dur(w.Step)))
	}
	return out
}
