// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import (
	"strings"
	"testing"
)

// One vendor's whole devices and nothing else: the rule the snapshot
// reader and gpuplane-scheduler share. No node serves two vendors'
// devices (AMD's device plugin advertises amd.com/gpu only, Intel's
// habana.ai/gaudi only), so every mix is refused by name.
func TestVendorRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      map[string]int64
		wantName string
		want     int64
		err      string
	}{
		{"AMD", map[string]int64{"cpu": 8000, AMDGPU: 4}, AMDGPU, 4, ""},
		{"Gaudi", map[string]int64{Gaudi: 8}, Gaudi, 8, ""},
		{"NVIDIA only", map[string]int64{GPU: 2}, "", 0, ""},
		{"none", map[string]int64{"cpu": 1000}, "", 0, ""},
		{"zero AMD is none", map[string]int64{AMDGPU: 0, GPU: 1}, "", 0, ""},
		{"two vendors", map[string]int64{AMDGPU: 2, Gaudi: 1}, "", 0, "amd.com/gpu 2 and habana.ai/gaudi 1"},
		{"with nvidia.com/gpu", map[string]int64{AMDGPU: 1, GPU: 1}, "", 0, "amd.com/gpu 1 with nvidia.com/gpu"},
		{"with a listed share, even 0", map[string]int64{Gaudi: 1, GPUMilli: 0}, "", 0, "habana.ai/gaudi 1 with gpuplane.io/gpu-milli"},
		{"with a MIG device", map[string]int64{AMDGPU: 1, MIGPrefix + "1g.10gb": 1}, "", 0, "with nvidia.com/mig-1g.10gb"},
		{"with a time-sliced replica", map[string]int64{Gaudi: 1, GPU + SharedSuffix: 1}, "", 0, "with nvidia.com/gpu.shared"},
		{"above 64", map[string]int64{AMDGPU: 65}, "", 0, "amd.com/gpu 65 above 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, n, err := VendorRequest(tc.req)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || name != tc.wantName || n != tc.want {
				t.Errorf("got %q %d %v, want %q %d", name, n, err, tc.wantName, tc.want)
			}
		})
	}
}
