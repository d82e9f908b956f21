// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

// The chart's two classes, as deploy/helm/gpuplane/templates/deviceclass.yaml
// writes them (NVIDIA's DRA driver's classes).
func TestDeviceClasses(t *testing.T) {
	dcs, err := DeviceClasses(filepath.Join("..", "..", "..", DeviceClassTemplate))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"gpu.nvidia.com": {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", "nvidia.com/gpu"},
		"mig.nvidia.com": {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", ""},
	}
	if len(dcs) != len(want) {
		t.Fatalf("%d classes, want %d: %+v", len(dcs), len(want), dcs)
	}
	for _, dc := range dcs {
		w, ok := want[dc.Name]
		if !ok || len(dc.Spec.Selectors) != 1 || dc.Spec.Selectors[0].CEL == nil || dc.Spec.Selectors[0].CEL.Expression != w[0] || ptr.Deref(dc.Spec.ExtendedResourceName, "") != w[1] {
			t.Errorf("class %+v, want %v", dc, w)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: DeviceClass\nmetadata: {name: x}\nspec: {selectorz: []}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DeviceClasses(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml: document 1") || !strings.Contains(err.Error(), "selectorz") {
		t.Errorf("unknown field: %v", err)
	}
}
