// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestDriverCapabilities: the agent asks NVIDIA's container runtime for
// the driver capabilities its mode uses. utility mounts NVML
// (libnvidia-ml.so.1, which go-nvml dlopens); compute mounts the MPS
// programs nvidia-cuda-mps-control and nvidia-cuda-mps-server
// (libnvidia-container's src/nvc_info.c, compute_bins), which the agent
// runs for DRA claims under MPS. The device plugin refuses MPS
// (docs/node-agent.md), so it asks for utility alone.
func TestDriverCapabilities(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "utility"},
		{[]string{"--set", "nodeAgent.kubeletAPI=dra"}, "compute,utility"},
	} {
		_, ctr := agent(t, render(t, c.args...))
		if got := envValue(ctr, "NVIDIA_DRIVER_CAPABILITIES"); got != c.want {
			t.Errorf("%v: NVIDIA_DRIVER_CAPABILITIES %q, want %q", c.args, got, c.want)
		}
	}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
