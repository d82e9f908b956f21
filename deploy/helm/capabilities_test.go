// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestDriverCapabilities: the agent asks NVIDIA's container runtime for
// the driver capabilities its mode uses. utility mounts NVML
// (libnvidia-ml.so.1, which go-nvml dlopens); compute mounts the MPS
// programs nvidia-cuda-mps-control and nvidia-cuda-mps-server
// (libnvidia-container's src/nvc_info.c, compute_bins), which the agent
// runs for DRA claims under MPS and for the device plugin's sharing.mps
// (in config or in one of nodeConfigs.configs); otherwise utility alone.
func TestDriverCapabilities(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "utility"},
		{[]string{"--set", "nodeAgent.kubeletAPI=dra"}, "compute,utility"},
		{[]string{"-f", mpsValues(t, "config")}, "compute,utility"},
		{[]string{"-f", mpsValues(t, "nodeConfigs")}, "compute,utility"},
	} {
		_, ctr := agent(t, render(t, c.args...))
		if got := envValue(ctr, "NVIDIA_DRIVER_CAPABILITIES"); got != c.want {
			t.Errorf("%v: NVIDIA_DRIVER_CAPABILITIES %q, want %q", c.args, got, c.want)
		}
	}
}

// TestMPSMounts: with sharing.mps the agent gets the host's <mpsRoot>
// (NVIDIA's --mps-root; default /run/nvidia/mps) at the same path, where
// it makes each GPU's pipe and log directories that Allocate mounts into
// containers, and <mpsRoot>/shm as its /dev/shm, the daemons' shared
// memory that containers get as theirs (NVIDIA's mps-control-daemon
// DaemonSet mounts the same two, k8s-device-plugin
// deployments/helm/nvidia-device-plugin/templates/daemonset-mps-control-daemon.yml);
// without MPS, neither.
func TestMPSMounts(t *testing.T) {
	ds, ctr := agent(t, render(t, "-f", mpsValues(t, "config")))
	want := map[string][2]string{"mps-root": {"/run/nvidia/mps", "/run/nvidia/mps"}, "mps-shm": {"/dev/shm", "/run/nvidia/mps/shm"}}
	for name, w := range want {
		mounted, host := "", ""
		for _, m := range ctr.VolumeMounts {
			if m.Name == name {
				mounted = m.MountPath
			}
		}
		for _, v := range ds.Spec.Template.Spec.Volumes {
			if v.Name == name && v.HostPath != nil {
				host = v.HostPath.Path
			}
		}
		if mounted != w[0] || host != w[1] {
			t.Errorf("%s: mounted at %q from host %q, want %q from %q", name, mounted, host, w[0], w[1])
		}
	}
	_, plain := agent(t, render(t))
	for _, m := range plain.VolumeMounts {
		if m.Name == "mps-root" || m.Name == "mps-shm" {
			t.Errorf("without MPS: volume %s mounted", m.Name)
		}
	}
}

// mpsValues writes values with NVIDIA's MPS example (k8s-device-plugin
// README, "With CUDA MPS") as the config ("config") or as one of
// nodeConfigs.configs ("nodeConfigs").
func mpsValues(t *testing.T, where string) string {
	t.Helper()
	mps := "    version: v1\n    sharing:\n      mps:\n        resources:\n          - name: nvidia.com/gpu\n            replicas: 10\n"
	v := "config:\n" + mps
	if where == "nodeConfigs" {
		v = "nodeConfigs:\n  default: plain\n  configs:\n    plain:\n      version: v1\n    mps:\n" + indent(mps)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// indent indents each line of s by two spaces.
func indent(s string) string {
	out := ""
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			out += "  " + l
		}
	}
	return out
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
