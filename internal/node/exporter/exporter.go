// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package exporter serves a node's GPU telemetry as Prometheus metrics under
// dcgm-exporter's names, types, units and labels, attributed to the pods the
// devices are allocated to, plus gpuplane's own metrics (prefix gpuplane_).
//
// Sampling and pod attribution run in the background; each change publishes
// an immutable snapshot of ready-made metrics, and a scrape only reads the
// latest snapshot. See docs/metrics.md.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// Defaults of Options.
const (
	// DefaultSampleInterval is the time between two samples of the backend.
	DefaultSampleInterval = time.Second
	// DefaultStaleSamples is how many sample intervals a device's last
	// sample stays served when no newer one arrives.
	DefaultStaleSamples = 3
	// rediscoverEvery bounds how often a sample of an unknown device makes
	// the exporter discover the devices again.
	rediscoverEvery = time.Minute
)

// PodSource tells which container each device is allocated to; a
// *podresources.Watcher is one.
type PodSource interface {
	// Current returns the latest allocations, or nil when unknown (the
	// kubelet's socket is missing, slow or failing).
	Current() *podresources.Mapping
	// Errors returns how many refreshes have failed so far.
	Errors() uint64
}

// Options configures an Exporter.
type Options struct {
	// Backend is sampled for telemetry, discovered for device labels and
	// watched for health. Required.
	Backend device.Backend
	// Fields are the DCGM fields served (label fields as labels); nil
	// serves AllFields.
	Fields []Field
	// Hostname is the value of the Hostname label, the node's name.
	Hostname string
	// SampleInterval is the time between samples; 0 means
	// DefaultSampleInterval.
	SampleInterval time.Duration
	// StaleAfter is the age beyond which a device's last sample is no
	// longer served; 0 means DefaultStaleSamples sample intervals.
	StaleAfter time.Duration
	// Pods attributes devices to pods; nil serves no pod labels.
	Pods PodSource
	// Claims tells the shares of DRA devices (pod-resources names a
	// container's claims and devices, not the capacity consumed); nil: a
	// DRA device allocated whole has share 1, a shared one no share series.
	Claims ClaimShares
	// VirtualGPUs serves a device shared by time-slicing once per replica a
	// container holds, labelled vgpu with the replica number, as
	// dcgm-exporter's --kubernetes-virtual-gpus; false serves it once,
	// with pod labels only when one container holds it.
	VirtualGPUs bool
	// Logger receives backend errors; nil discards them.
	Logger *slog.Logger
	// Collectors are served besides the exporter's own series (the DRA
	// plugin's nvidia_dra_*, internal/node/drametrics).
	Collectors []prometheus.Collector
	// Config is the node agent's configuration, the device plugin's too:
	// gpuplane_device_health follows the same health policy
	// (internal/node/health) with the same ignored XIDs. nil means
	// configv1.DefaultConfig().
	Config *configv1.Config
}

// Exporter samples a device backend in the background and serves the last
// sample as Prometheus metrics.
type Exporter struct {
	opts     Options
	registry *prometheus.Registry
	// others holds what registry holds but the exporter's own series:
	// what a scrape gathers beside the snapshot's text (text.go).
	others  *prometheus.Registry
	current atomic.Pointer[snapshot]
	now     func() time.Time

	backendErrors  *prometheus.CounterVec
	scrapeDuration prometheus.Histogram

	state *state
}

// New returns an Exporter; call Run to start sampling and Handler or
// Serve to serve.
func New(opts Options) (*Exporter, error) {
	if opts.Backend == nil {
		return nil, errors.New("exporter: no backend")
	}
	if opts.SampleInterval < 0 || opts.StaleAfter < 0 {
		return nil, fmt.Errorf("exporter: sample interval %v and stale-after %v must not be negative", opts.SampleInterval, opts.StaleAfter)
	}
	if opts.SampleInterval == 0 {
		opts.SampleInterval = DefaultSampleInterval
	}
	if opts.StaleAfter == 0 {
		opts.StaleAfter = DefaultStaleSamples * opts.SampleInterval
	}
	if opts.StaleAfter < opts.SampleInterval {
		return nil, fmt.Errorf("exporter: stale-after %v is shorter than the sample interval %v: every sample would go stale before the next", opts.StaleAfter, opts.SampleInterval)
	}
	if opts.Fields == nil {
		opts.Fields = AllFields()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Config == nil {
		opts.Config = configv1.DefaultConfig()
	}
	e := &Exporter{
		opts:     opts,
		registry: prometheus.NewRegistry(),
		others:   prometheus.NewRegistry(),
		now:      time.Now,
		state:    newState(opts.Fields, opts.Hostname, *opts.Config.Gpuplane.IgnoredXIDs, opts.VirtualGPUs),
		backendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.BackendErrorsTotal,
			Help: "Failed calls to the device backend, by operation (discover, sample, watch_health).",
		}, []string{metrics.LabelOperation}),
		scrapeDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    metrics.ScrapeDurationSeconds,
			Help:    "Time to serve a /metrics request (in seconds).",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .5},
		}),
	}
	for _, op := range []string{"discover", "sample", "watch_health"} {
		e.backendErrors.WithLabelValues(op)
	}
	e.state.replicas = opts.Config.Replicas
	e.state.claims = opts.Claims
	e.current.Store(&snapshot{})
	pods := opts.Pods
	e.registry.MustRegister((*collector)(e))
	own := []prometheus.Collector{
		e.backendErrors,
		e.scrapeDuration,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: metrics.PodResourcesErrorsTotal,
			Help: "Failed refreshes of the pod-to-device mapping from the kubelet's pod-resources socket.",
		}, func() float64 {
			if pods == nil {
				return 0
			}
			return float64(pods.Errors())
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: metrics.PodResourcesUp,
			Help: "Whether the last refresh of the pod-to-device mapping succeeded (1) or not (0); pod labels are served only while it is 1.",
		}, func() float64 {
			if pods == nil || pods.Current() == nil {
				return 0
			}
			return 1
		}),
	}
	for _, c := range append(own, opts.Collectors...) {
		if err := e.registry.Register(c); err != nil {
			return nil, fmt.Errorf("exporter: %w", err)
		}
		e.others.MustRegister(c) // registry would have refused a conflict
	}
	return e, nil
}

// Gatherer returns the registry the Handler serves.
func (e *Exporter) Gatherer() prometheus.Gatherer { return e.registry }

// Handler serves the metrics in Prometheus's text format (or protobuf when
// asked). OpenMetrics stays off: it would append _total to dcgm-exporter's
// counter names, e.g. DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION. A text scrape,
// plain or gzip, writes the snapshot's ready-made text (text.go); others
// go through promhttp and the registry, with the same result.
func (e *Exporter) Handler() http.Handler {
	h := promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if !e.serveText(w, r, e.others) {
			h.ServeHTTP(w, r)
		}
		e.scrapeDuration.Observe(time.Since(start).Seconds())
	})
}

// Serve serves Handler on l at /metrics until ctx is done.
func (e *Exporter) Serve(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}

type sampleResult struct {
	samples []device.Sample
	err     error
	at      time.Time
}

// Run discovers the devices, then samples every SampleInterval, follows
// health events and pod attribution until ctx is done. It returns nil then.
func (e *Exporter) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	samples := make(chan sampleResult)
	health := make(chan device.HealthEvent, 64)
	go e.sampleLoop(ctx, samples)
	go e.watchHealth(ctx, health)

	e.discover(ctx)
	podTick := time.NewTicker(e.opts.SampleInterval)
	defer podTick.Stop()
	var lastDiscover time.Time
	sampleFailing := false
	podsLogged, podsUp := false, false // pod-resources state last logged
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-samples:
			if r.err != nil {
				e.backendErrors.WithLabelValues("sample").Inc()
				if !sampleFailing {
					e.opts.Logger.Warn("Sampling GPUs failed; their series go stale", "err", r.err)
				}
				sampleFailing = true
				continue
			}
			if sampleFailing {
				e.opts.Logger.Info("Sampling GPUs works again")
				sampleFailing = false
			}
			if unknown := e.state.addSamples(r.samples, r.at); unknown && time.Since(lastDiscover) > rediscoverEvery {
				lastDiscover = time.Now()
				if e.discover(ctx) {
					e.state.addSamples(r.samples, r.at)
				}
			}
		case ev := <-health:
			e.state.applyHealth(ev)
		case <-podTick.C:
			if e.opts.Pods == nil {
				continue
			}
			m := e.opts.Pods.Current()
			if up := m != nil; !podsLogged || up != podsUp {
				if up {
					e.opts.Logger.Info("Pod-resources socket answers; serving pod labels")
				} else {
					e.opts.Logger.Warn("Pod-resources socket unavailable; serving metrics without pod labels")
				}
				podsLogged, podsUp = true, up
			}
			if !e.state.setMapping(m) {
				continue
			}
		}
		e.current.Store(e.state.snapshot())
	}
}

// discover reads the devices; it reports whether it succeeded.
func (e *Exporter) discover(ctx context.Context) bool {
	node, err := e.opts.Backend.Discover(ctx)
	if err != nil {
		e.backendErrors.WithLabelValues("discover").Inc()
		e.opts.Logger.Warn("Discovering GPUs failed", "err", err)
		return false
	}
	e.state.setNode(node)
	if e.opts.Pods != nil {
		e.state.setMapping(e.opts.Pods.Current())
	}
	e.current.Store(e.state.snapshot())
	return true
}

// sampleLoop samples the backend every interval, each call bounded by one
// interval, and sends each result to out. A backend that hangs past its
// deadline only delays the next sample; the last one then goes stale.
func (e *Exporter) sampleLoop(ctx context.Context, out chan<- sampleResult) {
	t := time.NewTicker(e.opts.SampleInterval)
	defer t.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, e.opts.SampleInterval)
		s, err := e.opts.Backend.Sample(sctx)
		cancel()
		select {
		case out <- sampleResult{samples: s, err: err, at: time.Now()}:
		case <-ctx.Done():
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// watchHealth follows the backend's health events, restarting the watch one
// sample interval after it fails.
func (e *Exporter) watchHealth(ctx context.Context, out chan<- device.HealthEvent) {
	for {
		err := e.opts.Backend.WatchHealth(ctx, out)
		if ctx.Err() != nil {
			return
		}
		e.backendErrors.WithLabelValues("watch_health").Inc()
		e.opts.Logger.Warn("Watching GPU health failed; retrying", "err", err, "in", e.opts.SampleInterval)
		select {
		case <-time.After(e.opts.SampleInterval):
		case <-ctx.Done():
			return
		}
	}
}
