// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeSynthetic writes a synthetic day as OpenMetrics: gpus H100s, 8 a
// node, sampled every minute; on each GPU 20 pods after one another, each
// holding it whole for 72 minutes less 2, with utilisation and memory.
func writeSynthetic(w io.Writer, gpus int, from time.Time) error {
	bw := bufio.NewWriter(w)
	const steps, podsPerGPU = 1440, 20
	per := steps / podsPerGPU
	base := func(g int) string {
		return fmt.Sprintf(`Hostname="node-%03d",UUID="GPU-%04d",modelName="NVIDIA H100 80GB HBM3"`, g/8, g)
	}
	pod := func(g, p int) string {
		return fmt.Sprintf(`,namespace="ns-%d",pod="pod-%d-%d",container="main"`, (g*podsPerGPU+p)%50, g, p)
	}
	ts := func(i int) int64 { return from.Unix() + int64(i)*60 }
	fmt.Fprintln(bw, "# TYPE gpuplane_device_health gauge")
	for g := range gpus {
		for i := range steps {
			fmt.Fprintf(bw, "gpuplane_device_health{%s} 1 %d\n", base(g), ts(i))
		}
	}
	fmt.Fprintln(bw, "# TYPE gpuplane_device_allocation_share gauge")
	for g := range gpus {
		for p := range podsPerGPU {
			for i := p * per; i < (p+1)*per-2; i++ {
				fmt.Fprintf(bw, "gpuplane_device_allocation_share{%s%s} 1 %d\n", base(g), pod(g, p), ts(i))
			}
		}
	}
	fmt.Fprintln(bw, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge")
	for g := range gpus {
		for i := range steps {
			fmt.Fprintf(bw, "DCGM_FI_DEV_GPU_UTIL{%s} %d %d\n", base(g), (g+i)%101, ts(i))
		}
	}
	fmt.Fprintln(bw, "# TYPE DCGM_FI_DEV_FB_USED gauge")
	for g := range gpus {
		for p := range podsPerGPU {
			for i := p * per; i < (p+1)*per-2; i++ {
				fmt.Fprintf(bw, "DCGM_FI_DEV_FB_USED{%s%s} %d %d\n", base(g), pod(g, p), 1024*(i%80), ts(i))
			}
		}
	}
	fmt.Fprintln(bw, "# EOF")
	return bw.Flush()
}

// BenchmarkPrometheusRead times reading a synthetic day of 100 GPUs (1,440
// steps, 2,000 pods, 568,000 samples) back from a real Prometheus into which
// promtool backfilled it, and accounting for it: the part a cost run
// spends on Prometheus. docs/cost.md holds its figures:
//
//	go test -run '^$' -bench BenchmarkPrometheusRead -benchtime 3x ./internal/cost/cli/
func BenchmarkPrometheusRead(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "day.om")
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeSynthetic(f, 100, from); err != nil {
		b.Fatal(err)
	}
	f.Close()
	start := time.Now()
	base := startPrometheus(b, backfill(b, file))
	b.Logf("backfill and start: %v", time.Since(start))
	o := Options{Prometheus: base, From: from.Format(time.RFC3339), To: from.Add(24 * time.Hour).Format(time.RFC3339), Step: time.Minute, By: "namespace", Format: "csv"}
	b.ResetTimer()
	for range b.N {
		if err := Run(context.Background(), o, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
