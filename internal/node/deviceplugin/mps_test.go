// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"strings"
	"testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// TestMPSSettings: NVIDIA's per-replica limits (cmd/mps-control-daemon
// daemon.go): 100/replicas percent, memory/replicas MiB rounded down. The
// H200 of issue 35, 143771 MiB, 3 replicas: 33 %, 47923 MiB (47923.67).
func TestMPSSettings(t *testing.T) {
	s := mpsSettings(device.GPU{UUID: "GPU-h200", MemoryMiB: 143771}, 3)
	if *s.ActiveThreadPercentage != 33 || s.PinnedMemLimits["GPU-h200"] != "47923M" {
		t.Errorf("settings %d %% %v, want 33 %% 47923M", *s.ActiveThreadPercentage, s.PinnedMemLimits)
	}
}

// TestBuildResourcesMPS: MPS replicas of whole GPUs are marked MPS; MIG
// devices under the single strategy are refused, as NVIDIA's plugin
// refuses them ("sharing using MPS is not supported for MIG devices").
func TestBuildResourcesMPS(t *testing.T) {
	n, err := mock.Discover("l40s-pcie-4")
	if err != nil {
		t.Fatal(err)
	}
	c := parse(t, "sharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}")
	rs, err := BuildResources(n, c)
	if err != nil || len(rs) != 1 || !rs[0].MPS || len(rs[0].Devices) != 8 || rs[0].Name != "nvidia.com/gpu" {
		t.Fatalf("resources %+v, %v; want nvidia.com/gpu, 8 MPS replicas", rs, err)
	}
	single := parse(t, "flags: {migStrategy: single}\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}")
	mn, err := mock.DiscoverProfile("m.yaml", []byte("name: m\ngpus:\n  - {count: 2, productName: NVIDIA A100-SXM4-80GB, mig: [3g.40gb]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildResources(mn, single); err == nil || !strings.Contains(err.Error(), "sharing using MPS is not supported for MIG devices") {
		t.Errorf("MPS of MIG devices: %v", err)
	}
}

// TestAllocateMPS: with failRequestsGreaterThanOne false, two replicas of
// one GPU share its daemon (one pipe mount); replicas of two GPUs are
// refused, since a container talks to one MPS server.
func TestAllocateMPS(t *testing.T) {
	n, err := mock.Discover("l40s-pcie-4")
	if err != nil {
		t.Fatal(err)
	}
	c := parse(t, "flags: {mpsRoot: /run/x}\nsharing: {mps: {failRequestsGreaterThanOne: false, resources: [{name: nvidia.com/gpu, replicas: 2}]}}")
	rs, err := BuildResources(n, c)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlugin(&n, &rs[0], c, NewHealth(n, nil), t.TempDir())
	g0, g1 := n.GPUs[0].UUID, n.GPUs[1].UUID
	r, err := p.allocate([]string{g0 + "::0", g0 + "::1"})
	if err != nil || len(r.Mounts) != 2 || r.Mounts[0].HostPath != "/run/x/"+g0+"/pipe" || r.Envs["CUDA_MPS_PIPE_DIRECTORY"] != "/mps/nvidia.com/gpu/pipe" {
		t.Errorf("two replicas of GPU 0: %v, %v", r, err)
	}
	if _, err := p.allocate([]string{g0 + "::0", g1 + "::0"}); err == nil || !strings.Contains(err.Error(), "MPS replicas of 2 GPUs in one container") {
		t.Errorf("replicas of two GPUs: %v", err)
	}
}

func parse(t *testing.T, y string) *configv1.Config {
	t.Helper()
	c, err := configv1.ParseConfig("c.yaml", []byte("version: v1\n"+y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
