// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// testFields serves three fields: a gauge, a counter and a profiling ratio.
func testFields(t *testing.T) []Field {
	t.Helper()
	f, _, err := ParseFields("test.csv", []byte(`
DCGM_FI_DEV_GPU_UTIL, gauge
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter,
DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, Ratio of time the graphics engine is active.
`))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newTestExporter returns an exporter whose state holds testNode and
// testSamples (received at t0), with the given mapping, published.
func newTestExporter(t *testing.T, pods *fakePods) (*Exporter, time.Time) {
	t.Helper()
	opts := Options{Backend: newFakeBackend(testNode, testSamples), Fields: testFields(t), Hostname: "node-a"}
	if pods != nil {
		opts.Pods = pods
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.now = func() time.Time { return t0.Add(time.Second) }
	e.state.setNode(testNode)
	if pods != nil {
		e.state.setMapping(pods.Current())
	}
	e.state.addSamples(testSamples, t0)
	e.current.Store(e.state.snapshot())
	return e, t0
}

const (
	gpu0 = `Hostname="node-a",UUID="GPU-0000",device="nvidia0",gpu="0",modelName="NVIDIA H100 80GB HBM3",pci_bus_id="00000000:07:00.0"`
	gpu1 = `Hostname="node-a",UUID="GPU-1111",device="nvidia1",gpu="1",modelName="NVIDIA A100-SXM4-80GB",pci_bus_id="00000000:0F:00.0"`
	migA = gpu1 + `,GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"`
	migB = gpu1 + `,GPU_I_PROFILE="1g.10gb",GPU_I_ID="9"`
	podA = `,namespace="ml",pod="a",container="main"`
	podB = `,namespace="ml",pod="b",container="main"`
	podC = `,namespace="web",pod="c",container="srv"`
	podD = `,namespace="web",pod="d",container="srv"`
)

func TestAttributedExposition(t *testing.T) {
	e, _ := newTestExporter(t, &fakePods{mapping: testMapping, errors: 2})
	// GPU-0000 is shared by pods a, b and c: one series, without pod
	// labels, as dcgm-exporter serves a time-sliced GPU once (its
	// internal/pkg/transformation/kubernetes.go keeps one pod per device
	// unless --kubernetes-virtual-gpus); each holder shows in
	// gpuplane_device_allocation. The MIG devices carry GPU 1's labels
	// and their instance; MIG-aaaa belongs to pod d alone, so its series
	// carry d's labels; MIG-bbbb belongs to nobody. GPU 1 itself is no
	// pod's.
	want := `
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + `} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu1 + `} 7
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since the driver was loaded (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{` + gpu0 + `} 123456
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{` + gpu1 + `} 2000
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + `} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migA + podD + `} 0.25
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migB + `} 0.125
# HELP gpuplane_device_pods Number of pods the device is allocated to; above 1 when the GPU is shared by time-slicing.
# TYPE gpuplane_device_pods gauge
gpuplane_device_pods{` + gpu0 + `} 3
gpuplane_device_pods{` + gpu1 + `} 0
gpuplane_device_pods{` + migA + `} 1
gpuplane_device_pods{` + migB + `} 0
# HELP gpuplane_device_allocation 1 for each container the device is allocated to.
# TYPE gpuplane_device_allocation gauge
gpuplane_device_allocation{` + gpu0 + podA + `} 1
gpuplane_device_allocation{` + gpu0 + podB + `} 1
gpuplane_device_allocation{` + gpu0 + podC + `} 1
gpuplane_device_allocation{` + migA + podD + `} 1
# HELP gpuplane_device_health Whether the device is healthy (1) or not (0): it, or the GPU of a MIG device, is lost or had an XID error not caused by an application.
# TYPE gpuplane_device_health gauge
gpuplane_device_health{` + gpu0 + `} 1
gpuplane_device_health{` + gpu1 + `} 1
gpuplane_device_health{` + migA + `} 1
gpuplane_device_health{` + migB + `} 1
# HELP gpuplane_pod_resources_errors_total Failed refreshes of the pod-to-device mapping from the kubelet's pod-resources socket.
# TYPE gpuplane_pod_resources_errors_total counter
gpuplane_pod_resources_errors_total 2
# HELP gpuplane_pod_resources_up Whether the last refresh of the pod-to-device mapping succeeded (1) or not (0); pod labels are served only while it is 1.
# TYPE gpuplane_pod_resources_up gauge
gpuplane_pod_resources_up 1
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want),
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
		"gpuplane_device_pods", "gpuplane_device_allocation", "gpuplane_device_health",
		"gpuplane_pod_resources_errors_total", "gpuplane_pod_resources_up"); err != nil {
		t.Fatal(err)
	}
}

func TestWithoutPodsNoPodLabels(t *testing.T) {
	// The socket is down: the same metrics flow, without pod labels, and
	// the error counter says why.
	e, _ := newTestExporter(t, &fakePods{mapping: nil, errors: 5})
	want := `
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + `} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu1 + `} 7
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + `} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migA + `} 0.25
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migB + `} 0.125
# HELP gpuplane_pod_resources_errors_total Failed refreshes of the pod-to-device mapping from the kubelet's pod-resources socket.
# TYPE gpuplane_pod_resources_errors_total counter
gpuplane_pod_resources_errors_total 5
# HELP gpuplane_pod_resources_up Whether the last refresh of the pod-to-device mapping succeeded (1) or not (0); pod labels are served only while it is 1.
# TYPE gpuplane_pod_resources_up gauge
gpuplane_pod_resources_up 0
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want),
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
		"gpuplane_pod_resources_errors_total", "gpuplane_pod_resources_up"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(e.Gatherer(), "gpuplane_device_allocation"); err != nil || n != 0 {
		t.Fatalf("allocation series without a mapping: %d (%v), want 0", n, err)
	}
}

func TestStaleSamplesAreDropped(t *testing.T) {
	e, t0 := newTestExporter(t, nil)
	// Default StaleAfter: 3 intervals of 1 s. At t0+3s the sample is still
	// served; at t0+3.001s it is not, but the device's health still is.
	e.now = func() time.Time { return t0.Add(3 * time.Second) }
	if n := testutil.CollectAndCount((*collector)(e), "DCGM_FI_DEV_GPU_UTIL"); n != 2 {
		t.Fatalf("at the stale limit: %d GPU_UTIL series, want 2", n)
	}
	e.now = func() time.Time { return t0.Add(3*time.Second + time.Millisecond) }
	if n := testutil.CollectAndCount((*collector)(e), "DCGM_FI_DEV_GPU_UTIL"); n != 0 {
		t.Fatalf("past the stale limit: %d GPU_UTIL series, want 0", n)
	}
	if n := testutil.CollectAndCount((*collector)(e), "gpuplane_device_health"); n != 4 {
		t.Fatalf("past the stale limit: %d health series, want 4", n)
	}
	// A newer sample of one GPU brings back that GPU only.
	e.state.addSamples(testSamples[:1], t0.Add(3*time.Second))
	e.current.Store(e.state.snapshot())
	if n := testutil.CollectAndCount((*collector)(e), "DCGM_FI_DEV_GPU_UTIL"); n != 1 {
		t.Fatalf("after a new sample of GPU 0: %d GPU_UTIL series, want 1", n)
	}
}

func TestHealthEvents(t *testing.T) {
	e, _ := newTestExporter(t, nil)
	health := func() string {
		e.current.Store(e.state.snapshot())
		var b strings.Builder
		for _, uuid := range []string{"GPU-0000", "GPU-1111", "MIG-aaaa", "MIG-bbbb"} {
			if e.state.devHealth.Healthy(uuid) {
				b.WriteString("1")
			} else {
				b.WriteString("0")
			}
		}
		return b.String()
	}
	steps := []struct {
		ev   device.HealthEvent
		want string
	}{
		{device.HealthEvent{UUID: "GPU-0000", Kind: device.HealthXID, XID: 13}, "1111"}, // application error
		{device.HealthEvent{UUID: "GPU-0000", Kind: device.HealthXID, XID: 79}, "0111"}, // fell off the bus
		{device.HealthEvent{UUID: "MIG-bbbb", Kind: device.HealthLost}, "0110"},
		{device.HealthEvent{UUID: "GPU-1111", Kind: device.HealthLost}, "0000"}, // its MIG devices with it
		{device.HealthEvent{UUID: "GPU-1111", Kind: device.HealthRecovered}, "0110"},
		{device.HealthEvent{UUID: "GPU-0000", Kind: device.HealthRecovered}, "1110"},
	}
	for i, s := range steps {
		e.state.applyHealth(s.ev)
		if got := health(); got != s.want {
			t.Fatalf("step %d: health %s, want %s", i, got, s.want)
		}
	}
	want := `
# HELP gpuplane_device_health Whether the device is healthy (1) or not (0): it, or the GPU of a MIG device, is lost or had an XID error not caused by an application.
# TYPE gpuplane_device_health gauge
gpuplane_device_health{` + gpu0 + `} 1
gpuplane_device_health{` + gpu1 + `} 1
gpuplane_device_health{` + migA + `} 1
gpuplane_device_health{` + migB + `} 0
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want), "gpuplane_device_health"); err != nil {
		t.Fatal(err)
	}
}

func TestHealthFollowsTheConfig(t *testing.T) {
	// The node agent's configuration ignores no XID: XID 13, an
	// application error by default, makes GPU-0000 unhealthy, as it does
	// for the device plugin.
	cfg, err := configv1.ParseConfig("c.yaml", []byte("version: v1\ngpuplane: {ignoredXIDs: []}\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{Backend: newFakeBackend(testNode, testSamples), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	e.state.setNode(testNode)
	e.state.applyHealth(device.HealthEvent{UUID: "GPU-0000", Kind: device.HealthXID, XID: 13})
	if e.state.devHealth.Healthy("GPU-0000") {
		t.Error("XID 13 left GPU-0000 healthy although the configuration ignores no XID")
	}
	// Without a configuration, the default ignores it.
	d, _ := newTestExporter(t, nil)
	d.state.applyHealth(device.HealthEvent{UUID: "GPU-0000", Kind: device.HealthXID, XID: 13})
	if !d.state.devHealth.Healthy("GPU-0000") {
		t.Error("XID 13 made GPU-0000 unhealthy under the default configuration")
	}
}

func TestEveryFieldServedWithItsType(t *testing.T) {
	full := device.Sample{UUID: "GPU-0000"}
	all := []*(*float64){
		&full.GPUUtil, &full.MemCopyUtil, &full.FBUsedMiB, &full.FBFreeMiB, &full.GPUTemp, &full.MemoryTemp,
		&full.PowerW, &full.TotalEnergyMJ, &full.SMClockMHz, &full.MemClockMHz, &full.LastXID, &full.PCIeReplay,
		&full.ECCSBEVolatile, &full.ECCDBEVolatile, &full.ECCSBEAggregate, &full.ECCDBEAggregate,
		&full.RowRemapCorrectable, &full.RowRemapUncorrectable, &full.RowRemapPending, &full.RowRemapFailure,
		&full.ProfGrEngineActive, &full.ProfSMActive, &full.ProfTensorActive, &full.ProfDRAMActive,
		&full.EncUtil, &full.DecUtil, &full.FBReservedMiB, &full.PCIeTxBytesPerSec, &full.PCIeRxBytesPerSec,
		&full.NVLinkBandwidthTotal,
	}
	for i, p := range all {
		*p = ptr(float64(i + 1))
	}
	metricFields := slices.DeleteFunc(AllFields(), func(f Field) bool { return f.Type == Label })
	if len(all) != len(metricFields) {
		t.Fatalf("%d Sample fields, %d served metric fields", len(all), len(metricFields))
	}
	e, err := New(Options{Backend: newFakeBackend(testNode, nil), Hostname: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	e.state.setNode(testNode)
	e.state.addSamples([]device.Sample{full}, time.Now())
	e.current.Store(e.state.snapshot())
	mfs, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{}
	values := map[float64]string{}
	for _, mf := range mfs {
		served[mf.GetName()] = strings.ToLower(mf.GetType().String())
		if strings.HasPrefix(mf.GetName(), "DCGM_") {
			m := mf.GetMetric()[0]
			values[m.GetGauge().GetValue()+m.GetCounter().GetValue()] = mf.GetName()
		}
	}
	for _, f := range metricFields {
		if got := served[f.Name]; got != string(f.Type) {
			t.Errorf("%s served as %q, want %q", f.Name, got, f.Type)
		}
	}
	// Each field reads its own Sample field: all 30 values are distinct.
	if len(values) != len(metricFields) {
		t.Errorf("%d distinct values for %d fields: some fields read the same Sample field", len(values), len(fields))
	}
}

func TestRunSamplesAndFollowsPods(t *testing.T) {
	b := newFakeBackend(testNode, testSamples)
	pods := &fakePods{}
	e, err := New(Options{Backend: b, Fields: testFields(t), Hostname: "node-a", Pods: pods, SampleInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()

	// eventually scrapes until the body contains want.
	eventually := func(want string) string {
		t.Helper()
		var body string
		for range 500 {
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(data)
			if strings.Contains(body, want) {
				return body
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("never served %q; last scrape:\n%s", want, body)
		return ""
	}
	eventually(`DCGM_FI_DEV_GPU_UTIL{Hostname="node-a",UUID="GPU-0000",device="nvidia0",gpu="0",modelName="NVIDIA H100 80GB HBM3",pci_bus_id="00000000:07:00.0"} 42`)
	pods.set(testMapping, 0)
	eventually(`gpuplane_device_allocation{Hostname="node-a",UUID="GPU-0000",container="srv",device="nvidia0",gpu="0",modelName="NVIDIA H100 80GB HBM3",namespace="web",pci_bus_id="00000000:07:00.0",pod="c"} 1`)
	b.events <- device.HealthEvent{UUID: "GPU-1111", Kind: device.HealthLost}
	eventually(`gpuplane_device_health{Hostname="node-a",UUID="GPU-1111",device="nvidia1",gpu="1",modelName="NVIDIA A100-SXM4-80GB",pci_bus_id="00000000:0F:00.0"} 0`)
	// The backend stops answering: errors are counted and the samples go
	// stale, then come back with the backend.
	b.setSamples(nil, errFake)
	body := eventually(`gpuplane_backend_errors_total{operation="sample"}`)
	body = eventually("gpuplane_device_pods{")
	for strings.Contains(body, "DCGM_FI_DEV_GPU_UTIL{") {
		body = eventually("gpuplane_device_pods{")
	}
	b.setSamples(testSamples, nil)
	eventually(`pod="d"} 0.25`)
	if !strings.Contains(body, "gpuplane_scrape_duration_seconds_count") {
		t.Error("no gpuplane_scrape_duration_seconds histogram")
	}
}

func TestRunDropsSamplesOfAHungBackend(t *testing.T) {
	b := newFakeBackend(testNode, testSamples)
	e, err := New(Options{Backend: b, Fields: testFields(t), SampleInterval: 10 * time.Millisecond, StaleAfter: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()
	hang := make(chan struct{})
	defer func() { close(hang); cancel(); <-done }()
	// until polls until the number of GPU_UTIL series is n.
	until := func(n int) {
		t.Helper()
		for range 1000 {
			if testutil.CollectAndCount((*collector)(e), "DCGM_FI_DEV_GPU_UTIL") == n {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("never %d GPU_UTIL series", n)
	}
	until(2)
	// The driver stops answering, deaf to the deadline: the last sample
	// is not repeated forever but dropped once stale; health stays.
	b.setHang(hang)
	until(0)
	if n := testutil.CollectAndCount((*collector)(e), "gpuplane_device_health"); n != 4 {
		t.Fatalf("%d health series while the backend hangs, want 4", n)
	}
	b.setHang(nil)
	hang <- struct{}{} // release the Sample call in flight
	until(2)
}

func TestNewRejectsBadOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no backend: no error")
	}
	if _, err := New(Options{Backend: newFakeBackend(testNode, nil), SampleInterval: -time.Second}); err == nil {
		t.Error("negative interval: no error")
	}
	if _, err := New(Options{Backend: newFakeBackend(testNode, nil), SampleInterval: time.Second, StaleAfter: time.Millisecond}); err == nil {
		t.Error("stale-after shorter than the interval: no error")
	}
}

var labelBlock = regexp.MustCompile(`\{[^}]*\}`)

// sortedLabels sorts the labels of each series in an exposition text by name,
// the order client_golang writes them in, so that expected texts can list
// them in a readable order. Label values must not contain `",`.
func sortedLabels(text string) io.Reader {
	return strings.NewReader(labelBlock.ReplaceAllStringFunc(text, func(b string) string {
		pairs := strings.Split(strings.TrimSuffix(b[1:len(b)-1], `"`), `",`)
		slices.Sort(pairs)
		return "{" + strings.Join(pairs, `",`) + `"}`
	}))
}

func TestResolveDeviceIDs(t *testing.T) {
	s := newState(AllFields(), "node-a", nil, false)
	s.setNode(testNode)
	for id, want := range map[string]string{
		"GPU-0000":    "GPU-0000", // whole GPU
		"GPU-0000::7": "GPU-0000", // time-slicing replica
		"MIG-bbbb":    "MIG-bbbb", // MIG device
		"MIG-bbbb::1": "MIG-bbbb", // replica of a MIG device
		"1":           "GPU-1111", // GPU index (device-id strategy "index")
		"2":           "",         // no such GPU
		"eth0":        "",         // not a GPU
		"":            "",
	} {
		got := ""
		if d := s.resolve(id); d != nil {
			got = d.uuid
		}
		if got != want {
			t.Errorf("resolve(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestConcurrentScrapesWhileSampling(t *testing.T) {
	// Scrapes share the snapshot's protobuf parts; run several at once, in
	// text and protobuf, while the loop publishes (meant for -race).
	e, err := New(Options{Backend: newFakeBackend(testNode, testSamples), Pods: &fakePods{mapping: testMapping},
		SampleInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	h := e.Handler()
	errs := make(chan string, 4)
	for _, accept := range []string{"text/plain", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "text/plain", "application/openmetrics-text"} {
		go func() {
			for range 50 {
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				req.Header.Set("Accept", accept)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					errs <- accept + ": " + w.Body.String()
					return
				}
			}
			errs <- ""
		}()
	}
	for range 4 {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
}

func TestOnlyGPUResourcesAreAttributed(t *testing.T) {
	// Another device plugin's device "7" (an RDMA NIC)
	// must not make its pod show as using GPU 7, nor GPU 1 under the
	// index device-ID form. Only GPU resources count, as in dcgm-exporter
	// (internal/pkg/transformation/kubernetes.go skips resource names other
	// than nvidia.com/gpu and nvidia.com/mig-*).
	m := &podresources.Mapping{Allocations: []podresources.Allocation{
		{ResourceName: "rdma/hca_shared_devices_a", DeviceID: "1", Owner: owner("net", "rdma", "main")},
		{ResourceName: "rdma/hca_shared_devices_a", DeviceID: "GPU-0000", Owner: owner("net", "rdma", "main")},
		{ResourceName: "nvidia.com/gpu.shared", DeviceID: "GPU-0000::4", Owner: owner("ml", "a", "main")},
	}}
	e, _ := newTestExporter(t, &fakePods{mapping: m})
	want := `
# HELP gpuplane_device_pods Number of pods the device is allocated to; above 1 when the GPU is shared by time-slicing.
# TYPE gpuplane_device_pods gauge
gpuplane_device_pods{` + gpu0 + `} 1
gpuplane_device_pods{` + gpu1 + `} 0
gpuplane_device_pods{` + migA + `} 0
gpuplane_device_pods{` + migB + `} 0
# HELP gpuplane_device_allocation 1 for each container the device is allocated to.
# TYPE gpuplane_device_allocation gauge
gpuplane_device_allocation{` + gpu0 + podA + `} 1
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want), "gpuplane_device_pods", "gpuplane_device_allocation"); err != nil {
		t.Fatal(err)
	}
}

func TestVirtualGPUsOneSeriesPerReplica(t *testing.T) {
	// Options.VirtualGPUs, as dcgm-exporter's --kubernetes-virtual-gpus:
	// each replica a container holds is one series labelled vgpu with the
	// replica number (the part after "::" of the device ID, as
	// dcgm-exporter's getSharedGPU); pod a holds replicas 0 and 3. A device
	// held whole (MIG-aaaa) has no vgpu label.
	opts := Options{Backend: newFakeBackend(testNode, testSamples), Fields: testFields(t), Hostname: "node-a",
		Pods: &fakePods{mapping: testMapping}, VirtualGPUs: true}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	e.state.setNode(testNode)
	e.state.setMapping(testMapping)
	e.state.addSamples(testSamples, t0)
	e.current.Store(e.state.snapshot())
	want := `
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + podA + `,vgpu="0"} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + podA + `,vgpu="3"} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + podB + `,vgpu="1"} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu0 + podC + `,vgpu="2"} 42
DCGM_FI_DEV_GPU_UTIL{` + gpu1 + `} 7
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + podA + `,vgpu="0"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + podA + `,vgpu="3"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + podB + `,vgpu="1"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + gpu0 + podC + `,vgpu="2"} 0.5
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migA + podD + `} 0.25
DCGM_FI_PROF_GR_ENGINE_ACTIVE{` + migB + `} 0.125
# HELP gpuplane_device_allocation 1 for each container the device is allocated to.
# TYPE gpuplane_device_allocation gauge
gpuplane_device_allocation{` + gpu0 + podA + `} 1
gpuplane_device_allocation{` + gpu0 + podB + `} 1
gpuplane_device_allocation{` + gpu0 + podC + `} 1
gpuplane_device_allocation{` + migA + podD + `} 1
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want),
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpuplane_device_allocation"); err != nil {
		t.Fatal(err)
	}
}

func TestXIDAndDriverVersionLabels(t *testing.T) {
	// dcgm-exporter's default-counters.csv serves DCGM_FI_DRIVER_VERSION
	// as a label of every series, and labels DCGM_FI_DEV_XID_ERRORS with
	// err_code and err_msg (internal/pkg/collector/gpu_collector.go; names
	// from NVIDIA's XID catalogue: 79 "GPU has fallen off the bus", 0 "No
	// Error"; past the table "Unknown Error").
	fields, _, err := ParseFields("f.csv", []byte("DCGM_FI_DEV_XID_ERRORS, gauge\nDCGM_FI_DRIVER_VERSION, label, Driver Version\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{Backend: newFakeBackend(testNode, nil), Fields: fields, Hostname: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	node := testNode
	node.DriverVersion = "550.54.15"
	e.state.setNode(node)
	e.state.addSamples([]device.Sample{
		{UUID: "GPU-0000", LastXID: ptr(79)},
		{UUID: "GPU-1111", LastXID: ptr(0)},
		{UUID: "MIG-aaaa", LastXID: ptr(999)},
	}, time.Now())
	e.current.Store(e.state.snapshot())
	drv := `,DCGM_FI_DRIVER_VERSION="550.54.15"`
	want := `
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error seen (0 for none).
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{` + gpu0 + drv + `,err_code="79",err_msg="GPU has fallen off the bus"} 79
DCGM_FI_DEV_XID_ERRORS{` + gpu1 + drv + `,err_code="0",err_msg="No Error"} 0
DCGM_FI_DEV_XID_ERRORS{` + migA + drv + `,err_code="999",err_msg="Unknown Error"} 999
# HELP gpuplane_device_pods Number of pods the device is allocated to; above 1 when the GPU is shared by time-slicing.
# TYPE gpuplane_device_pods gauge
gpuplane_device_pods{` + gpu0 + drv + `} 0
gpuplane_device_pods{` + gpu1 + drv + `} 0
gpuplane_device_pods{` + migA + drv + `} 0
gpuplane_device_pods{` + migB + drv + `} 0
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want), "DCGM_FI_DEV_XID_ERRORS", "gpuplane_device_pods"); err != nil {
		t.Fatal(err)
	}
}

func TestAllocationShare(t *testing.T) {
	// gpuplane_device_allocation_share, by hand: GPU-0000 time-sliced as 4
	// replicas (sharing.timeSlicing, as the device plugin advertises it):
	// pod a holds replicas 0 and 3, 2/4 = 0.5; b and c one each, 1/4. Pod
	// d holds the MIG device MIG-aaaa whole: 1 (of the MIG device; cost
	// prices the MIG device by its slices). Pod e holds 300 units of
	// gpuplane.io/gpu-milli of GPU-1111: 300/1000. The NIC is no GPU.
	cfg, err := configv1.ParseConfig("config.yaml", []byte(`
version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
    - name: nvidia.com/mig-1g.10gb
      replicas: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	m := &podresources.Mapping{Allocations: slices.Clone(testMapping.Allocations)}
	for k := range 300 {
		m.Allocations = append(m.Allocations, podresources.Allocation{ResourceName: "gpuplane.io/gpu-milli", DeviceID: fmt.Sprintf("GPU-1111::m%d", k), Owner: owner("ml", "e", "main")})
	}
	// A duplicate listing of one replica counts once. Pod f holds one of
	// the 2 replicas of the MIG device MIG-bbbb (renamed .shared): 1/2.
	m.Allocations = append(m.Allocations, testMapping.Allocations[1],
		podresources.Allocation{ResourceName: "nvidia.com/mig-1g.10gb.shared", DeviceID: "MIG-bbbb::1", Owner: owner("ml", "f", "main")})
	e, err := New(Options{Backend: newFakeBackend(testNode, testSamples), Fields: testFields(t), Hostname: "node-a", Pods: &fakePods{mapping: m}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	e.state.setNode(testNode)
	e.state.setMapping(m)
	e.current.Store(e.state.snapshot())
	want := `
# HELP gpuplane_device_allocation_share Fraction of the device (GPU or MIG device) the container holds: 1 whole, k/replicas for k time-slicing replicas, units/1000 for gpuplane.io/gpu-milli; for a DRA device its consumed milliGPU/1000, and for a DRA MIG device not yet discovered its compute slices/7 of the GPU.
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{` + gpu0 + podA + `} 0.5
gpuplane_device_allocation_share{` + gpu0 + podB + `} 0.25
gpuplane_device_allocation_share{` + gpu0 + podC + `} 0.25
gpuplane_device_allocation_share{` + gpu1 + `,namespace="ml",pod="e",container="main"} 0.3
gpuplane_device_allocation_share{` + migA + podD + `} 1
gpuplane_device_allocation_share{` + migB + `,namespace="ml",pod="f",container="main"} 0.5
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want), "gpuplane_device_allocation_share"); err != nil {
		t.Fatal(err)
	}

	// Under the default configuration nothing is time-sliced: the
	// replicas of GPU-0000 have no known share, so no share series; the
	// MIG device held whole still has one.
	e, _ = newTestExporter(t, &fakePods{mapping: testMapping})
	want = `
# HELP gpuplane_device_allocation_share Fraction of the device (GPU or MIG device) the container holds: 1 whole, k/replicas for k time-slicing replicas, units/1000 for gpuplane.io/gpu-milli; for a DRA device its consumed milliGPU/1000, and for a DRA MIG device not yet discovered its compute slices/7 of the GPU.
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{` + migA + podD + `} 1
`
	if err := testutil.GatherAndCompare(e.Gatherer(), sortedLabels(want), "gpuplane_device_allocation_share"); err != nil {
		t.Fatal(err)
	}
}
