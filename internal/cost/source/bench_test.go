// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// month feeds a synthetic month to b, series by series as a reader does:
// 1,000 H100s on 125 nodes sampled every minute for 30 days (43,200
// steps), 20,000 pods, 20 after one another on each GPU, each holding it
// whole for 1.5 days less a 10-minute gap, with utilisation and
// frame-buffer series, and a health series per GPU.
func month(b *builder) error {
	const gpus, podsPerGPU = 1000, 20
	w := b.w
	n := w.points()
	per := n / podsPerGPU
	t := make([]int64, n)
	v := make([]float64, n)
	for i := range t {
		t[i] = w.From + int64(i)*w.Step
	}
	for g := range gpus {
		base := map[string]string{metrics.LabelHostname: fmt.Sprintf("node-%03d", g/8), metrics.LabelUUID: fmt.Sprintf("GPU-%04d", g), metrics.LabelModelName: "NVIDIA H100 80GB HBM3"}
		for i := range v {
			v[i] = 1
		}
		if err := b.add(metrics.DeviceHealth, base[metrics.LabelUUID], base, t, v); err != nil {
			return err
		}
		for i := range v {
			v[i] = float64((g + i) % 101)
		}
		if err := b.add(metrics.DCGMDevGPUUtil, base[metrics.LabelUUID], base, t, v); err != nil {
			return err
		}
		for p := range podsPerGPU {
			l := map[string]string{metrics.LabelNamespace: fmt.Sprintf("ns-%d", (g*podsPerGPU+p)%50), metrics.LabelPod: fmt.Sprintf("pod-%d-%d", g, p), "container": "main"}
			for k, x := range base {
				l[k] = x
			}
			key := l[metrics.LabelPod]
			pt := t[p*per : p*per+per-10]
			for i := range pt {
				v[i] = 1
			}
			if err := b.add(metrics.DeviceAllocationShare, key, l, pt, v[:len(pt)]); err != nil {
				return err
			}
			for i := range pt {
				v[i] = float64(1024 * (i % 80))
			}
			if err := b.add(metrics.DCGMDevFBUsed, key, l, pt, v[:len(pt)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkMonth times the accounting of a synthetic month (month) from
// its decoded series to the report by namespace: mapping the series as
// they arrive, alloc.Compute and the report. docs/cost.md holds its
// figures (peak memory: run it under /usr/bin/time -v):
//
//	go test -run '^$' -bench BenchmarkMonth -benchtime 1x -benchmem ./internal/cost/source/
func BenchmarkMonth(b *testing.B) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	w := Window{From: from, To: from + 30*24*3_600_000, Step: 60_000}
	for range b.N {
		bl := newBuilder(w)
		if err := month(bl); err != nil {
			b.Fatal(err)
		}
		r, err := bl.finish()
		if err != nil {
			b.Fatal(err)
		}
		r.Input.Prices = prices.Default()
		l, err := alloc.Compute(r.Input)
		if err != nil {
			b.Fatal(err)
		}
		rep := l.Report(alloc.ByNamespace)
		if len(rep.Rows) != 50 || len(r.Input.Holdings) != 20_000 || len(r.Usage) != 20_000 || r.Series != 42_000 {
			b.Fatalf("rows %d holdings %d usage %d series %d", len(rep.Rows), len(r.Input.Holdings), len(r.Usage), r.Series)
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "live-MiB")
	}
}
