// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import "testing"

// TestDeviceNamesRoundTrip checks that every device name the driver
// publishes parses back: a whole GPU, and a MIG placement of every compute
// slice count of NVML's compute instance profile table
// (internal/node/device.CIProfiles: 1, 2, 3, 4, 6, 7, 8), with and
// without +me. The names are written by hand.
func TestDeviceNamesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		want DeviceName
	}{
		{"gpu-0", DeviceName{Minor: 0}},
		{"gpu-15", DeviceName{Minor: 15}},
		{"gpu-0-mig-1g10gb-19-0", DeviceName{Minor: 0, Profile: "1g.10gb", ProfileID: 19, Start: 0}},
		{"gpu-0-mig-1g10gb-me-20-6", DeviceName{Minor: 0, Profile: "1g.10gb+me", ProfileID: 20, Start: 6}},
		{"gpu-1-mig-1g20gb-15-4", DeviceName{Minor: 1, Profile: "1g.20gb", ProfileID: 15, Start: 4}},
		{"gpu-1-mig-1g20gb-me-15-2", DeviceName{Minor: 1, Profile: "1g.20gb+me", ProfileID: 15, Start: 2}},
		{"gpu-2-mig-2g20gb-14-2", DeviceName{Minor: 2, Profile: "2g.20gb", ProfileID: 14, Start: 2}},
		{"gpu-2-mig-2g20gb-me-14-4", DeviceName{Minor: 2, Profile: "2g.20gb+me", ProfileID: 14, Start: 4}},
		{"gpu-3-mig-3g40gb-9-4", DeviceName{Minor: 3, Profile: "3g.40gb", ProfileID: 9, Start: 4}},
		{"gpu-3-mig-3g40gb-me-9-0", DeviceName{Minor: 3, Profile: "3g.40gb+me", ProfileID: 9, Start: 0}},
		{"gpu-4-mig-4g40gb-5-0", DeviceName{Minor: 4, Profile: "4g.40gb", ProfileID: 5, Start: 0}},
		{"gpu-4-mig-4g40gb-me-5-0", DeviceName{Minor: 4, Profile: "4g.40gb+me", ProfileID: 5, Start: 0}},
		{"gpu-5-mig-6g90gb-47-0", DeviceName{Minor: 5, Profile: "6g.90gb", ProfileID: 47, Start: 0}},
		{"gpu-5-mig-6g90gb-me-47-0", DeviceName{Minor: 5, Profile: "6g.90gb+me", ProfileID: 47, Start: 0}},
		{"gpu-6-mig-7g80gb-0-0", DeviceName{Minor: 6, Profile: "7g.80gb", ProfileID: 0, Start: 0}},
		{"gpu-6-mig-7g141gb-me-0-0", DeviceName{Minor: 6, Profile: "7g.141gb+me", ProfileID: 0, Start: 0}},
		{"gpu-7-mig-8g180gb-48-0", DeviceName{Minor: 7, Profile: "8g.180gb", ProfileID: 48, Start: 0}},
		{"gpu-7-mig-8g180gb-me-48-0", DeviceName{Minor: 7, Profile: "8g.180gb+me", ProfileID: 48, Start: 0}},
		{"gpu-10-mig-1g12gb-19-3", DeviceName{Minor: 10, Profile: "1g.12gb", ProfileID: 19, Start: 3}},
	} {
		got, err := ParseDeviceName(c.name)
		if err != nil || got != c.want {
			t.Errorf("ParseDeviceName(%q) = %+v, %v; want %+v", c.name, got, err, c.want)
		}
		if back := MakeDeviceName(c.want); back != c.name {
			t.Errorf("MakeDeviceName(%+v) = %q; want %q", c.want, back, c.name)
		}
		if got.MIG() != (c.want.Profile != "") {
			t.Errorf("%q: MIG() = %t", c.name, got.MIG())
		}
	}
}

func TestParseDeviceNameRefuses(t *testing.T) {
	for _, name := range []string{
		"", "gpu-", "gpu-01", "gpu-a", "cpu-0", "gpu-0-mig", "gpu-0-mig-1g.10gb-19-0",
		"gpu-0-mig-1g10gb-19", "gpu-0-mig-9g10gb-19-0", "gpu-0-mig-1g10gb+me-20-0",
		"gpu-0-mig-1g10gb-19-8", "gpu-0-mig-1c7g80gb-0-0", "gpu-0-counter-set",
	} {
		if n, err := ParseDeviceName(name); err == nil {
			t.Errorf("ParseDeviceName(%q) = %+v; want an error", name, n)
		}
	}
}

func TestParseMIGProfile(t *testing.T) {
	for _, c := range []struct {
		in, spelled string
		want        MIGProfile
	}{
		{"3g.40gb", "3g.40gb", MIGProfile{ComputeSlices: 3, MemoryGB: 40}},
		{"1g.10gb+me", "1g.10gb+me", MIGProfile{ComputeSlices: 1, MemoryGB: 10, MediaExtensions: true}},
		{"1g.10gb.me", "1g.10gb+me", MIGProfile{ComputeSlices: 1, MemoryGB: 10, MediaExtensions: true}},
		{"7g.141gb", "7g.141gb", MIGProfile{ComputeSlices: 7, MemoryGB: 141}},
		{"1c.7g.80gb", "1c.7g.80gb", MIGProfile{ComputeSlices: 7, ComputeInstanceSlices: 1, MemoryGB: 80}},
		{"1g.24gb+gfx", "1g.24gb+gfx", MIGProfile{ComputeSlices: 1, MemoryGB: 24, Attributes: "+gfx"}},
		{"2g.48gb-me", "2g.48gb-me", MIGProfile{ComputeSlices: 2, MemoryGB: 48, Attributes: "-me"}},
		{"8g.180gb", "8g.180gb", MIGProfile{ComputeSlices: 8, MemoryGB: 180}},
	} {
		got, err := ParseMIGProfile(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseMIGProfile(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if s := SpellMIGProfile(c.want); s != c.spelled {
			t.Errorf("SpellMIGProfile(%+v) = %q; want %q", c.want, s, c.spelled)
		}
	}
	for _, in := range []string{"", "3g", "3g.40", "g.40gb", "0g.10gb", "9g.10gb", "03g.40gb", "3g.040gb", "4c.3g.40gb", "1g.10gb+", "3x.40gb", "1g10gb", "1.2.3.4"} {
		if p, err := ParseMIGProfile(in); err == nil {
			t.Errorf("ParseMIGProfile(%q) = %+v; want an error", in, p)
		}
	}
	if MIGSlices("3g.40gb") != 3 || MIGSlices("1g.10gb+me") != 1 || MIGSlices("x") != 0 {
		t.Errorf("MIGSlices: 3g.40gb %d, 1g.10gb+me %d, x %d; want 3, 1, 0", MIGSlices("3g.40gb"), MIGSlices("1g.10gb+me"), MIGSlices("x"))
	}
}

func TestSelectors(t *testing.T) {
	for _, c := range []struct {
		clause, attr, value string
		ok                  bool
	}{
		{`device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`, "profile", "1g.10gb", true},
		{`  device.attributes['gpu.nvidia.com'].productName=='NVIDIA A100-SXM4-80GB' `, "productName", "NVIDIA A100-SXM4-80GB", true},
		{`device.attributes["other.example.com"].profile == "1g.10gb"`, "", "", false},
		{`device.attributes["gpu.nvidia.com"].profile != "1g.10gb"`, "", "", false},
	} {
		a, v, ok := ParseSelectorClause(c.clause)
		if a != c.attr || v != c.value || ok != c.ok {
			t.Errorf("ParseSelectorClause(%q) = %q, %q, %t; want %q, %q, %t", c.clause, a, v, ok, c.attr, c.value, c.ok)
		}
	}
	if p, ok := MIGProfileSelector(`device.attributes['gpu.nvidia.com'].profile == '3g.40gb'`); p != "3g.40gb" || !ok {
		t.Errorf("MIGProfileSelector: %q, %t; want 3g.40gb, true", p, ok)
	}
	for _, e := range []string{
		`device.attributes['gpu.nvidia.com'].type == 'mig'`,
		`device.attributes['gpu.nvidia.com'].profile == ''`,
		`device.attributes['gpu.nvidia.com'].profile == '1g.10gb' && device.attributes['gpu.nvidia.com'].type == 'mig'`,
	} {
		if p, ok := MIGProfileSelector(e); ok {
			t.Errorf("MIGProfileSelector(%q) = %q; want not ok", e, p)
		}
	}
}

func TestCounterNames(t *testing.T) {
	if got := CounterSetName(3); got != "gpu-3-counter-set" {
		t.Errorf("CounterSetName(3) = %q", got)
	}
	if got := MemorySliceCounter(7); got != "memory-slice-7" {
		t.Errorf("MemorySliceCounter(7) = %q", got)
	}
}
