// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package source reads the node agent's metrics, and for AMD Instinct and
// Intel Gaudi devices their vendors' exporters' and kube-state-metrics'
// series, over a window into the input of the cost accounting
// (internal/cost/alloc): the GPUs, who held which share of which GPU when,
// each GPU's utilisation, and per-pod usage series for right-sizing. It reads them from Prometheus's HTTP API (range
// queries, ReadPrometheus) or from an OpenMetrics file of the kind promtool
// backfills (ReadOpenMetrics); both evaluate the series on the same grid of
// steps, so that the same data gives the same input. docs/cost.md gives the
// mapping rules.
package source

import (
	"fmt"
	"math"
	"time"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
)

// Metrics are the metric names read, in the order read: the node agent's
// series (api/metrics; docs/metrics.md), then kube-state-metrics' of the
// AMD and Gaudi pods' requests and nodes (vendor.go), then AMD's and
// Intel Gaudi's exporters' (exporter.go), which need the nodes' models
// and the requests' nodes read before them.
var Metrics = []string{metrics.DeviceHealth, metrics.DeviceAllocationShare, metrics.DCGMProfGrEngineActive, metrics.DCGMDevGPUUtil, metrics.DCGMDevFBUsed, KSMNodeLabels, KSMContainerRunning, KSMPodRequests, AMDTotalVRAM, AMDGFXActivity, GaudiUtilization}

// DefaultStep is the default time between two evaluations, in milliseconds:
// 30 s, at least the Helm chart's ServiceMonitor interval (15 s,
// deploy/helm/gpuplane/values.yaml) and the usual 15 to 30 s scrape
// intervals. Prometheus's own default, 1 minute, needs --step 1m.
const DefaultStep = 30_000

// Window is the time range read and its grid: the series are evaluated at
// From, From+Step, ... before To, in Unix milliseconds; each evaluation
// stands for [t, t+Step).
type Window struct {
	From, To, Step int64
}

// MaxSteps is the most grid times a window may have: a year at 30 s
// steps is 1,051,200. Each device's utilisation is a float32 per step,
// so more would take gigabytes (a day at 1 ms steps is 86,400,000).
const MaxSteps = 1_100_000

func (w Window) check() error {
	if w.Step <= 0 {
		return fmt.Errorf("step %d ms: want a positive step", w.Step)
	}
	if w.To <= w.From {
		return fmt.Errorf("window: to %s is not after from %s", fmtTime(w.To), fmtTime(w.From))
	}
	if n := (w.To-w.From-1)/w.Step + 1; n < 0 || n > MaxSteps {
		return fmt.Errorf("window %s to %s at step %v: %d steps, more than %d; want a longer step", fmtTime(w.From), fmtTime(w.To), dur(w.Step), n, MaxSteps)
	}
	return nil
}

// fmtTime writes a time in Unix milliseconds as RFC 3339, with its
// milliseconds if any.
func fmtTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// dur returns a duration in milliseconds as a time.Duration (which prints
// as 30m0s).
func dur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// span writes a length of time in milliseconds: as a duration up to two
// days, else in days.
func span(ms int64) string {
	if ms < 48*3_600_000 {
		return dur(ms).String()
	}
	return fmt.Sprintf("%.1f days", float64(ms)/86_400_000)
}

// last returns the last grid time of the window.
func (w Window) last() int64 { return w.From + (w.To-w.From-1)/w.Step*w.Step }

// points returns the number of grid times.
func (w Window) points() int { return int((w.To-w.From-1)/w.Step) + 1 }

// index returns the grid index of grid time t.
func (w Window) index(t int64) int64 { return (t - w.From) / w.Step }

// Usage is one pod's use of one device, on the grid, for right-sizing: its
// frame-buffer memory and its device's utilisation, over the steps from the
// first to the last of its DCGM_FI_DEV_FB_USED samples.
type Usage struct {
	Namespace, Pod string
	// GPU is the UUID of the GPU; MIGProfile and MIGInstance name the MIG
	// device, empty for a whole GPU.
	GPU, MIGProfile, MIGInstance string
	// Model is the GPU's catalog model.
	Model string
	// Start is the first grid time and Step the grid's step, in Unix
	// milliseconds: value i is at Start + i*Step.
	Start, Step int64
	// FBUsedMiB is DCGM_FI_DEV_FB_USED at each step, in MiB; NaN where
	// there was no sample.
	FBUsedMiB []float32
	// Util is the device's utilisation (0..1) at each step; NaN where
	// there was no sample.
	Util []float32
}

// Result is what a read gives.
type Result struct {
	// Input is the accounting's input; Prices is left for the caller.
	Input alloc.Input
	// Usage is each pod's use of each device it held, sorted by namespace,
	// pod, GPU, MIG instance.
	Usage []Usage
	// Unattributed counts share series without pod or namespace labels;
	// they are kept, as "(unattributed)" holdings.
	Unattributed int
	// Warnings lists what could not be mapped (series without a GPU UUID,
	// unknown GPU models, share values that are no fraction).
	Warnings []string
	// Series is how many series were read.
	Series int
}

// fraction returns v as num/den with den <= 1024 (time-slicing's largest
// replica count; milli-GPU shares have den 1000 at most) in (0, 1]. The
// node agent writes k/replicas as the float64 nearest it, and Prometheus
// keeps float64s exactly, so the fraction is found again exactly:
// fractions with denominators up to 1024 lie at least 1/1024^2 apart.
func fraction(v float64) (num, den int64, ok bool) {
	if !(v > 0 && v <= 1) {
		return 0, 0, false
	}
	for d := int64(1); d <= 1024; d++ {
		n := math.Round(v * float64(d))
		if n >= 1 && math.Abs(n/float64(d)-v) < 1e-9 {
			return int64(n), d, true
		}
	}
	return 0, 0, false
}

// utilKey returns the key of a series' device: the GPU's UUID, or
// UUID/GPU_I_ID for a MIG device.
func utilKey(l map[string]string) string {
	if i := l[metrics.LabelGPUInstanceID]; i != "" {
		return l[metrics.LabelUUID] + "/" + i
	}
	return l[metrics.LabelUUID]
}

// checkHealth refuses a gpuplane_device_health value outside 0..1 of the
// series (its metric and labels): the node agent writes 1 (healthy) or 0
// (unhealthy) (docs/metrics.md); another value is another exporter's
// series of that name, or a damaged file, and would be read as neither.
func checkHealth(metric, series string, v float64) error {
	if metric != metrics.DeviceHealth || v >= 0 && v <= 1 {
		return nil
	}
	return fmt.Errorf("%s: value %v: want 0 (unhealthy) or 1 (healthy), the node agent's", series, v)
}
