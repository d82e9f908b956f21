// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"strings"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

// TestCDIResponse: NVIDIA's CDI strategies name the toolkit's devices
// nvidia.com/gpu=<UUID> in the CRI field (cdi-cri) and in one annotation
// cdi.k8s.io/nvidia-device-plugin_<response ID> (cdi-annotations), values
// as NVIDIA's plugin writes them (k8s-device-plugin
// internal/plugin/server_test.go TestCDIAllocateResponse:
// "cdi.k8s.io/nvidia-device-plugin_uuid": "nvidia.com/gpu=gpu0,nvidia.com/gpu=gpu1").
func TestCDIResponse(t *testing.T) {
	uuids := []string{"GPU-a", "GPU-b"}
	for _, tc := range []struct {
		strategies []string
		cri        string
		annotation string
	}{
		{[]string{"envvar"}, "", ""},
		{[]string{"cdi-cri"}, "nvidia.com/gpu=GPU-a,nvidia.com/gpu=GPU-b", ""},
		{[]string{"cdi-annotations"}, "", "nvidia.com/gpu=GPU-a,nvidia.com/gpu=GPU-b"},
		{[]string{"envvar", "cdi-cri", "cdi-annotations"}, "nvidia.com/gpu=GPU-a,nvidia.com/gpu=GPU-b", "nvidia.com/gpu=GPU-a,nvidia.com/gpu=GPU-b"},
	} {
		cfg := &configv1.Config{}
		cfg.Flags.Plugin.DeviceListStrategy = tc.strategies
		r := &pluginapi.ContainerAllocateResponse{}
		cdiResponse(r, cfg, uuids)
		var cri []string
		for _, d := range r.CdiDevices {
			cri = append(cri, d.Name)
		}
		if got := strings.Join(cri, ","); got != tc.cri {
			t.Errorf("%v: CDI devices %q, want %q", tc.strategies, got, tc.cri)
		}
		if tc.annotation == "" {
			if len(r.Annotations) != 0 {
				t.Errorf("%v: annotations %v, want none", tc.strategies, r.Annotations)
			}
			continue
		}
		if len(r.Annotations) != 1 {
			t.Fatalf("%v: annotations %v, want one", tc.strategies, r.Annotations)
		}
		for k, v := range r.Annotations {
			if !strings.HasPrefix(k, "cdi.k8s.io/nvidia-device-plugin_") || len(k) > len("cdi.k8s.io/")+63 || v != tc.annotation {
				t.Errorf("%v: annotation %s=%s, want cdi.k8s.io/nvidia-device-plugin_<id>=%s", tc.strategies, k, v, tc.annotation)
			}
		}
	}
}
