// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package device

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Expected names worked out by hand from go-nvlib's rule
// (pkg/nvlib/device/mig_profile.go getMigMemorySizeGB, v0.13.0):
// gb = round(ceil(8 * mem/total) / 8 * ceil(total/1024)).
func TestMIGProfileName(t *testing.T) {
	for _, tc := range []struct {
		gi, ci      int
		mem, total  int64
		want        string
		description string
	}{
		// 11008/95830 = 0.1149 -> 1/8; ceil(95830/1024) = 94; 94/8 = 11.75 -> 12.
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 11008, 95830, "1g.12gb", "H100 NVL 1g"},
		// The same instance on a GPU taken for H100 80GB (81920 MiB) would be
		// 11008/81920 = 0.134 -> 2/8 of 80: 1g.20gb, hence the real total.
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 11008, 81920, "1g.20gb", "H100 NVL 1g as 80GB"},
		// A100-SXM4-80GB, 1g with media extensions: 9856/81920 = 0.96 -> 1/8 of 80.
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 9856, 81920, "1g.10gb+me", "A100 1g+me"},
		// A100-40GB, 7g instance, one 1-slice compute instance: 40192/40960 -> 8/8 of 40.
		{nvml.GPU_INSTANCE_PROFILE_7_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 40192, 40960, "1c.7g.40gb", "A100-40GB 1c.7g"},
		{nvml.GPU_INSTANCE_PROFILE_7_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE, 40192, 40960, "7g.40gb", "A100-40GB 7g"},
		// A100-40GB 3g: 19968/40960 = 0.4875 -> 4/8 of 40 = 20.
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, 19968, 40960, "3g.20gb", "A100-40GB 3g"},
	} {
		got, err := MIGProfileName(tc.gi, tc.ci, tc.mem, tc.total)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.description, got, err, tc.want)
		}
	}
	if _, err := MIGProfileName(99, 0, 1, 2); err == nil || !strings.Contains(err.Error(), "invalid GPU Instance Profile ID: 99") {
		t.Errorf("unknown GI profile: %v", err)
	}
	if _, err := MIGProfileName(0, 0, 0, 81920); err == nil {
		t.Error("zero memory accepted")
	}
}

func TestMIGResourceProfile(t *testing.T) {
	for in, want := range map[string]string{"1g.10gb": "1g.10gb", "1g.10gb+me": "1g.10gb.me", "7g.141gb": "7g.141gb"} {
		if got, err := MIGResourceProfile(in); err != nil || got != want {
			t.Errorf("MIGResourceProfile(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"1c.7g.40gb", "2c.3g.20gb+me"} {
		if name, err := MIGResourceProfile(in); err == nil || !strings.Contains(err.Error(), in+" is a compute instance smaller than its GPU instance") || name != strings.ReplaceAll(in, "+", ".") {
			t.Errorf("MIGResourceProfile(%q): %v", in, err)
		}
	}
}

func TestCheckSingleMIG(t *testing.T) {
	mig := func(ps ...string) []MIGDevice {
		var out []MIGDevice
		for _, p := range ps {
			out = append(out, MIGDevice{Profile: p})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		gpus []GPU
		want string
	}{
		{"no MIG", []GPU{{UUID: "GPU-0"}, {UUID: "GPU-1"}}, ""},
		{"uniform", []GPU{{UUID: "GPU-0", MIGEnabled: true, MIG: mig("1g.10gb", "1g.10gb")}, {UUID: "GPU-1", MIGEnabled: true, MIG: mig("1g.10gb")}}, ""},
		{"empty", []GPU{{UUID: "GPU-0", MIGEnabled: true, MIG: mig("1g.10gb")}, {UUID: "GPU-1", MIGEnabled: true}}, "GPU 1 (GPU-1) has MIG enabled but no MIG devices"},
		// An empty GPU is reported before MIG disabled elsewhere, as GFD checks.
		{"empty and off", []GPU{{UUID: "GPU-0"}, {UUID: "GPU-1", MIGEnabled: true}}, "GPU 1 (GPU-1) has MIG enabled but no MIG devices"},
		{"on and off", []GPU{{UUID: "GPU-0"}, {UUID: "GPU-1", MIGEnabled: true, MIG: mig("1g.10gb")}}, "GPU 0 (GPU-0) has MIG disabled while GPU 1 has it enabled"},
		{"two profiles", []GPU{{UUID: "GPU-0", MIGEnabled: true, MIG: mig("1g.10gb")}, {UUID: "GPU-1", MIGEnabled: true, MIG: mig("1g.10gb", "3g.40gb")}}, "more than one MIG profile: GPU 1 (GPU-1) has 3g.40gb besides 1g.10gb"},
	} {
		err := CheckSingleMIG(Node{GPUs: tc.gpus})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
