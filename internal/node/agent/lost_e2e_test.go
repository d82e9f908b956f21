// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestLostGPU: GPU 2 of metricsProfile is lost when the agent starts (the
// mock's faults file says so), GPU 3 is lost later. The agent keeps
// running; the kubelet's first device list already shows GPU 2
// unhealthy and the others healthy; the lost GPUs have no telemetry while
// the others keep theirs; and, with Prometheus installed, gpuplane's
// GPUTelemetryMissing alert is raised for GPUs 2 and 3 and no other.
func TestLostGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(profile, []byte(metricsProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	node, err := mock.Discover(profile) // UUIDs come from the profile's name: the agent's are the same
	if err != nil {
		t.Fatal(err)
	}
	uuids := make([]string, len(node.GPUs))
	for i, g := range node.GPUs {
		uuids[i] = g.UUID
	}
	faults := filepath.Join(dir, "faults.yaml")
	writeFaults := func(lost ...int) {
		var b strings.Builder
		b.WriteString("faults:\n")
		for _, i := range lost {
			fmt.Fprintf(&b, "- {uuid: %s, lost: true}\n", uuids[i])
		}
		if err := os.WriteFile(faults+".tmp", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(faults+".tmp", faults); err != nil {
			t.Fatal(err)
		}
	}
	writeFaults(2)
	a := startMetricsAgent(t, "--mock-faults-file", faults) // the last --mock-faults-file counts
	if a.node.GPUs[2].UUID != uuids[2] {
		t.Fatalf("the agent's GPU 2 is %s, the test's %s", a.node.GPUs[2].UUID, uuids[2])
	}
	k, err := kubelettest.Start(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	ctx, cancel := context.WithTimeout(a.exited, 90*time.Second) // ends when the agent exits
	defer cancel()
	p, err := k.Plugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatalf("%v\n%s", err, a.log())
	}
	health := func(devs []*pluginapi.Device) string {
		byID := map[string]string{}
		for _, d := range devs {
			byID[d.ID] = d.Health[:1] // H or U
		}
		s := ""
		for _, u := range uuids {
			s += byID[u]
		}
		return s
	}
	if got := health(p.FirstDevices()); got != "HHUH" {
		t.Errorf("first ListAndWatch list %s, want HHUH (GPU 2 lost)", got)
	}
	if log := a.log(); !strings.Contains(log, `"Device faulty at discovery; advertised with its health" uuid="`+uuids[2]+`" kind="lost"`) {
		t.Errorf("no log of GPU 2 lost at discovery:\n%s", log)
	}

	// sampled returns the GPUs (indices) with a DCGM_FI_DEV_GPU_TEMP series,
	// and unhealthy those with gpuplane_device_health 0.
	sampled := func(m map[string]*dto.MetricFamily, name string, value func(float64) bool) string {
		var out []string
		for i, u := range uuids {
			for _, s := range seriesOf(m, name, map[string]string{"UUID": u, "GPU_I_ID": ""}) {
				if value(metricValue(s)) {
					out = append(out, fmt.Sprint(i))
					break
				}
			}
		}
		return strings.Join(out, ",")
	}
	all := func(float64) bool { return true }
	zero := func(v float64) bool { return v == 0 }
	a.eventually(t, "GPUs 0, 1, 3 sampled and GPU 2 unhealthy", func(m map[string]*dto.MetricFamily) bool {
		return sampled(m, "DCGM_FI_DEV_GPU_TEMP", all) == "0,1,3" && sampled(m, "gpuplane_device_health", zero) == "2"
	})

	// GPU 3 is lost too: it stops giving telemetry, GPUs 0 and 1 keep theirs.
	writeFaults(2, 3)
	a.eventually(t, "GPUs 0, 1 sampled and GPUs 2, 3 unhealthy", func(m map[string]*dto.MetricFamily) bool {
		return sampled(m, "DCGM_FI_DEV_GPU_TEMP", all) == "0,1" && sampled(m, "gpuplane_device_health", zero) == "2,3"
	})
	if _, err := p.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return health(d) == "HHUU" }); err != nil {
		t.Errorf("the kubelet never saw GPU 3 unhealthy: %s, %v", health(p.Devices()), err)
	}

	base := startPrometheus(t, ctx, strings.TrimSuffix(strings.TrimPrefix(a.url, "http://"), "/metrics"))
	// The alert is raised (pending for its 2 minutes, then firing) for the
	// lost GPUs only.
	var raised string
	for {
		var data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		promAPIGet(t, base, "/api/v1/alerts", url.Values{}, &data)
		var gpus []string
		for _, al := range data.Alerts {
			if al.Labels["alertname"] == "GPUTelemetryMissing" {
				gpus = append(gpus, al.Labels["gpu"]+"/"+al.Labels["UUID"])
			}
		}
		sort.Strings(gpus)
		raised = strings.Join(gpus, " ")
		if raised == "2/"+uuids[2]+" 3/"+uuids[3] {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GPUTelemetryMissing raised for %q, want GPUs 2 and 3 only", raised)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startPrometheus starts Prometheus (testenv.StartPrometheus) with
// gpuplane's alerting rules, scraping target every second, and returns its
// base URL once it is ready.
func startPrometheus(t *testing.T, ctx context.Context, target string) string {
	t.Helper()
	rules, err := filepath.Abs("../../../deploy/prometheus/gpuplane-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"+
		"rule_files: [%q]\n"+
		"scrape_configs:\n  - job_name: gpuplane\n    static_configs: [{targets: [%q]}]\n", rules, target)
	return testenv.StartPrometheus(t, ctx, config, "")
}
