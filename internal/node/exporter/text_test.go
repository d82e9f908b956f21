// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// Accept headers: none, Prometheus 3's default scrape_protocols (it names
// OpenMetrics first, which the exporter does not offer), and the text
// format 1.0.0 with UTF-8 names allowed.
var textAccepts = []string{
	"",
	"application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
	"text/plain;version=1.0.0;escaping=allow-utf-8",
}

// assertTextMatchesRegistry scrapes e through serveText and through
// promhttp on the whole registry (the path every scrape took before), for
// each Accept header, plain and gzip, and requires the same headers and
// the same body once uncompressed.
func assertTextMatchesRegistry(t *testing.T, e *Exporter) {
	t.Helper()
	slow := promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	for _, accept := range textAccepts {
		for _, enc := range []string{"", "identity", "gzip"} {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			if enc != "" {
				req.Header.Set("Accept-Encoding", enc)
			}
			want := httptest.NewRecorder()
			slow.ServeHTTP(want, req)
			got := httptest.NewRecorder()
			if !e.serveText(got, req, e.others) {
				t.Fatalf("Accept %q, Accept-Encoding %q: not served from the snapshot's text", accept, enc)
			}
			for _, h := range []string{"Content-Type", "Content-Encoding"} {
				if got.Header().Get(h) != want.Header().Get(h) {
					t.Errorf("Accept %q, Accept-Encoding %q: %s %q, want %q", accept, enc, h, got.Header().Get(h), want.Header().Get(h))
				}
			}
			if g, w := got.Header().Values("Vary"), want.Header().Values("Vary"); !slices.Equal(g, w) {
				t.Errorf("Vary %q, want %q", g, w)
			}
			gb, wb := body(t, got), body(t, want)
			if len(wb) == 0 || !bytes.Equal(gb, wb) {
				t.Fatalf("Accept %q, Accept-Encoding %q: served\n%s\nthe registry serves\n%s", accept, enc, gb, wb)
			}
		}
	}
}

func body(t *testing.T, r *httptest.ResponseRecorder) []byte {
	t.Helper()
	if r.Header().Get("Content-Encoding") != "gzip" {
		return r.Body.Bytes()
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTextMatchesRegistry(t *testing.T) {
	t.Run("attributed", func(t *testing.T) {
		e, _ := newTestExporter(t, &fakePods{mapping: testMapping, errors: 2})
		assertTextMatchesRegistry(t, e)
	})
	t.Run("stale samples", func(t *testing.T) {
		e, t0 := newTestExporter(t, &fakePods{mapping: testMapping})
		e.state.addSamples(testSamples[:1], t0.Add(2*time.Second))
		e.current.Store(e.state.snapshot())
		e.now = func() time.Time { return t0.Add(3*time.Second + time.Millisecond) }
		assertTextMatchesRegistry(t, e)
	})
	t.Run("virtual GPUs", func(t *testing.T) {
		e, err := New(Options{Backend: newFakeBackend(testNode, testSamples), Fields: testFields(t), Hostname: "node-a",
			Pods: &fakePods{mapping: testMapping}, VirtualGPUs: true})
		if err != nil {
			t.Fatal(err)
		}
		e.state.setNode(testNode)
		e.state.setMapping(testMapping)
		e.state.addSamples(testSamples, time.Now())
		e.current.Store(e.state.snapshot())
		assertTextMatchesRegistry(t, e)
	})
	t.Run("every field, escapes, special values, other collectors", func(t *testing.T) {
		// A collector whose names sort before, between and after the
		// exporter's; label values and help with \, " and newlines.
		other := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "DCGM_FI_DEV_A", Help: "a \\ \"b\"\nc"}, []string{"x"})
		other.WithLabelValues("q\"\\\n").Set(2.5)
		last := prometheus.NewCounter(prometheus.CounterOpts{Name: "zz_total", Help: "z"})
		last.Add(1e21)
		e, err := New(Options{Backend: newFakeBackend(testNode, nil), Hostname: "node \"a\"\\\n",
			Collectors: []prometheus.Collector{other, last}})
		if err != nil {
			t.Fatal(err)
		}
		node := testNode
		node.DriverVersion = "550.54.15"
		node.GPUs = slices.Clone(node.GPUs)
		node.GPUs[0].ProductName = "NVIDIA \"H100\"\\x\ny"
		e.state.setNode(node)
		full := device.Sample{UUID: "GPU-0000"}
		vals := []float64{0, 1, -1, math.NaN(), math.Inf(1), math.Inf(-1), 1e-7, 123456789012, 0.1, 79}
		for i, p := range []**float64{
			&full.GPUUtil, &full.MemCopyUtil, &full.FBUsedMiB, &full.FBFreeMiB, &full.GPUTemp, &full.MemoryTemp,
			&full.PowerW, &full.TotalEnergyMJ, &full.SMClockMHz, &full.LastXID, &full.ProfSMActive,
		} {
			*p = ptr(vals[i%len(vals)])
		}
		e.state.setMapping(&podresources.Mapping{Allocations: []podresources.Allocation{
			{ResourceName: "nvidia.com/mig-1g.10gb", DeviceID: "MIG-bbbb", Owner: owner("ns", "p\"o\\d", "c")},
		}})
		e.state.addSamples([]device.Sample{full, {UUID: "MIG-bbbb", GPUUtil: ptr(3)}}, time.Now())
		e.current.Store(e.state.snapshot())
		assertTextMatchesRegistry(t, e)
	})
	t.Run("help with backslashes and quotes", func(t *testing.T) {
		fields, _, err := ParseFields("f.csv", []byte(`DCGM_FI_DEV_GPU_UTIL, gauge, a \ b "c" \n d`+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(Options{Backend: newFakeBackend(testNode, nil), Fields: fields, Hostname: "node-a"})
		if err != nil {
			t.Fatal(err)
		}
		e.state.setNode(testNode)
		e.state.addSamples(testSamples, time.Now())
		e.current.Store(e.state.snapshot())
		assertTextMatchesRegistry(t, e)
	})
	t.Run("dense MIG node", func(t *testing.T) {
		assertTextMatchesRegistry(t, newDenseExporter(t))
	})
}

// TestTextFallsBack: what the snapshot's text cannot serve goes through
// the registry: protobuf, zstd, a name filter, a label value that is not
// UTF-8 (the registry drops that series and reports it).
func TestTextFallsBack(t *testing.T) {
	e, _ := newTestExporter(t, &fakePods{mapping: testMapping})
	for _, h := range []map[string]string{
		{"Accept": "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"},
		{"Accept-Encoding": "zstd"},
		{"Accept-Encoding": "gzip;q=0.5, identity"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if e.serveText(httptest.NewRecorder(), req, e.others) {
			t.Errorf("%v: served from the text", h)
		}
	}
	if e.serveText(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/metrics?name[]=DCGM_FI_DEV_GPU_UTIL", nil), e.others) {
		t.Error("name filter: served from the text")
	}
	e.state.setMapping(&podresources.Mapping{Allocations: []podresources.Allocation{
		{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0000", Owner: owner("ns", "p\xff", "c")},
	}})
	e.current.Store(e.state.snapshot())
	if e.current.Load().text != nil {
		t.Error("a label value that is not UTF-8 rendered")
	}
}
