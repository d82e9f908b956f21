package costsrc

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/cost"
	"github.com/gpuplane/gpuplane/internal/costalloc"
)

// monthSeries returns the decoded series of a synthetic month: 1,000 H100s
// on 125 nodes sampled every minute for 30 days (43,200 steps), 20,000
// pods, 20 after one another on each GPU, each holding it whole for 1.5
// days less a 10-minute gap, with utilisation and frame-buffer series;
// health series name the GPUs (one sample each: the reader keeps no more).
func monthSeries() (Window, map[string][]series) {
	const gpus, podsPerGPU, step = 1000, 20, 60_000
	w := Window{From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), Step: step}
	n := 30 * 24 * 60
	w.To = w.From + int64(n)*step
	by := map[string][]series{}
	per := n / podsPerGPU
	for g := range gpus {
		base := map[string]string{labelHostname: fmt.Sprintf("node-%03d", g/8), labelUUID: fmt.Sprintf("GPU-%04d", g), labelModel: "NVIDIA H100 80GB HBM3"}
		by[metricHealth] = append(by[metricHealth], series{labels: base, t: []int64{w.From}, v: []float64{1}})
		util := series{labels: base, t: make([]int64, n), v: make([]float64, n)}
		for i := range n {
			util.t[i] = w.From + int64(i)*step
			util.v[i] = float64((g + i) % 101)
		}
		by[metricGPUUtil] = append(by[metricGPUUtil], util)
		for p := range podsPerGPU {
			l := map[string]string{labelNamespace: fmt.Sprintf("ns-%d", (g*podsPerGPU+p)%50), labelPod: fmt.Sprintf("pod-%d-%d", g, p), "container": "main"}
			for k, v := range base {
				l[k] = v
			}
			m := per - 10
			sh := series{labels: l, t: make([]int64, m), v: make([]float64, m)}
			fb := series{labels: l, t: make([]int64, m), v: make([]float64, m)}
			for i := range m {
				sh.t[i] = w.From + int64(p*per+i)*step
				sh.v[i] = 1
				fb.t[i] = sh.t[i]
				fb.v[i] = float64(1024 * (i % 80))
			}
			by[metricShare] = append(by[metricShare], sh)
			by[metricFBUsed] = append(by[metricFBUsed], fb)
		}
	}
	return w, by
}

// BenchmarkMonth times the accounting of a month from decoded series
// (build, costalloc.Compute and a report by namespace); docs/cost.md
// holds its figures:
//
//	go test -run '^$' -bench BenchmarkMonth -benchtime 1x -benchmem ./internal/costsrc/
func BenchmarkMonth(b *testing.B) {
	w, by := monthSeries()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		r, err := build(w, by)
		if err != nil {
			b.Fatal(err)
		}
		r.Input.Prices = cost.Default()
		l, err := costalloc.Compute(r.Input)
		if err != nil {
			b.Fatal(err)
		}
		rep := l.Report(costalloc.ByNamespace)
		if len(rep.Rows) != 50 || len(r.Input.Holdings) != 20_000 || len(r.Usage) != 20_000 {
			b.Fatalf("rows %d holdings %d usage %d", len(rep.Rows), len(r.Input.Holdings), len(r.Usage))
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(before.HeapAlloc)/(1<<20), "input-MiB")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "result-MiB")
		runtime.KeepAlive(r)
	}
}
