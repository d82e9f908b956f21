// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package drametrics is the DRA kubelet plugin's Prometheus metrics, under
// the names, labels, buckets and counting rules of NVIDIA's DRA driver
// (k8s-dra-driver-gpu, pkg/metrics/dra_requests.go and
// cmd/gpu-kubelet-plugin/driver.go), so that its dashboards and alerts
// work unchanged: per claim, a prepare or unprepare that succeeds counts in
// nvidia_dra_requests_total and nvidia_dra_request_duration_seconds, one
// that fails in nvidia_dra_node_prepare_errors_total or
// nvidia_dra_node_unprepare_errors_total; nvidia_dra_requests_inflight
// counts the claims under way, nvidia_dra_prepared_devices the devices of
// prepared claims by type. Names: api/metrics.
package drametrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuplane/gpuplane/api/metrics"
)

// Operations, as NVIDIA's driver labels them.
const (
	Prepare   = "prepare"
	Unprepare = "unprepare"
)

// Device types of nvidia_dra_prepared_devices, as NVIDIA's driver names
// them (cmd/gpu-kubelet-plugin types.go, prepared.go). gpuplane prepares
// no vfio devices; the type is served at 0 as NVIDIA's driver serves it
// where passthrough is off.
const (
	TypeGPU     = "gpu"
	TypeMIG     = "mig"
	TypeVFIO    = "vfio"
	TypeUnknown = "unknown"
)

// Error types of the error counters: the step that failed, NVIDIA's names.
const (
	ErrPrepareDevices   = "prepare_devices"
	ErrUnprepareDevices = "unprepare_devices"
)

// durationBuckets are NVIDIA's: 0.05 s doubling nine times, to 12.8 s.
var durationBuckets = prometheus.ExponentialBuckets(0.05, 2, 9)

// Metrics are one DRA driver's series on one node. A nil *Metrics records
// nothing, so that a plugin without metrics needs no checks. Methods are
// safe for concurrent use.
type Metrics struct {
	driver, node    string
	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	inflight        *prometheus.GaugeVec
	prepared        *prometheus.GaugeVec
	prepareErrors   *prometheus.CounterVec
	unprepareErrors *prometheus.CounterVec
}

// New returns the metrics of driver (gpu.nvidia.com) on node, with the
// request series at 0 from the start (NVIDIA's
// InitializeDRARequestMetrics) and every device type's count at 0.
func New(driver, node string) *Metrics {
	op := []string{metrics.LabelDriver, metrics.LabelOperation}
	errs := []string{metrics.LabelDriver, metrics.LabelErrorType}
	m := &Metrics{
		driver: driver, node: node,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.DRARequestsTotal,
			Help: "Total number of DRA prepare and unprepare requests."}, op),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metrics.DRARequestDurationSeconds,
			Help: "Duration of DRA prepare and unprepare requests.", Buckets: durationBuckets}, op),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metrics.DRARequestsInFlight,
			Help: "Number of in-flight DRA prepare and unprepare requests."}, op),
		prepared: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metrics.DRAPreparedDevices,
			Help: "Current number of prepared devices by device type."}, []string{metrics.LabelNode, metrics.LabelDriver, metrics.LabelDeviceType}),
		prepareErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.DRANodePrepareErrorsTotal,
			Help: "Total number of failures during DRA node prepare for kubelet plugins."}, errs),
		unprepareErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metrics.DRANodeUnprepareErrorsTotal,
			Help: "Total number of failures during DRA node unprepare for kubelet plugins."}, errs),
	}
	for _, o := range []string{Prepare, Unprepare} {
		m.requests.WithLabelValues(driver, o)
		m.duration.WithLabelValues(driver, o)
		m.inflight.WithLabelValues(driver, o)
	}
	m.SetPrepared(nil)
	return m
}

// Collectors are the series to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	if m == nil {
		return nil
	}
	return []prometheus.Collector{m.requests, m.duration, m.inflight, m.prepared, m.prepareErrors, m.unprepareErrors}
}

// Start marks one claim's operation (Prepare, Unprepare) in flight; the
// returned function ends it: with a nil error it counts a request and its
// duration since Start, else an error of errorType (ErrPrepareDevices,
// ErrUnprepareDevices).
func (m *Metrics) Start(operation string) (done func(err error, errorType string)) {
	if m == nil {
		return func(error, string) {}
	}
	t0 := time.Now()
	g := m.inflight.WithLabelValues(m.driver, operation)
	g.Inc()
	return func(err error, errorType string) {
		g.Dec()
		switch {
		case err == nil:
			m.requests.WithLabelValues(m.driver, operation).Inc()
			m.duration.WithLabelValues(m.driver, operation).Observe(time.Since(t0).Seconds())
		case operation == Prepare:
			m.prepareErrors.WithLabelValues(m.driver, errorType).Inc()
		default:
			m.unprepareErrors.WithLabelValues(m.driver, errorType).Inc()
		}
	}
}

// SetPrepared sets the prepared devices' counts by type from a full count
// (TypeGPU, TypeMIG, ...); a type missing from counts is 0.
func (m *Metrics) SetPrepared(counts map[string]int) {
	if m == nil {
		return
	}
	for _, t := range []string{TypeGPU, TypeMIG, TypeVFIO, TypeUnknown} {
		m.prepared.WithLabelValues(m.node, m.driver, t).Set(float64(counts[t]))
	}
}
