// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"slices"
	"strings"
	"testing"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// TestRealKubeletCDIStrategies: with NVIDIA's CDI device list strategies
// (deviceListStrategy: [cdi-cri, cdi-annotations], an NVIDIA config file
// as it is), a pod asking nvidia.com/gpu: 2 gets the preferred NVLinked
// pair, GPUs 5 and 6, and the real kubelet hands the runtime exactly the
// CDI devices nvidia.com/gpu=<UUID 5> and <UUID 6>: in the CRI's
// CDIDevices and in the container annotation
// cdi.k8s.io/nvidia-device-plugin_<id>; no NVIDIA_VISIBLE_DEVICES (no
// envvar strategy).
func TestRealKubeletCDIStrategies(t *testing.T) {
	e := startRealEnv(t, realProfile, "version: v1\nflags: {plugin: {deviceListStrategy: [cdi-cri, cdi-annotations]}}\n")
	e.startAgent()
	e.waitResource(gpuresource.GPU, 8, 8)
	e.createPod("a", gpuLimit("2"), nil)
	e.waitRunning("a")
	want := []string{"nvidia.com/gpu=" + realUUID(5), "nvidia.com/gpu=" + realUUID(6)}
	rec := e.record("a")
	got := slices.Clone(rec.CDIDevices)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("CDI devices %v, want %v", rec.CDIDevices, want)
	}
	var ann []string
	for k, v := range rec.Annotations {
		if strings.HasPrefix(k, "cdi.k8s.io/") {
			if !strings.HasPrefix(k, "cdi.k8s.io/nvidia-device-plugin_") {
				t.Errorf("annotation key %s", k)
			}
			ann = append(ann, strings.Split(v, ",")...)
		}
	}
	slices.Sort(ann)
	if !slices.Equal(ann, want) {
		t.Errorf("CDI annotations name %v, want %v (all annotations %v)", ann, want, rec.Annotations)
	}
	if v, ok := rec.Env["NVIDIA_VISIBLE_DEVICES"]; ok {
		t.Errorf("NVIDIA_VISIBLE_DEVICES=%s without the envvar strategy", v)
	}
}
