// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/gpuplane/gpuplane/api/metrics"
)

// maxPoints is the most grid times one range query asks for: Prometheus
// refuses more than 11,000 points per series (web/api/v1/api.go,
// "exceeded maximum resolution of 11,000 points per timeseries"), and
// each answer is held in memory whole until it is mapped, so longer
// windows are read in pieces of 2,000 steps.
const maxPoints = 2_000

// ReadPrometheus reads the node agent's series over w from the Prometheus
// at address (e.g. http://prometheus:9090) with range queries of
// last_over_time(metric[Step - 1ms]) at step Step: at each grid time t, the
// last sample in (t-Step, t]. A series therefore counts at t once per
// step, whatever the scrape interval up to Step, and stops counting one
// step after its last sample instead of Prometheus's 5-minute lookback.
// Any error (Prometheus down, a query refused) fails the whole read.
func ReadPrometheus(ctx context.Context, address string, w Window) (*Result, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	if u, err := url.Parse(address); err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("prometheus address %q: want a URL such as http://prometheus:9090", address)
	}
	client, err := api.NewClient(api.Config{Address: address})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", address, err)
	}
	v1 := promv1.NewAPI(client)
	b := newBuilder(w)
	last := w.last()
	var ts []int64
	var vs []float64
	for _, name := range Metrics {
		q := promQuery(name, w.Step)
		for start := w.From; start <= last; start += maxPoints * w.Step {
			end := min(start+(maxPoints-1)*w.Step, last)
			val, warns, _, err := v1.QueryRange(ctx, q, promv1.Range{Start: time.UnixMilli(start), End: time.UnixMilli(end), Step: time.Duration(w.Step) * time.Millisecond})
			if err != nil {
				var pe *promv1.Error
				if errors.As(err, &pe) {
					return nil, fmt.Errorf("prometheus %s: query %s: %s: %s", address, q, pe.Type, pe.Msg)
				}
				return nil, fmt.Errorf("prometheus %s: query %s: %w", address, q, err)
			}
			for _, x := range warns {
				b.warn(fmt.Sprintf("prometheus %s: query %s: %s", address, q, x))
			}
			m, ok := val.(model.Matrix)
			if !ok {
				return nil, fmt.Errorf("prometheus %s: query %s: answer of type %s, want a matrix", address, q, val.Type())
			}
			for _, ss := range m {
				l := make(map[string]string, len(ss.Metric))
				for k, v := range ss.Metric {
					if k != model.MetricNameLabel {
						l[string(k)] = string(v)
					}
				}
				ts, vs = ts[:0], vs[:0]
				for _, p := range ss.Values {
					ts = append(ts, int64(p.Timestamp))
					vs = append(vs, float64(p.Value))
				}
				if err := b.add(name, ss.Metric.String(), l, ts, vs); err != nil {
					return nil, fmt.Errorf("prometheus %s: %w", address, err)
				}
			}
		}
	}
	if err := checkCoarseStep(ctx, v1, address, w, b); err != nil {
		return nil, err
	}
	return b.finish()
}

// vendorRequests selects kube-state-metrics' requests of vendorResources.
const vendorRequests = KSMPodRequests + `{resource=~"amd_com_gpu|habana_ai_gaudi"}`

// promQuery is the range query of metric name at step (ms): its last
// sample in each step, last_over_time(name[step - 1ms]); of
// kube-state-metrics' requests, those of vendorResources only, and of its
// running containers, those with such a request (the cluster's other
// containers are of no use here).
func promQuery(name string, step int64) string {
	last := func(sel string) string {
		if step == 1 {
			return sel // no window shorter than 1 ms
		}
		return fmt.Sprintf("last_over_time(%s[%dms])", sel, step-1)
	}
	switch name {
	case KSMPodRequests:
		return last(vendorRequests)
	case KSMContainerRunning:
		return last(name) + " and on(namespace, pod, container) " + last(vendorRequests)
	}
	return last(name)
}

// coarseStepSpan is how much of the window's end checkCoarseStep counts
// samples over, so that the query loads few samples whatever the window.
const coarseStepSpan = 3_600_000 // 1 h in ms

// checkCoarseStep warns when the step is coarser than the scrape interval:
// a pod present at any sample of a step then counts for the whole step. It
// estimates the interval from the median number of samples per health
// series over the last hour of the window (at most; the window's span when
// shorter), a count that series present for part of that span only lower
// (so it errs towards no warning), and warns when the step exceeds 1.5
// times the estimate. No series there: no check.
func checkCoarseStep(ctx context.Context, v1 promv1.API, address string, w Window, b *builder) error {
	span := min(w.To-w.From, coarseStepSpan)
	q := fmt.Sprintf("quantile(0.5, count_over_time(%s[%dms]))", metrics.DeviceHealth, span)
	val, _, _, err := v1.Query(ctx, q, time.UnixMilli(w.To-1))
	if err != nil {
		return fmt.Errorf("prometheus %s: query %s: %w", address, q, err)
	}
	vec, ok := val.(model.Vector)
	if !ok || len(vec) == 0 || vec[0].Value < 2 {
		return nil
	}
	interval := time.Duration(float64(span)/float64(vec[0].Value)) * time.Millisecond
	if step := time.Duration(w.Step) * time.Millisecond; float64(step) > 1.5*float64(interval) {
		b.warn(fmt.Sprintf("the step (%v) is coarser than Prometheus's samples (about one every %v over the window's last %v): a pod present at any sample of a step counts for the whole step; give --step %v", step, interval.Round(time.Second), time.Duration(span)*time.Millisecond, interval.Round(time.Second)))
	}
	return nil
}
