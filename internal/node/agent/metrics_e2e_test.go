// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

// End-to-end tests of the node agent's metrics: they build and run the real
// gpuplane-node-agent binary with the mock backend and a test pod-resources
// server on a unix socket, scrape /metrics, and (when Prometheus is
// installed) let a real Prometheus scrape it.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/exporter"
	"github.com/gpuplane/gpuplane/internal/node/podresources/podresourcestest"
)

var (
	metricsBinOnce sync.Once
	metricsBin     string
	metricsBinErr  error
)

// metricsTestBinary builds the gpuplane-node-agent binary once per test run.
func metricsTestBinary(t *testing.T) string {
	t.Helper()
	metricsBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpb")
		if err != nil {
			metricsBinErr = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		metricsBin = filepath.Join(dir, "gpuplane-node-agent")
		out, err := exec.Command(goTool, "build", "-o", metricsBin, "github.com/gpuplane/gpuplane/cmd/gpuplane-node-agent").CombinedOutput()
		if err != nil {
			metricsBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if metricsBinErr != nil {
		t.Fatal(metricsBinErr)
	}
	return metricsBin
}

// metricsProfile is the mock node of these tests: GPU 0 an H100 shared by
// time-slicing, GPU 1 an A100 in MIG mode, GPUs 2 and 3 whole A100s. Each
// utilisation curve has one value, so every reading is exact.
const metricsProfile = `name: metrics-e2e
gpus:
  - productName: NVIDIA H100 80GB HBM3
    uuid: GPU-00000000-0000-0000-0000-000000000000
    telemetry: {utilizationPct: [37], memCopyUtilPct: 12, memoryUsedMiB: 20480, temperatureC: 61, memoryTemperatureC: 70,
      powerW: 350, smClockMHz: 1980, memClockMHz: 2619, pcieReplay: 3, eccSBE: 5, eccDBE: 1, rowRemapCorrectable: 2, rowRemapUncorrectable: 1,
      encUtilPct: 4, decUtilPct: 9, memoryReservedMiB: 512, pcieTxBytesPerSec: 1000000, pcieRxBytesPerSec: 3000000}
  - productName: NVIDIA A100-SXM4-80GB
    uuid: GPU-11111111-1111-1111-1111-111111111111
    mig: [3g.40gb, 1g.10gb]
    telemetry: {utilizationPct: [50], memoryUsedMiB: 40960}
  - count: 2
    productName: NVIDIA A100-SXM4-80GB
    telemetry: {utilizationPct: [80]}
links:
  all: NV12
`

// metricsAgent is a running gpuplane-node-agent.
type metricsAgent struct {
	cmd     *exec.Cmd
	dir     string // the device-plugin directory, holding the profile and sockets
	url     string // http://host:port/metrics
	node    device.Node
	pods    *podresourcestest.Server
	faults  string
	logs    *strings.Builder
	logsMu  *sync.Mutex
	stopped bool
	// exited ends when the agent's stderr closes (it exited); waits on
	// the agent derive their context from it.
	exited context.Context
}

var metricsServingRE = regexp.MustCompile(`"Serving GPU metrics" address="([^"]+)"`)

// startMetricsAgent writes the profile, starts a pod-resources server and the agent
// with the mock backend, and waits for the agent's metrics address.
func startMetricsAgent(t *testing.T, extraArgs ...string) *metricsAgent {
	t.Helper()
	bin := metricsTestBinary(t)
	dir, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	profile := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(profile, []byte(metricsProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := mock.Open(profile, mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := podresourcestest.Start(filepath.Join(dir, "pr.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	a := &metricsAgent{dir: dir, node: node, pods: srv, faults: filepath.Join(dir, "faults.yaml"), logs: &strings.Builder{}, logsMu: &sync.Mutex{}}
	args := append([]string{"--backend", "mock", "--mock-profile", profile,
		"--mock-faults-file", a.faults, "--device-plugin-dir", dir, "--node-name", "node-e2e",
		"--metrics-addr", "127.0.0.1:0", "--metrics-sample-interval", "100ms",
		"--pod-resources-socket", srv.Path(), "--pod-resources-interval", "200ms"}, extraArgs...)
	a.cmd = exec.Command(bin, args...)
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.stop(t) })
	addr := make(chan string, 1)
	exited, exit := context.WithCancelCause(context.Background())
	a.exited = exited
	go func() {
		defer exit(fmt.Errorf("agent exited"))
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			a.logsMu.Lock()
			a.logs.WriteString(sc.Text() + "\n")
			a.logsMu.Unlock()
			if m := metricsServingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case x, ok := <-addr:
		if !ok {
			t.Fatalf("agent exited before serving metrics:\n%s", a.log())
		}
		a.url = "http://" + x + "/metrics"
	case <-time.After(60 * time.Second):
		t.Fatalf("agent did not serve metrics:\n%s", a.log())
	}
	return a
}

func (a *metricsAgent) log() string {
	a.logsMu.Lock()
	defer a.logsMu.Unlock()
	return a.logs.String()
}

// stop sends SIGTERM and checks the agent exits cleanly.
func (a *metricsAgent) stop(t *testing.T) {
	if a.stopped {
		return
	}
	a.stopped = true
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("agent exit: %v\n%s", err, a.log())
		}
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		t.Errorf("agent did not stop on SIGTERM")
	}
}

// scrape returns the agent's metric families.
func (a *metricsAgent) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(a.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %s\n%s", resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// eventually scrapes until cond holds, for at most 30 s.
func (a *metricsAgent) eventually(t *testing.T, what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mfs := a.scrape(t)
		if cond(mfs) {
			return mfs
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func metricLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// seriesOf returns the series of a family whose labels include match.
func seriesOf(mfs map[string]*dto.MetricFamily, name string, match map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mfs[name].GetMetric() {
		ls := metricLabels(m)
		ok := true
		for k, v := range match {
			if ls[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func metricValue(m *dto.Metric) float64 { return m.GetGauge().GetValue() + m.GetCounter().GetValue() }

// oneValue returns the value of the single series of name matching match.
func oneValue(t *testing.T, mfs map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	t.Helper()
	s := seriesOf(mfs, name, match)
	if len(s) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, match, len(s))
	}
	return metricValue(s[0])
}

const (
	gpu0UUID = "GPU-00000000-0000-0000-0000-000000000000"
	gpu1UUID = "GPU-11111111-1111-1111-1111-111111111111"
)

// setPods allocates GPU 0 to three pods by time-slicing replicas, the
// 3g.40gb MIG device of GPU 1 to pod mig-a, and GPU 2 to pod whole-a.
func (a *metricsAgent) setPods() {
	mig3g := a.node.GPUs[1].MIG[0].UUID
	a.pods.SetPods(
		podresourcestest.Pod("ml", "train-a", podresourcestest.Container("main", "nvidia.com/gpu.shared", gpu0UUID+"::0")),
		podresourcestest.Pod("ml", "train-b", podresourcestest.Container("main", "nvidia.com/gpu.shared", gpu0UUID+"::1")),
		podresourcestest.Pod("web", "infer-c", podresourcestest.Container("srv", "nvidia.com/gpu.shared", gpu0UUID+"::2", gpu0UUID+"::3")),
		podresourcestest.Pod("ml", "mig-a", podresourcestest.Container("main", "nvidia.com/mig-3g.40gb", mig3g)),
		podresourcestest.Pod("batch", "whole-a", podresourcestest.Container("job", "nvidia.com/gpu", a.node.GPUs[2].UUID)),
	)
}

func TestNodeAgentMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	a := startMetricsAgent(t)
	a.setPods()
	mfs := a.eventually(t, "GPU 0 attributed to three pods", func(m map[string]*dto.MetricFamily) bool {
		p := seriesOf(m, "gpuplane_device_pods", map[string]string{"UUID": gpu0UUID})
		return len(p) == 1 && metricValue(p[0]) == 3 && len(seriesOf(m, "gpuplane_device_allocation", map[string]string{"pod": "mig-a"})) == 1
	})

	// Names, types and units: every field, as dcgm-exporter serves it. The
	// H100 supports them all, profiling ratios included.
	units := map[string]string{
		"DCGM_FI_DEV_GPU_UTIL": "(in %)", "DCGM_FI_DEV_FB_USED": "(in MiB)", "DCGM_FI_DEV_FB_FREE": "(in MiB)",
		"DCGM_FI_DEV_GPU_TEMP": "(in C)", "DCGM_FI_DEV_MEMORY_TEMP": "(in C)", "DCGM_FI_DEV_POWER_USAGE": "(in W)",
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "(in mJ)", "DCGM_FI_DEV_SM_CLOCK": "(in MHz)", "DCGM_FI_DEV_MEM_CLOCK": "(in MHz)",
	}
	for _, f := range exporter.AllFields() {
		if f.Type == exporter.Label {
			// A label of every series: the mock's driver version.
			for _, m := range mfs["DCGM_FI_DEV_GPU_TEMP"].GetMetric() {
				if v := metricLabels(m)[f.Name]; v != "550.54.15" {
					t.Errorf("%s label %q, want 550.54.15", f.Name, v)
				}
			}
			continue
		}
		mf := mfs[f.Name]
		if mf == nil {
			t.Errorf("%s not served", f.Name)
			continue
		}
		if got := strings.ToLower(mf.GetType().String()); got != string(f.Type) {
			t.Errorf("%s: type %s, want %s", f.Name, got, f.Type)
		}
		if u := units[f.Name]; !strings.Contains(mf.GetHelp(), u) {
			t.Errorf("%s: help %q does not name the unit %s", f.Name, mf.GetHelp(), u)
		}
	}

	// GPU 0, shared by three pods: one series, without pod labels, as
	// dcgm-exporter serves a time-sliced GPU once; the three holders are
	// in gpuplane_device_allocation.
	h100 := map[string]string{"gpu": "0", "UUID": gpu0UUID, "device": "nvidia0", "modelName": "NVIDIA H100 80GB HBM3",
		"Hostname": "node-e2e", "pci_bus_id": a.node.GPUs[0].PCIBusID}
	if s := seriesOf(mfs, "DCGM_FI_DEV_GPU_UTIL", h100); len(s) != 1 || metricValue(s[0]) != 37 || metricLabels(s[0])["pod"] != "" {
		t.Errorf("GPU 0 utilisation: %d series, want one of 37 without pod labels", len(s))
	}
	var pods []string
	for _, m := range seriesOf(mfs, "gpuplane_device_allocation", h100) {
		ls := metricLabels(m)
		pods = append(pods, ls["namespace"]+"/"+ls["pod"]+"/"+ls["container"])
	}
	slices.Sort(pods)
	if want := []string{"ml/train-a/main", "ml/train-b/main", "web/infer-c/srv"}; !slices.Equal(pods, want) {
		t.Errorf("GPU 0 pods %v, want %v", pods, want)
	}
	trainA := map[string]string{"UUID": gpu0UUID}
	// 80 GiB H100: 81920 MiB; 512 reserved, 20480 used, 60928 free. Profiling ratios:
	// engine and SM active 37 % = 0.37, tensor and DRAM half of it.
	for name, want := range map[string]float64{
		"DCGM_FI_DEV_MEM_COPY_UTIL": 12, "DCGM_FI_DEV_FB_USED": 20480, "DCGM_FI_DEV_FB_FREE": 60928, "DCGM_FI_DEV_FB_RESERVED": 512,
		"DCGM_FI_DEV_ENC_UTIL": 4, "DCGM_FI_DEV_DEC_UTIL": 9, "DCGM_FI_PROF_PCIE_TX_BYTES": 1e6, "DCGM_FI_PROF_PCIE_RX_BYTES": 3e6,
		"DCGM_FI_DEV_GPU_TEMP": 61, "DCGM_FI_DEV_MEMORY_TEMP": 70, "DCGM_FI_DEV_POWER_USAGE": 350,
		"DCGM_FI_DEV_SM_CLOCK": 1980, "DCGM_FI_DEV_MEM_CLOCK": 2619, "DCGM_FI_DEV_XID_ERRORS": 0,
		"DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 3, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": 5, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 1,
		"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": 5, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": 1,
		"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 2, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 1,
		"DCGM_FI_DEV_ROW_REMAP_PENDING": 0, "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0,
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.37, "DCGM_FI_PROF_SM_ACTIVE": 0.37,
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.185, "DCGM_FI_PROF_DRAM_ACTIVE": 0.185,
	} {
		if got := oneValue(t, mfs, name, trainA); got != want {
			t.Errorf("%s for train-a: %v, want %v", name, got, want)
		}
	}
	if e := oneValue(t, mfs, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", trainA); e <= 0 {
		t.Errorf("energy %v mJ, want > 0", e)
	}
	if got := oneValue(t, mfs, "gpuplane_device_pods", map[string]string{"UUID": gpu0UUID}); got != 3 {
		t.Errorf("gpuplane_device_pods of GPU 0: %v, want 3", got)
	}

	// GPU 1's MIG devices: the parent's device labels plus the instance.
	// 40960 of 81920 MiB used: each MIG device is half full.
	for _, m := range a.node.GPUs[1].MIG {
		match := map[string]string{"gpu": "1", "UUID": gpu1UUID, "device": "nvidia1", "modelName": "NVIDIA A100-SXM4-80GB",
			"GPU_I_PROFILE": m.Profile, "GPU_I_ID": fmt.Sprint(m.GPUInstanceID)}
		half := float64(m.MemoryMiB) / 2
		if got := oneValue(t, mfs, "DCGM_FI_DEV_FB_USED", match); got != half {
			t.Errorf("MIG %s used %v MiB, want %v", m.Profile, got, half)
		}
		s := seriesOf(mfs, "DCGM_FI_DEV_FB_FREE", match)
		ls := metricLabels(s[0])
		switch m.Profile {
		case "3g.40gb":
			if ls["pod"] != "mig-a" || ls["namespace"] != "ml" || ls["container"] != "main" {
				t.Errorf("3g.40gb MIG device labels %v, want pod ml/mig-a/main", ls)
			}
		default:
			if _, ok := ls["pod"]; ok {
				t.Errorf("unallocated MIG device has pod labels %v", ls)
			}
		}
		if metricValue(s[0]) != half {
			t.Errorf("MIG %s free %v MiB, want %v", m.Profile, metricValue(s[0]), half)
		}
		// An A100 MIG device has what NVML gives it: no utilisation (NVML
		// has none for MIG devices, and dcgm-exporter serves none) and no
		// profiling ratios (GPM per GPU instance is Hopper and later).
		for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_POWER_USAGE"} {
			if s := seriesOf(mfs, name, match); len(s) != 0 {
				t.Errorf("A100 MIG %s has %s", m.Profile, name)
			}
		}
	}
	if got := oneValue(t, mfs, "gpuplane_device_allocation", map[string]string{"pod": "whole-a", "UUID": a.node.GPUs[2].UUID}); got != 1 {
		t.Errorf("allocation of GPU 2 to whole-a: %v", got)
	}
	if got := oneValue(t, mfs, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"gpu": "3"}); got != 80 {
		t.Errorf("GPU 3 utilisation %v, want 80", got)
	}
	if _, ok := metricLabels(seriesOf(mfs, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"gpu": "3"})[0])["pod"]; ok {
		t.Error("unallocated GPU 3 has a pod label")
	}

	// An XID 79 (fallen off the bus) on GPU 3: unhealthy, last XID 79.
	if err := os.WriteFile(a.faults, []byte("faults:\n  - uuid: "+a.node.GPUs[3].UUID+"\n    xid: 79\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gpu3 := map[string]string{"UUID": a.node.GPUs[3].UUID}
	a.eventually(t, "GPU 3 unhealthy with XID 79", func(m map[string]*dto.MetricFamily) bool {
		h, x := seriesOf(m, "gpuplane_device_health", gpu3), seriesOf(m, "DCGM_FI_DEV_XID_ERRORS", gpu3)
		return len(h) == 1 && metricValue(h[0]) == 0 && len(x) == 1 && metricValue(x[0]) == 79
	})
}

func TestNodeAgentMetricsWithoutPodResources(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	a := startMetricsAgent(t)
	a.setPods()
	attributed := func(m map[string]*dto.MetricFamily) bool {
		return len(seriesOf(m, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"pod": "whole-a"})) == 1
	}
	a.eventually(t, "pod labels", attributed)

	// The kubelet restarts: metrics keep flowing without pod labels, the
	// error counter rises; then the labels come back.
	a.pods.Stop()
	mfs := a.eventually(t, "metrics without pod labels", func(m map[string]*dto.MetricFamily) bool {
		return len(seriesOf(m, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"UUID": gpu0UUID})) == 1 && !attributed(m)
	})
	if got := oneValue(t, mfs, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"UUID": gpu0UUID}); got != 37 {
		t.Errorf("GPU 0 utilisation without pod labels: %v, want 37", got)
	}
	if _, ok := metricLabels(seriesOf(mfs, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"UUID": gpu0UUID})[0])["pod"]; ok {
		t.Error("pod label while the socket is gone")
	}
	if oneValue(t, mfs, "gpuplane_pod_resources_errors_total", nil) < 1 || oneValue(t, mfs, "gpuplane_pod_resources_up", nil) != 0 {
		t.Error("socket gone: no error counted, or pod resources still up")
	}
	if err := a.pods.Restart(); err != nil {
		t.Fatal(err)
	}
	a.eventually(t, "pod labels after the socket came back", attributed)

	// A slow socket: the same.
	a.pods.SetDelay(time.Hour)
	a.eventually(t, "metrics without pod labels while the socket is slow", func(m map[string]*dto.MetricFamily) bool {
		return len(seriesOf(m, "DCGM_FI_DEV_GPU_UTIL", map[string]string{"UUID": gpu0UUID})) == 1 && !attributed(m)
	})
	a.pods.SetDelay(0)
	a.eventually(t, "pod labels after the socket answered again", attributed)
}

// TestNodeAgentDCGMExporterCountersAndVirtualGPUs: NVIDIA's unmodified
// default-counters.csv (internal/node/exporter/testdata, source in
// TestDCGMExporterDefaultCounters) is accepted, the field gpuplane does not
// serve is skipped with one warning, the driver version is a label; with
// --kubernetes-virtual-gpus GPU 0's four replicas are four series labelled
// vgpu 0 to 3 (infer-c holds 2 and 3).
func TestNodeAgentDCGMExporterCountersAndVirtualGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	counters, err := filepath.Abs("../exporter/testdata/dcgm-exporter-default-counters.csv")
	if err != nil {
		t.Fatal(err)
	}
	a := startMetricsAgent(t, "--metrics-file", counters, "--kubernetes-virtual-gpus")
	a.setPods()
	mfs := a.eventually(t, "GPU 0 served per replica", func(m map[string]*dto.MetricFamily) bool {
		return len(seriesOf(m, "DCGM_FI_DEV_POWER_USAGE", map[string]string{"UUID": gpu0UUID})) == 4
	})
	var got []string
	for _, m := range seriesOf(mfs, "DCGM_FI_DEV_POWER_USAGE", map[string]string{"UUID": gpu0UUID}) {
		ls := metricLabels(m)
		got = append(got, ls["pod"]+"/"+ls["vgpu"]+"/"+ls["DCGM_FI_DRIVER_VERSION"])
	}
	slices.Sort(got)
	if want := []string{"infer-c/2/550.54.15", "infer-c/3/550.54.15", "train-a/0/550.54.15", "train-b/1/550.54.15"}; !slices.Equal(got, want) {
		t.Errorf("GPU 0 power series (pod/vgpu/driver) %v, want %v", got, want)
	}
	if mfs["DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"] != nil || mfs["DCGM_FI_DEV_ENC_UTIL"] == nil {
		t.Error("the counters file does not select the fields served")
	}
	warn := "DCGM_FI_DEV_VGPU_LICENSE_STATUS is not a field gpuplane serves; skipped"
	if n := strings.Count(a.log(), warn); n != 1 {
		t.Errorf("%d warnings %q in the log, want 1:\n%s", n, warn, a.log())
	}
}

func TestNodeAgentRejectsBadMetricsFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	bin := metricsTestBinary(t)
	dir, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bad := filepath.Join(dir, "metrics.csv")
	if err := os.WriteFile(bad, []byte("# counters\nDCGM_FI_DEV_GPU_UTIL, counter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-file", bad}, "--metrics-file: " + bad + `:2: DCGM_FI_DEV_GPU_UTIL: type "counter", but gpuplane serves it as a gauge`},
		{[]string{"--metrics-file", filepath.Join(dir, "none.csv")}, "--metrics-file: open " + filepath.Join(dir, "none.csv")},
		{[]string{"--metrics-sample-interval", "0s"}, "--metrics-sample-interval and --pod-resources-interval must be positive"},
		{[]string{"--metrics-addr", "256.0.0.1:1"}, "--metrics-addr: listen tcp"},
		{[]string{"--metrics-stale-after", "10ms"}, "--metrics-sample-interval, --metrics-stale-after: exporter: stale-after 10ms is shorter than the sample interval 1s"},
	} {
		args := append([]string{"--backend", "mock", "--mock-profile", "dgx-h100", "--device-plugin-dir", dir,
			"--pod-resources-socket", ""}, c.args...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil {
			t.Errorf("%v: exit 0, want an error", c.args)
			continue
		}
		if !strings.Contains(string(out), "gpuplane-node-agent: "+c.want) {
			t.Errorf("%v: output\n%s\nwant %q", c.args, out, c.want)
		}
	}
}

// promAPIResponse is a Prometheus HTTP API answer.
type promAPIResponse struct {
	Status string          `json:"status"`
	Error  string          `json:"error"`
	Data   json.RawMessage `json:"data"`
}

// promAPIGet queries Prometheus's HTTP API and decodes data into out.
func promAPIGet(t *testing.T, base, path string, q url.Values, out any) {
	t.Helper()
	resp, err := http.Get(base + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r promAPIResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.Status != "success" {
		t.Fatalf("%s: %s: %s", path, r.Status, r.Error)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPrometheusScrapesNodeAgent starts a real Prometheus (the Debian
// package prometheus) on loopback, lets it scrape the agent every second
// with gpuplane's alerting rules loaded, and queries it over its HTTP API.
// Without the prometheus binary it skips, unless CI is set (CI=true), where it fails.
func TestPrometheusScrapesNodeAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary and Prometheus")
	}
	a := startMetricsAgent(t)
	a.setPods()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := startPrometheus(t, ctx, strings.TrimSuffix(strings.TrimPrefix(a.url, "http://"), "/metrics"))

	// Query until the sample of pod whole-a arrives (at most a minute).
	type vector []struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	var got vector
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				var data struct {
					Result vector `json:"result"`
				}
				promAPIGet(t, base, "/api/v1/query", url.Values{"query": {`DCGM_FI_DEV_GPU_UTIL{pod="whole-a"}`}}, &data)
				if got = data.Result; len(got) > 0 {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("Prometheus never had DCGM_FI_DEV_GPU_UTIL{pod=\"whole-a\"}")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(got) != 1 {
		t.Fatalf("DCGM_FI_DEV_GPU_UTIL{pod=\"whole-a\"}: %d series, want 1: %v", len(got), got)
	}
	m := got[0].Metric
	for k, want := range map[string]string{"namespace": "batch", "container": "job", "UUID": a.node.GPUs[2].UUID, "gpu": "2",
		"device": "nvidia2", "Hostname": "node-e2e", "modelName": "NVIDIA A100-SXM4-80GB", "job": "gpuplane"} {
		if m[k] != want {
			t.Errorf("label %s = %q, want %q (series %v)", k, m[k], want, m)
		}
	}
	if v := got[0].Value[1]; v != "80" {
		t.Errorf("value %v, want 80", v)
	}
	// Counters keep dcgm-exporter's names (no _total added).
	var energy struct {
		Result vector `json:"result"`
	}
	promAPIGet(t, base, "/api/v1/query", url.Values{"query": {`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{pod="whole-a"} > 0`}}, &energy)
	if len(energy.Result) != 1 {
		t.Errorf("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{pod=\"whole-a\"} > 0: %d series, want 1", len(energy.Result))
	}

	// The alerting rules load and evaluate against the agent's metrics.
	var rulesData struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	for {
		promAPIGet(t, base, "/api/v1/rules", url.Values{}, &rulesData)
		ok, n := true, 0
		for _, g := range rulesData.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health == "err" {
					t.Fatalf("rule %s: %s", r.Name, r.LastError)
				}
				ok = ok && r.Health == "ok"
			}
		}
		if n == 0 {
			t.Fatal("Prometheus loaded no alerting rules")
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("alerting rules never evaluated")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
