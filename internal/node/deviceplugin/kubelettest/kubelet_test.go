// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kubelettest

import (
	"strings"
	"testing"
)

// The resource names the real kubelet v1.37.2 accepts from a device
// plugin (IsExtendedResourceName), as gpuplane serves them or must not.
func TestIsExtendedResourceName(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu":                        true,
		"nvidia.com/gpu.shared":                 true,
		"nvidia.com/mig-1g.10gb":                true,
		"nvidia.com/mig-1g.10gb.me":             true,
		"gpuplane.io/gpu-milli":                 true,
		"nvidia.com/mig-1g.10gb+me":             false, // why gpuplane serves "+" as "."
		"gpu":                                   false,
		"kubernetes.io/gpu":                     false,
		"example.kubernetes.io/gpu":             false,
		"requests.example.com/gpu":              false,
		"nvidia.com/" + strings.Repeat("a", 64): false, // a name part over 63
	} {
		if got := isExtendedResourceName(name); got != want {
			t.Errorf("%q: %v, want %v", name, got, want)
		}
	}
}
