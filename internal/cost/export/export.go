// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package export publishes GPU cost rates for Prometheus: the
// exposition of gpuplane cost --serve ADDR. An Exporter is a
// prometheus.Collector. Every refresh it asks the caller's Source for the
// alloc.Input of a trailing window (e.g. the last hour), keeps the
// books with cost/alloc, and publishes per team and per namespace the cost
// rate of the GPUs they held and the mean GPUs they held and used over the
// window, and per node and GPU model the cost rate and mean GPUs of idle
// capacity.
//
// Names follow the Prometheus naming conventions and pass promlint: base
// units (USD per second, not per hour: multiply by 3600 for USD per hour),
// the unit in the name, gauges without a type in the name, the counter
// ending in _total. A rate is a row's cents over the window divided by the
// window's seconds, so at each refresh the teams' rates plus the idle rates
// add up to the GPUs' cost rate to the cent of the window (cost/alloc's
// largest remainder rounding); the same holds for namespaces.
package export

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuplane/gpuplane/api/metrics"
	costalloc "github.com/gpuplane/gpuplane/internal/cost/alloc"
)

// Names returns every metric name the exporter serves (api/metrics's
// Cost names; deploy/grafana's test compares the dashboard's queries with
// them).
func Names() []string {
	return []string{metrics.CostTeamUSDPerSecond, metrics.CostNamespaceUSDPerSecond, metrics.CostIdleUSDPerSecond, metrics.CostTeamAllocatedGPUs, metrics.CostTeamUsedGPUs,
		metrics.CostNamespaceAllocatedGPUs, metrics.CostNamespaceUsedGPUs, metrics.CostIdleGPUs, metrics.CostWindowSeconds, metrics.CostLastRefreshTimestampSeconds, metrics.CostRefreshErrorsTotal}
}

var (
	descs = map[string]*prometheus.Desc{
		metrics.CostTeamUSDPerSecond:            prometheus.NewDesc(metrics.CostTeamUSDPerSecond, "Cost rate of the GPU shares the team's pods held over the trailing window, USD per second (gpuplane cost; docs/cost.md).", []string{metrics.LabelTeam}, nil),
		metrics.CostNamespaceUSDPerSecond:       prometheus.NewDesc(metrics.CostNamespaceUSDPerSecond, "Cost rate of the GPU shares the namespace's pods held over the trailing window, USD per second.", []string{metrics.LabelNamespace}, nil),
		metrics.CostIdleUSDPerSecond:            prometheus.NewDesc(metrics.CostIdleUSDPerSecond, "Cost rate of the GPU capacity no pod held over the trailing window, per node and GPU model, USD per second.", []string{metrics.LabelNode, metrics.LabelModel}, nil),
		metrics.CostTeamAllocatedGPUs:           prometheus.NewDesc(metrics.CostTeamAllocatedGPUs, "Mean GPUs the team's pods held over the trailing window (MIG slices, replicas and milli-GPU shares as fractions of a GPU).", []string{metrics.LabelTeam}, nil),
		metrics.CostTeamUsedGPUs:                prometheus.NewDesc(metrics.CostTeamUsedGPUs, "Mean GPUs the team's pods used over the trailing window: held times the GPU's utilisation.", []string{metrics.LabelTeam}, nil),
		metrics.CostNamespaceAllocatedGPUs:      prometheus.NewDesc(metrics.CostNamespaceAllocatedGPUs, "Mean GPUs the namespace's pods held over the trailing window.", []string{metrics.LabelNamespace}, nil),
		metrics.CostNamespaceUsedGPUs:           prometheus.NewDesc(metrics.CostNamespaceUsedGPUs, "Mean GPUs the namespace's pods used over the trailing window.", []string{metrics.LabelNamespace}, nil),
		metrics.CostIdleGPUs:                    prometheus.NewDesc(metrics.CostIdleGPUs, "Mean GPUs no pod held over the trailing window, per node and GPU model.", []string{metrics.LabelNode, metrics.LabelModel}, nil),
		metrics.CostWindowSeconds:               prometheus.NewDesc(metrics.CostWindowSeconds, "Length of the trailing window the cost rates are computed over, in seconds.", nil, nil),
		metrics.CostLastRefreshTimestampSeconds: prometheus.NewDesc(metrics.CostLastRefreshTimestampSeconds, "End of the window of the last successful refresh, in Unix seconds.", nil, nil),
		metrics.CostRefreshErrorsTotal:          prometheus.NewDesc(metrics.CostRefreshErrorsTotal, "Refreshes that failed; the last good figures stay published.", nil, nil),
	}
)

// Source returns the alloc.Input of the window [from, to), e.g. from
// Prometheus range queries.
type Source func(ctx context.Context, from, to time.Time) (costalloc.Input, error)

// Exporter is a prometheus.Collector of cost rates over a trailing window.
type Exporter struct {
	// Now is Run's clock, the end of each window; nil is time.Now.
	Now func() time.Time

	src    Source
	window time.Duration

	mu     sync.Mutex
	teams  costalloc.Report
	spaces costalloc.Report
	end    time.Time // zero until the first successful refresh
	errs   int
}

// New returns an exporter of cost rates over the trailing window (e.g. one
// hour) that src supplies. It publishes nothing but metrics.CostWindowSeconds and
// metrics.CostRefreshErrorsTotal until its first successful Refresh.
func New(src Source, window time.Duration) *Exporter {
	return &Exporter{src: src, window: window}
}

// Refresh accounts for the window ending at now and publishes it; it sets
// the Input's From and To to the window itself. On error
// the last good figures stay published and metrics.CostRefreshErrorsTotal counts one more.
func (e *Exporter) Refresh(ctx context.Context, now time.Time) error {
	from := now.Add(-e.window)
	in, err := e.src(ctx, from, now)
	if err == nil {
		in.From, in.To = from.UnixMilli(), now.UnixMilli()
		var l *costalloc.Ledger
		if l, err = costalloc.Compute(in); err == nil {
			teams, spaces := l.Report(costalloc.ByTeam), l.Report(costalloc.ByNamespace)
			e.mu.Lock()
			e.teams, e.spaces, e.end = teams, spaces, now
			e.mu.Unlock()
			return nil
		}
	}
	e.mu.Lock()
	e.errs++
	e.mu.Unlock()
	return err
}

// Run refreshes at once and then every period until ctx is done, passing
// each refresh's error to report (which may be nil).
func (e *Exporter) Run(ctx context.Context, period time.Duration, report func(error)) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	now := e.Now
	if now == nil {
		now = time.Now
	}
	for {
		if err := e.Refresh(ctx, now()); err != nil && report != nil && ctx.Err() == nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Describe sends the descriptors of every metric.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, n := range Names() {
		ch <- descs[n]
	}
}

// Collect sends the figures of the last successful refresh.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	secs := e.window.Seconds()
	ch <- prometheus.MustNewConstMetric(descs[metrics.CostWindowSeconds], prometheus.GaugeValue, secs)
	ch <- prometheus.MustNewConstMetric(descs[metrics.CostRefreshErrorsTotal], prometheus.CounterValue, float64(e.errs))
	if e.end.IsZero() || secs <= 0 {
		return
	}
	ch <- prometheus.MustNewConstMetric(descs[metrics.CostLastRefreshTimestampSeconds], prometheus.GaugeValue, float64(e.end.UnixMilli())/1000)
	hours := secs / 3600
	rate := func(cents int64) float64 { return float64(cents) / (100 * secs) }
	rows := func(r costalloc.Report, cost, alloc, used string) {
		for _, x := range r.Rows {
			ch <- prometheus.MustNewConstMetric(descs[cost], prometheus.GaugeValue, rate(x.CostCents), x.Key)
			ch <- prometheus.MustNewConstMetric(descs[alloc], prometheus.GaugeValue, x.GPUHoursAllocated/hours, x.Key)
			ch <- prometheus.MustNewConstMetric(descs[used], prometheus.GaugeValue, x.GPUHoursUsed/hours, x.Key)
		}
	}
	rows(e.teams, metrics.CostTeamUSDPerSecond, metrics.CostTeamAllocatedGPUs, metrics.CostTeamUsedGPUs)
	rows(e.spaces, metrics.CostNamespaceUSDPerSecond, metrics.CostNamespaceAllocatedGPUs, metrics.CostNamespaceUsedGPUs)
	for _, x := range e.teams.Idle {
		ch <- prometheus.MustNewConstMetric(descs[metrics.CostIdleUSDPerSecond], prometheus.GaugeValue, rate(x.CostCents), x.Node, x.Model)
		ch <- prometheus.MustNewConstMetric(descs[metrics.CostIdleGPUs], prometheus.GaugeValue, x.GPUHours/hours, x.Node, x.Model)
	}
}

// Handler serves the exporter's metrics (and nothing else) in the
// Prometheus and OpenMetrics text formats.
func (e *Exporter) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Serve serves /metrics on ln until ctx is done, then shuts the server
// down and returns nil; other server errors are returned.
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done, shut := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(shut)
		select {
		case <-ctx.Done():
			srv.Shutdown(context.Background())
		case <-done:
		}
	}()
	err := srv.Serve(ln)
	close(done)
	<-shut // Shutdown has returned: every connection is closed
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
