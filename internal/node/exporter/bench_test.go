// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// benchNode is an 8-GPU node with 7 MIG devices on each GPU (56), and 64
// pods: 48 MIG devices held by one pod each, 8 shared by two pods each
// through time-slicing.
func benchNode() (device.Node, []device.Sample, *podresources.Mapping) {
	var node device.Node
	var samples []device.Sample
	var allocs []podresources.Allocation
	full := func(uuid string, v float64) device.Sample {
		s := device.Sample{UUID: uuid}
		for i, p := range []**float64{
			&s.GPUUtil, &s.MemCopyUtil, &s.FBUsedMiB, &s.FBFreeMiB, &s.GPUTemp, &s.MemoryTemp,
			&s.PowerW, &s.TotalEnergyMJ, &s.SMClockMHz, &s.MemClockMHz, &s.LastXID, &s.PCIeReplay,
			&s.ECCSBEVolatile, &s.ECCDBEVolatile, &s.ECCSBEAggregate, &s.ECCDBEAggregate,
			&s.RowRemapCorrectable, &s.RowRemapUncorrectable, &s.RowRemapPending, &s.RowRemapFailure,
			&s.ProfGrEngineActive, &s.ProfSMActive, &s.ProfTensorActive, &s.ProfDRAMActive,
		} {
			*p = ptr(v + float64(i))
		}
		return s
	}
	pod := 0
	for g := range 8 {
		gpu := device.GPU{Index: g, UUID: fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", g),
			PCIBusID: fmt.Sprintf("00000000:%02X:00.0", 0x10+g), ProductName: "NVIDIA H100 80GB HBM3", MIGEnabled: true}
		samples = append(samples, full(gpu.UUID, float64(g)))
		for m := range 7 {
			mig := device.MIGDevice{UUID: fmt.Sprintf("MIG-%08d-%04d-0000-0000-000000000000", g, m), Profile: "1g.10gb", GPUInstanceID: 7 + m}
			gpu.MIG = append(gpu.MIG, mig)
			samples = append(samples, device.Sample{UUID: mig.UUID, GPUUtil: ptr(50), FBUsedMiB: ptr(1000), FBFreeMiB: ptr(9000),
				ProfGrEngineActive: ptr(.5), ProfSMActive: ptr(.4), ProfTensorActive: ptr(.3), ProfDRAMActive: ptr(.2)})
			shares := 1
			if m == 6 {
				shares = 2
			}
			for k := range shares {
				allocs = append(allocs, podresources.Allocation{ResourceName: "nvidia.com/mig-1g.10gb",
					DeviceID: fmt.Sprintf("%s::%d", mig.UUID, k),
					Owner:    podresources.Owner{Namespace: "team-a", Pod: fmt.Sprintf("job-%d", pod), Container: "main"}})
				pod++
			}
		}
		node.GPUs = append(node.GPUs, gpu)
	}
	if pod != 64 {
		panic(fmt.Sprintf("%d pods", pod))
	}
	return node, samples, &podresources.Mapping{Allocations: allocs}
}

func newBenchExporter(b *testing.B) *Exporter {
	node, samples, mapping := benchNode()
	e, err := New(Options{Backend: newFakeBackend(node, samples), Hostname: "node-a", Pods: &fakePods{mapping: mapping}})
	if err != nil {
		b.Fatal(err)
	}
	e.state.setNode(node)
	e.state.setMapping(mapping)
	t0 := time.Now()
	e.now = func() time.Time { return t0 } // samples never go stale here
	e.state.addSamples(samples, t0)
	e.current.Store(e.state.snapshot())
	return e
}

// BenchmarkScrape serves /metrics of the 8-GPU, 56-MIG, 64-pod node: the
// work of one scrape, in plain text and gzip-compressed (as Prometheus asks).
func BenchmarkScrape(b *testing.B) {
	e := newBenchExporter(b)
	h := e.Handler()
	series := 0
	mfs, _ := e.Gatherer().Gather()
	for _, mf := range mfs {
		series += len(mf.GetMetric())
	}
	for _, enc := range []string{"identity", "gzip"} {
		b.Run(enc, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", enc)
			var size int
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
			b.ReportMetric(float64(series), "series")
		})
	}
}

// BenchmarkSampleCycle is the exporter's own work for one sample of the
// node (keeping the samples and building the snapshot), the work done once
// per second at the default interval; the backend's Sample is not included.
func BenchmarkSampleCycle(b *testing.B) {
	e := newBenchExporter(b)
	_, samples, _ := benchNode()
	b.ReportAllocs()
	for b.Loop() {
		e.state.addSamples(samples, e.now())
		e.current.Store(e.state.snapshot())
	}
}

// BenchmarkPodMappingChange is the work when the pod mapping changes:
// resolving device IDs and building the label sets of every series.
func BenchmarkPodMappingChange(b *testing.B) {
	e := newBenchExporter(b)
	_, _, mapping := benchNode()
	b.ReportAllocs()
	for b.Loop() {
		m := *mapping // a new pointer: a changed mapping
		e.state.setMapping(&m)
		e.current.Store(e.state.snapshot())
	}
}

// BenchmarkRunCPU runs the exporter's background loop (sampling a backend
// that answers at once, following health and the pod mapping) on the 8-GPU,
// 56-MIG, 64-pod node with a 1 ms interval, and reports the process CPU
// time (user + system, from getrusage, GC included) per sample: the CPU
// time the exporter spends per second at the default 1 s interval, scrapes
// aside.
func BenchmarkRunCPU(b *testing.B) {
	node, samples, mapping := benchNode()
	fb := newFakeBackend(node, samples)
	e, err := New(Options{Backend: fb, Hostname: "node-a", Pods: &fakePods{mapping: mapping}, SampleInterval: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	var before, after syscall.Rusage
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	go func() { done <- e.Run(ctx) }()
	for fb.sampleCalls() < b.N {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(fb.sampleCalls()), "cpu-ns/sample")
}

// denseProfile is a mock DGX A100 with every GPU in MIG mode, split into
// seven 1g.10gb devices (56 MIG devices).
const denseProfile = `name: dense-a100-mig
driverVersion: "550.54.15"
cudaDriverVersion: "12.4"
gpus:
  - count: 8
    productName: NVIDIA A100-SXM4-80GB
    numaNode: 0
    multiprocessors: 108
    mig: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]
    telemetry: {utilizationPct: [25, 75], powerW: 300, smClockMHz: 1410, memClockMHz: 1593}
links:
  all: NV12
`

// newDenseExporter returns an exporter of the mock dense node, its devices
// and one sample of them known, and each of the 56 MIG devices held by one
// pod (the device plugin's mixed strategy: nvidia.com/mig-1g.10gb).
func newDenseExporter(b testing.TB) *Exporter {
	p, err := mock.ParseProfile("dense.yaml", []byte(denseProfile))
	if err != nil {
		b.Fatal(err)
	}
	be, err := mock.New(p, mock.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	node, err := be.Discover(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var allocs []podresources.Allocation
	for _, g := range node.GPUs {
		for _, m := range g.MIG {
			allocs = append(allocs, podresources.Allocation{ResourceName: "nvidia.com/mig-1g.10gb", DeviceID: m.UUID,
				Owner: podresources.Owner{Namespace: "team-a", Pod: fmt.Sprintf("job-%d", len(allocs)), Container: "main"}})
		}
	}
	if len(allocs) != 56 {
		b.Fatalf("%d MIG devices, want 56", len(allocs))
	}
	mapping := &podresources.Mapping{Allocations: allocs}
	e, err := New(Options{Backend: be, Hostname: "node-a", Pods: &fakePods{mapping: mapping}})
	if err != nil {
		b.Fatal(err)
	}
	samples, err := be.Sample(ctx)
	if err != nil {
		b.Fatal(err)
	}
	e.state.setNode(node)
	e.state.setMapping(mapping)
	t0 := time.Now()
	e.now = func() time.Time { return t0 } // samples never go stale here
	if e.state.addSamples(samples, t0) {
		b.Fatal("a sample of an unknown device")
	}
	e.current.Store(e.state.snapshot())
	return e
}

// countingWriter is an http.ResponseWriter that counts the body's bytes
// and keeps none, as a server writing to a socket.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header         { return w.header }
func (w *countingWriter) WriteHeader(code int)        { w.code = code }
func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkScrapeDense serves /metrics of the dense node (8 A100-80GB in MIG
// mode, 56 1g.10gb devices, 56 pods): one scrape through the HTTP handler,
// plain text and gzip-compressed (as Prometheus asks), with the median and
// 99th percentile of the scrapes' durations (p50-ns, p99-ns). The response
// is counted, not kept.
func BenchmarkScrapeDense(b *testing.B) {
	e := newDenseExporter(b)
	h := e.Handler()
	series := 0
	mfs, err := e.Gatherer().Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		series += len(mf.GetMetric())
	}
	for _, enc := range []string{"identity", "gzip"} {
		b.Run(enc, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", enc)
			var size int
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				w := &countingWriter{header: http.Header{}, code: http.StatusOK}
				h.ServeHTTP(w, req)
				took = append(took, time.Since(start))
				if w.code != http.StatusOK {
					b.Fatal(w.code)
				}
				size = w.n
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(size), "bytes/scrape")
			b.ReportMetric(float64(series), "series")
		})
	}
}
