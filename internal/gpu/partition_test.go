// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"strings"
	"testing"
)

// TestPartitions works each scheme out by hand from the vendors' numbers.
// MI300X: 192 GB = 196,608 MiB and 304 CUs on 8 XCDs of 38 CUs (AMD's
// MI300X partitioning overview: "each XCD contains 38 Compute Units");
// CPX makes one GPU per XCD, 8 GPUs of 196,608/8 = 24,576 MiB (24 GB) and
// 38 CUs, in NPS1 as in NPS4, as AMD documents CPX (8 GPUs of 24 GB);
// DPX 2 of 98,304 MiB (96 GB) and 152 CUs; QPX/NPS4 4 of 49,152 MiB (48
// GB, one NPS4 domain each) and 76 CUs. MI325X CPX: 262,144/8 = 32,768
// MiB. MI355X (288 GB, 256 CUs) CPX/NPS2: 294,912/8 = 36,864 MiB and 32
// CUs. MI250X: two GCDs, 2 GPUs of 65,536 MiB and 110 CUs. Gaudi3 and
// H100-80GB: the whole device.
func TestPartitions(t *testing.T) {
	for _, tc := range []struct {
		model, mode string
		want        Split
	}{
		{"MI300X", "", Split{1, 196608, 304}},
		{"MI300X", "SPX/NPS1", Split{1, 196608, 304}},
		{"MI300X", "DPX", Split{2, 98304, 152}},
		{"MI300X", "QPX/NPS4", Split{4, 49152, 76}},
		{"MI300X", "cpx_nps1", Split{8, 24576, 38}},
		{"MI300X", "CPX/NPS4", Split{8, 24576, 38}},
		{"MI325X", "CPX", Split{8, 32768, 38}},
		{"MI355X", "CPX/NPS2", Split{8, 36864, 32}},
		{"MI355X", "DPX/NPS2", Split{2, 147456, 128}},
		{"MI250X", "", Split{2, 65536, 110}},
		{"Gaudi3", "", Split{1, 131072, 64}},
		{"Gaudi2", "", Split{1, 98304, 24}},
		{"H100-80GB", "", Split{1, 81920, 0}},
		{"Ascend910B", "", Split{1, 0, 0}},
	} {
		p, err := ParsePartition(tc.mode)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.model, tc.mode, err)
		}
		got, err := Partitions(tc.model, p)
		if err != nil || got != tc.want {
			t.Errorf("Partitions(%s, %q) = %+v, %v; want %+v", tc.model, tc.mode, got, err, tc.want)
		}
	}
}

// TestPartitionsRefused: modes the driver refuses (SPX and DPX have fewer
// GPUs than NPS4 has domains; the MI300X has no NPS2, the MI355X no
// NPS4), and any mode on a model without AMD's partitioning.
func TestPartitionsRefused(t *testing.T) {
	for _, tc := range []struct{ model, mode, want string }{
		{"MI300X", "SPX/NPS4", "model MI300X has no partition mode SPX/NPS4"},
		{"MI300X", "DPX/NPS4", "model MI300X has no partition mode DPX/NPS4"},
		{"MI300X", "CPX/NPS2", "model MI300X has no partition mode CPX/NPS2"},
		{"MI355X", "CPX/NPS4", "model MI355X has no partition mode CPX/NPS4"},
		{"H100-80GB", "CPX", "model H100-80GB has no compute or memory partitioning"},
		{"Gaudi3", "SPX", "model Gaudi3 has no compute or memory partitioning"},
		{"MI250X", "DPX", "model MI250X has no compute or memory partitioning"},
	} {
		p, err := ParsePartition(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Partitions(tc.model, p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Partitions(%s, %s) = %v, want %q", tc.model, tc.mode, err, tc.want)
		}
	}
}

func TestParsePartition(t *testing.T) {
	for in, want := range map[string]Partition{
		"":          {},
		"CPX/NPS1":  {"CPX", "NPS1"},
		"cpx_nps4":  {"CPX", "NPS4"},
		"QPX":       {"QPX", ""},
		"NPS4 CPX":  {"CPX", "NPS4"},
		"dpx/nps2":  {"DPX", "NPS2"},
		"SPX/NPS1 ": {"SPX", "NPS1"},
	} {
		if got, err := ParsePartition(in); err != nil || got != want {
			t.Errorf("ParsePartition(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"XPX", "CPX/CPX", "CPX/NPS1/NPS4", "NPS8"} {
		if _, err := ParsePartition(in); err == nil {
			t.Errorf("ParsePartition(%q): no error", in)
		}
	}
	// AMD's node labeller: amd.com/gpu.compute-memory-partition=cpx_nps1.
	if got := (Partition{"CPX", ""}).Label(); got != "cpx_nps1" {
		t.Errorf("Label = %q, want cpx_nps1", got)
	}
	if got := (Partition{"", "NPS4"}).String(); got != "SPX/NPS4" {
		t.Errorf("String = %q, want SPX/NPS4", got)
	}
}

// TestVendors: the new models' vendors and schemes, and the names read.
func TestVendors(t *testing.T) {
	for name, want := range map[string]Vendor{"MI300X": AMD, "mi355x": AMD, "MI250X": AMD, "Gaudi2": Intel, "Gaudi3": Intel, "H100-80GB": NVIDIA, "T4": NVIDIA, "Ascend910B": NVIDIA} {
		if got := VendorOf(name); got != want {
			t.Errorf("VendorOf(%s) = %s, want %s", name, got, want)
		}
	}
	for name, want := range map[string]Scheme{"MI300X": SchemeAMD, "A100-80GB": SchemeMIG, "T4": SchemeWhole, "Gaudi3": SchemeWhole} {
		if m, _ := Lookup(name); m.Scheme() != want {
			t.Errorf("%s: scheme %s, want %s", name, m.Scheme(), want)
		}
	}
	for in, want := range map[string]Vendor{"AMD": AMD, "nvidia": NVIDIA, "Intel": Intel, "habana": Intel} {
		if got, err := ParseVendor(in); err != nil || got != want {
			t.Errorf("ParseVendor(%q) = %s, %v", in, got, err)
		}
	}
	if _, err := ParseVendor("huawei"); err == nil || !strings.Contains(err.Error(), "nvidia, amd, intel") {
		t.Errorf("ParseVendor(huawei) = %v", err)
	}
	// The amdgpu driver's product names, as AMD's node labeller writes
	// them ("AMD Instinct MI300X" with '_' for ' '), and Intel's OAM.
	c := Default()
	for product, want := range map[string]string{"AMD Instinct MI300X": "MI300X", "AMD_Instinct_MI325X": "MI325X", "HL-325": "Gaudi3", "Intel Gaudi 2": "Gaudi2"} {
		if m, ok := c.FromProductName(product); !ok || m.Name != want {
			t.Errorf("FromProductName(%q) = %q, want %q", product, m.Name, want)
		}
	}
}
