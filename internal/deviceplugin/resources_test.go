package deviceplugin

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/device"
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

func TestBuildResourcesErrors(t *testing.T) {
	for _, tc := range []struct{ profile, config, want string }{
		{"dgx-a100-80gb-mig", "flags: {migStrategy: single}", "migStrategy single: GPU 4"},
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
