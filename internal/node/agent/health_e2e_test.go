// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
)

// TestHealthAgrees runs the agent under migStrategy mixed with a test
// kubelet, makes the MIG-enabled GPU 1 of metricsProfile fall off the bus,
// and checks that the kubelet (ListAndWatch) and the metrics
// (gpuplane_device_health) tell the same health for every device: GPU 1's
// two MIG devices unhealthy with it, GPUs 0, 2 and 3 healthy.
func TestHealthAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("version: v1\nflags: {migStrategy: mixed}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startMetricsAgent(t, "--config", cfg)
	k, err := kubelettest.Start(a.dir) // the agent sees kubelet.sock appear and registers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	ctx, cancel := context.WithTimeout(a.exited, 90*time.Second) // ends when the agent exits
	defer cancel()

	gpu1 := a.node.GPUs[1]
	if len(gpu1.MIG) != 2 {
		t.Fatalf("GPU 1 has %d MIG devices, want 2", len(gpu1.MIG))
	}
	// The devices the kubelet sees: whole GPUs 0, 2, 3 and the two MIG
	// devices, with the health each should have once GPU 1 is lost.
	want := map[string]bool{a.node.GPUs[0].UUID: true, a.node.GPUs[2].UUID: true, a.node.GPUs[3].UUID: true,
		gpu1.MIG[0].UUID: false, gpu1.MIG[1].UUID: false}
	resources := []string{"nvidia.com/gpu", "nvidia.com/mig-" + gpu1.MIG[0].Profile, "nvidia.com/mig-" + gpu1.MIG[1].Profile}

	if err := os.WriteFile(a.faults+".tmp", []byte("faults:\n  - uuid: "+gpu1.UUID+"\n    lost: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(a.faults+".tmp", a.faults); err != nil {
		t.Fatal(err)
	}

	// The kubelet's view: the latest device list of each resource's latest
	// registration (the agent registers again when kubelet.sock appears).
	var kubelet map[string]bool
	err = k.Wait(ctx, func(k *kubelettest.Kubelet) bool {
		kubelet = map[string]bool{}
		for _, r := range resources {
			p := k.PluginLocked(r)
			if p == nil {
				return false
			}
			for _, d := range p.DevicesLocked() {
				kubelet[d.ID] = d.Health == pluginapi.Healthy
			}
		}
		return reflect.DeepEqual(kubelet, want)
	})
	if err != nil {
		t.Fatalf("the kubelet sees %v, want %v: %v\n%s", kubelet, want, err, a.log())
	}

	// The metrics' view: a MIG device's series carries its parent's UUID
	// label and its GPU instance; match it by GPU_I_ID.
	healthOf := func(m map[string]*dto.MetricFamily, uuid string) (float64, bool) {
		var found []*dto.Metric
		for _, s := range seriesOf(m, "gpuplane_device_health", nil) {
			ls := metricLabels(s)
			own := ls["UUID"] == uuid && ls["GPU_I_PROFILE"] == ""
			for _, mig := range gpu1.MIG {
				if mig.UUID == uuid {
					own = ls["UUID"] == gpu1.UUID && ls["GPU_I_PROFILE"] == mig.Profile
				}
			}
			if own {
				found = append(found, s)
			}
		}
		if len(found) != 1 {
			return 0, false
		}
		return metricValue(found[0]), true
	}
	mfs := a.eventually(t, "GPU 1 unhealthy in the metrics", func(m map[string]*dto.MetricFamily) bool {
		v, ok := healthOf(m, gpu1.UUID)
		return ok && v == 0
	})
	for uuid, healthy := range kubelet {
		v, ok := healthOf(mfs, uuid)
		if !ok {
			t.Errorf("%s: no gpuplane_device_health series", uuid)
			continue
		}
		if (v == 1) != healthy {
			t.Errorf("%s: the kubelet is told healthy=%v, gpuplane_device_health is %v", uuid, healthy, v)
		}
	}
}

// TestHealthChecksEnv runs the agent with NVIDIA's DP_DISABLE_HEALTHCHECKS=all
// and a malformed DP_ENABLE_HEALTHCHECKS entry: XID 94 on GPU 2 leaves it
// healthy (k8s-device-plugin internal/rm/health.go: checkHealth stops when
// every XID is disabled), GPU 3 lost is still unhealthy (a gpuplane
// difference, docs/node-agent.md), and the malformed entry is logged.
func TestHealthChecksEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary")
	}
	t.Setenv("DP_DISABLE_HEALTHCHECKS", "all")
	t.Setenv("DP_ENABLE_HEALTHCHECKS", "4x")
	a := startMetricsAgent(t)
	gpu2, gpu3 := a.node.GPUs[2].UUID, a.node.GPUs[3].UUID
	faults := "faults:\n  - uuid: " + gpu2 + "\n    xid: 94\n  - uuid: " + gpu3 + "\n    lost: true\n"
	if err := os.WriteFile(a.faults+".tmp", []byte(faults), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(a.faults+".tmp", a.faults); err != nil {
		t.Fatal(err)
	}
	health := func(m map[string]*dto.MetricFamily, uuid string) float64 {
		for _, s := range seriesOf(m, "gpuplane_device_health", nil) {
			if metricLabels(s)["UUID"] == uuid {
				return metricValue(s)
			}
		}
		return -1
	}
	// Both faults come in one read of the file: once GPU 3 is unhealthy,
	// GPU 2's XID has been applied too.
	m := a.eventually(t, "GPU 3 unhealthy", func(m map[string]*dto.MetricFamily) bool { return health(m, gpu3) == 0 })
	if got := health(m, gpu2); got != 1 {
		t.Errorf("GPU 2 after XID 94 under DP_DISABLE_HEALTHCHECKS=all: gpuplane_device_health %v, want 1", got)
	}
	if log := a.log(); !strings.Contains(log, `DP_ENABLE_HEALTHCHECKS: ignoring malformed XID "4x"`) {
		t.Errorf("no warning for the malformed entry:\n%s", log)
	}
}
