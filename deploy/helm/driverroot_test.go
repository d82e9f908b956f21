// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestTemplateDriverRoot: nodeAgent.driverRoot / (a driver installed on
// the host) or /run/nvidia/driver (the GPU operator's driver container)
// is passed as --driver-root, mounted read-only from the host at
// /driver-root with the host's mounts propagated, and named as
// --container-driver-root, on both kubelet APIs. Empty (the default): no
// flag, no volume.
func TestTemplateDriverRoot(t *testing.T) {
	for _, root := range []string{"/", "/run/nvidia/driver"} {
		for _, api := range []string{"device-plugin", "dra"} {
			ds, c := agent(t, render(t, "--set", "nodeAgent.kubeletAPI="+api, "--set", "nodeAgent.driverRoot="+root))
			if !slices.Contains(c.Args, "--driver-root="+root) || !slices.Contains(c.Args, "--container-driver-root=/driver-root") {
				t.Errorf("%s %s: args %v", root, api, c.Args)
			}
			i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "driver-root" })
			if i < 0 || c.VolumeMounts[i].MountPath != "/driver-root" || !c.VolumeMounts[i].ReadOnly ||
				c.VolumeMounts[i].MountPropagation == nil || *c.VolumeMounts[i].MountPropagation != corev1.MountPropagationHostToContainer {
				t.Errorf("%s %s: mounts %+v", root, api, c.VolumeMounts)
			}
			v := slices.IndexFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "driver-root" })
			if v < 0 || ds.Spec.Template.Spec.Volumes[v].HostPath == nil || ds.Spec.Template.Spec.Volumes[v].HostPath.Path != root {
				t.Errorf("%s %s: volumes %+v", root, api, ds.Spec.Template.Spec.Volumes)
			}
		}
	}
	ds, c := agent(t, render(t))
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "driver-root") }) ||
		slices.ContainsFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "driver-root" }) {
		t.Errorf("default: args %v, volumes %+v", c.Args, ds.Spec.Template.Spec.Volumes)
	}
}
