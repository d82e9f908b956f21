// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestTemplateDriverRoot: nodeAgent.driverRoot /run/nvidia/driver (the
// GPU operator's containerized driver) is passed as --driver-root and
// mounted read-only at the same path, with the host's mounts propagated
// (the CDI specs name the host's paths); on both kubelet APIs. Empty (the
// default): no flag, no volume. / is refused at render time.
func TestTemplateDriverRoot(t *testing.T) {
	const root = "/run/nvidia/driver"
	for _, api := range []string{"device-plugin", "dra"} {
		ds, c := agent(t, render(t, "--set", "nodeAgent.kubeletAPI="+api, "--set", "nodeAgent.driverRoot="+root))
		if !slices.Contains(c.Args, "--driver-root="+root) {
			t.Errorf("%s: args %v", api, c.Args)
		}
		i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "driver-root" })
		if i < 0 || c.VolumeMounts[i].MountPath != root || !c.VolumeMounts[i].ReadOnly ||
			c.VolumeMounts[i].MountPropagation == nil || *c.VolumeMounts[i].MountPropagation != corev1.MountPropagationHostToContainer {
			t.Errorf("%s: mounts %+v", api, c.VolumeMounts)
		}
		v := slices.IndexFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "driver-root" })
		if v < 0 || ds.Spec.Template.Spec.Volumes[v].HostPath == nil || ds.Spec.Template.Spec.Volumes[v].HostPath.Path != root {
			t.Errorf("%s: volumes %+v", api, ds.Spec.Template.Spec.Volumes)
		}
	}
	ds, c := agent(t, render(t))
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--driver-root") }) ||
		slices.ContainsFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "driver-root" }) {
		t.Errorf("default: args %v, volumes %+v", c.Args, ds.Spec.Template.Spec.Volumes)
	}
	out, err := exec.Command(helmBin(t), templateArgs("--set", "nodeAgent.driverRoot=/")...).CombinedOutput()
	if want := "nodeAgent.driverRoot: / cannot be mounted at its own path"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("/: %v %s, want %q", err, out, want)
	}
}
