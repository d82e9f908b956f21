// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"github.com/google/uuid"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
	"tags.cncf.io/container-device-interface/pkg/parser"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

// cdiPluginName is the plugin name in the CDI annotation's key, NVIDIA's
// device plugin's (k8s-device-plugin internal/plugin/server.go
// getCDIDeviceAnnotations: cdi.k8s.io/nvidia-device-plugin_<response ID>).
const cdiPluginName = "nvidia-device-plugin"

// cdiResponse names the devices uuids (GPU or MIG device UUIDs) to the
// runtime as CDI devices, nvidia.com/gpu=<UUID> (the node's toolkit spec,
// configv1.ListCDICRI), under the CDI strategies of cfg: in the CRI's
// CDIDevices (cdi-cri) and in an annotation of a fresh response ID
// (cdi-annotations), as NVIDIA's plugin does (updateResponseForCDI).
func cdiResponse(r *pluginapi.ContainerAllocateResponse, cfg *configv1.Config, uuids []string) {
	annotations, cri := cfg.HasListStrategy(configv1.ListCDIAnnotations), cfg.HasListStrategy(configv1.ListCDICRI)
	if !annotations && !cri {
		return
	}
	names := make([]string, len(uuids))
	for i, u := range uuids {
		names[i] = parser.QualifiedName("nvidia.com", "gpu", u)
	}
	if cri {
		for _, n := range names {
			r.CdiDevices = append(r.CdiDevices, &pluginapi.CDIDevice{Name: n})
		}
	}
	if annotations {
		a, err := cdiapi.UpdateAnnotations(map[string]string{}, cdiPluginName, uuid.NewString(), names)
		if err == nil { // only for names CDI refuses, which UUIDs are not
			r.Annotations = a
		}
	}
}
