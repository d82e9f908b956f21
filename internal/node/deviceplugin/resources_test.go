// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

func summary(rs []Resource) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s=%d", r.Name, len(r.Devices)))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestBuildResources(t *testing.T) {
	for _, tc := range []struct {
		profile, config, want string
	}{
		{"dgx-h100", "", "nvidia.com/gpu=8"},
		{"dgx-h100", "flags: {migStrategy: single}", "nvidia.com/gpu=8"},
		{"dgx-h100", "flags: {migStrategy: mixed}", "nvidia.com/gpu=8"},
		{"l40s-pcie-4", "sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 3}]}}", "nvidia.com/gpu=12"},
		{"l40s-pcie-4", "sharing: {timeSlicing: {renameByDefault: true, resources: [{name: nvidia.com/gpu, replicas: 3}]}}", "nvidia.com/gpu.shared=12"},
		{"dgx-a100-80gb-mig", "", "nvidia.com/gpu=8"},
		// GPUs 0-3: 7x 1g.10gb; GPUs 4-5: 3g.40gb, 2g.20gb, 2x 1g.10gb; GPUs 6-7 whole.
		{"dgx-a100-80gb-mig", "flags: {migStrategy: mixed}", "nvidia.com/gpu=2 nvidia.com/mig-1g.10gb=32 nvidia.com/mig-2g.20gb=2 nvidia.com/mig-3g.40gb=2"},
		{"dgx-a100-80gb-mig", "flags: {migStrategy: mixed}\nsharing: {timeSlicing: {renameByDefault: true, resources: [{name: nvidia.com/mig-3g.40gb, replicas: 5}]}}",
			"nvidia.com/gpu=2 nvidia.com/mig-1g.10gb=32 nvidia.com/mig-2g.20gb=2 nvidia.com/mig-3g.40gb.shared=10"},
		// gpu-milli: 1000 units per GPU with MIG disabled (GPUs 6-7 of the
		// A100 profile, whatever the strategy).
		{"dgx-h100", "gpuplane: {milliGPU: true}", "gpuplane.io/gpu-milli=8000 nvidia.com/gpu=8"},
		{"dgx-a100-80gb-mig", "gpuplane: {milliGPU: true}", "gpuplane.io/gpu-milli=2000 nvidia.com/gpu=8"},
		{"dgx-a100-80gb-mig", "flags: {migStrategy: mixed}\ngpuplane: {milliGPU: true}",
			"gpuplane.io/gpu-milli=2000 nvidia.com/gpu=2 nvidia.com/mig-1g.10gb=32 nvidia.com/mig-2g.20gb=2 nvidia.com/mig-3g.40gb=2"},
	} {
		n := testNode(t, tc.profile)
		rs, err := BuildResources(n, testConfig(t, tc.config))
		if err != nil {
			t.Errorf("%s %q: %v", tc.profile, tc.config, err)
			continue
		}
		if got := summary(rs); got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.profile, tc.config, got, tc.want)
		}
	}
}

func TestBuildResourcesIDs(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	rs, _ := BuildResources(n, testConfig(t, "sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}"))
	d := rs[0].Devices[3]
	if d.ID != device.ID(n.GPUs[1].UUID+"::1") || d.GPU != 1 || d.Replica != 1 || d.MIG != -1 {
		t.Errorf("device 3 = %+v", d)
	}
	rs, _ = BuildResources(n, testConfig(t, "gpuplane: {milliGPU: true}"))
	m := rs[0]
	d = m.Devices[1299] // GPU 1, unit 299
	if m.Name != "gpuplane.io/gpu-milli" || !m.Milli || m.Replicas != 1 || d.ID != device.ID(n.GPUs[1].UUID+"::m299") || d.UUID != n.GPUs[1].UUID || d.GPU != 1 || d.Replica != 299 || d.MIG != -1 {
		t.Errorf("gpu-milli %s (milli %v, replicas %d): device 1299 = %+v", m.Name, m.Milli, m.Replicas, d)
	}
	if got := SocketName("nvidia.com/mig-1g.10gb"); got != "gpuplane-nvidia.com-mig-1g.10gb.sock" {
		t.Errorf("SocketName = %s", got)
	}
}

// profileNode is the node of a mock profile given as YAML.
func profileNode(t *testing.T, yaml string) device.Node {
	t.Helper()
	p, err := mock.ParseProfile("p.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.Node()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBuildResourcesMIGNames: resource names as NVIDIA's device plugin makes
// them (k8s-device-plugin internal/rm/rm.go AddDefaultResourcesToConfig):
// "+" of a media-extension profile becomes ".", and only profiles whose
// compute instance spans the GPU instance (C == G) get a resource, so the
// seven 1c.7g.40gb devices of GPU 1 are left out, never advertised as
// 7g.40gb, and Excluded names each; a MIG-enabled GPU without MIG devices
// is left out with a warning (internal/rm/device_map.go). The H100 NVL's
// one-slice instance of 11008 MiB is named 1g.12gb from its memory.
func TestBuildResourcesMIGNames(t *testing.T) {
	n := profileNode(t, `
gpus:
- productName: NVIDIA A100-SXM4-80GB
  mig: [1g.10gb+me, 3g.40gb]
- productName: NVIDIA A100-SXM4-40GB
  mig: [{profile: 7g.40gb, computeInstances: [1, 1, 1, 1, 1, 1, 1]}]
- productName: NVIDIA A100-SXM4-80GB
  migEnabled: true
- productName: NVIDIA H100 NVL
  memoryMiB: 95830
  mig: [{profile: 1g.12gb, memoryMiB: 11008}]
`)
	c := testConfig(t, "flags: {migStrategy: mixed}")
	rs, err := BuildResources(n, c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summary(rs), "nvidia.com/mig-1g.10gb.me=1 nvidia.com/mig-1g.12gb=1 nvidia.com/mig-3g.40gb=1"; got != want {
		t.Errorf("resources %s, want %s", got, want)
	}
	// The kubelet's check on registration (pkg/kubelet/cm/devicemanager
	// server.go: v1helper.IsExtendedResourceName, which requires a
	// qualified name).
	for _, r := range rs {
		if errs := validation.IsQualifiedName(r.Name); len(errs) != 0 {
			t.Errorf("resource %s: the kubelet refuses it: %v", r.Name, errs)
		}
	}
	ex := Excluded(n, c)
	if len(ex) != 8 {
		t.Fatalf("%d excluded, want 7 MIG devices and GPU 2: %v", len(ex), ex)
	}
	if got := ex[0].Error(); !strings.Contains(got, "GPU 1 ("+n.GPUs[1].UUID+") MIG device "+n.GPUs[1].MIG[0].UUID+": MIG profile 1c.7g.40gb is a compute instance smaller than its GPU instance") {
		t.Errorf("excluded[0] = %s", got)
	}
	if got := ex[7].Error(); got != "migStrategy mixed: GPU 2 ("+n.GPUs[2].UUID+") has MIG enabled but no MIG devices; nothing is advertised for it" {
		t.Errorf("excluded[7] = %s", got)
	}
	// Under single, NVIDIA's plugin serves 1c.7g.40gb devices (its
	// single-strategy pattern "*" matches every profile) as nvidia.com/gpu.
	n.GPUs = n.GPUs[1:2]
	c = testConfig(t, "flags: {migStrategy: single}")
	if rs, err := BuildResources(n, c); err != nil || summary(rs) != "nvidia.com/gpu=7" || len(Excluded(n, c)) != 0 {
		t.Errorf("single on seven 1c.7g.40gb: %s, %v, excluded %v", summary(rs), err, Excluded(n, c))
	}
}

// TestBuildResourcesSingleInvalid: under single, a node that
// gpu-feature-discovery labels MIG-INVALID (k8s-device-plugin
// internal/lm/mig-strategy.go) gets no nvidia.com/gpu devices and no error,
// so the agent keeps running; milli-GPU units of whole GPUs stay, and a
// time-sliced nvidia.com/gpu is not an error either.
func TestBuildResourcesSingleInvalid(t *testing.T) {
	for _, tc := range []struct{ profile, config, want, excluded string }{
		{"dgx-a100-80gb-mig", "flags: {migStrategy: single}", "", "GPU 6 "},
		{"dgx-a100-80gb-mig", "flags: {migStrategy: single}\ngpuplane: {milliGPU: true}", "gpuplane.io/gpu-milli=2000", "GPU 6 "},
		{"dgx-a100-80gb-mig", "flags: {migStrategy: single}\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}", "", "GPU 6 "},
	} {
		n := testNode(t, tc.profile)
		c := testConfig(t, tc.config)
		rs, err := BuildResources(n, c)
		if err != nil || summary(rs) != tc.want {
			t.Errorf("%q: %s, %v; want %q", tc.config, summary(rs), err, tc.want)
		}
		ex := Excluded(n, c)
		if len(ex) != 1 || !strings.Contains(ex[0].Error(), "migStrategy single: "+tc.excluded) {
			t.Errorf("%q: excluded %v", tc.config, ex)
		}
	}
	// Every GPU MIG-enabled, one without MIG devices.
	n := profileNode(t, "gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [1g.10gb]}, {productName: NVIDIA A100-SXM4-80GB, migEnabled: true}]")
	c := testConfig(t, "flags: {migStrategy: single}")
	rs, err := BuildResources(n, c)
	ex := Excluded(n, c)
	if err != nil || len(rs) != 0 || len(ex) != 1 || ex[0].Error() != "migStrategy single: GPU 1 ("+n.GPUs[1].UUID+") has MIG enabled but no MIG devices; no GPU is advertised as nvidia.com/gpu (use mixed)" {
		t.Errorf("empty MIG GPU: %s, %v, %v", summary(rs), err, ex)
	}
}

func TestBuildResourcesErrors(t *testing.T) {
	for _, tc := range []struct{ profile, config, want string }{
		{"dgx-h100", "sharing: {timeSlicing: {resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}]}}", "resources[0].name: resource nvidia.com/mig-1g.10gb does not exist"},
	} {
		_, err := BuildResources(testNode(t, tc.profile), testConfig(t, tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want %q", tc.profile, tc.config, err, tc.want)
		}
	}
}

// TestBuildResourcesLostGPU: a GPU lost at discovery that NVML tells
// nothing about (MIG mode unknown) does not stop migStrategy single: with
// MIG on the other GPUs it gets no devices, with MIG off everywhere it is
// served whole (and unhealthy).
func TestBuildResourcesLostGPU(t *testing.T) {
	for _, tc := range []struct {
		profile, want string
	}{
		// GPUs 0-3 of the A100 profile: 7x 1g.10gb each; GPU 3 lost.
		{"single-a100", "nvidia.com/gpu=21"},
		{"dgx-h100", "nvidia.com/gpu=8"},
	} {
		var n device.Node
		if tc.profile == "single-a100" {
			n = testNode(t, "dgx-a100-80gb-mig")
			n.GPUs, n.Links = n.GPUs[:4], nil
		} else {
			n = testNode(t, tc.profile)
		}
		n.GPUs[3] = device.GPU{Index: 3, UUID: n.GPUs[3].UUID, NUMANode: -1}
		n.Faults = []device.HealthEvent{{UUID: n.GPUs[3].UUID, Kind: device.HealthLost}}
		rs, err := BuildResources(n, testConfig(t, "flags: {migStrategy: single}"))
		if err != nil {
			t.Errorf("%s: %v", tc.profile, err)
			continue
		}
		if got := summary(rs); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.profile, got, tc.want)
		}
	}
}
