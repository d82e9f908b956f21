// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestParseVendorSet: names joined by '|' or ',' (case and spaces aside,
// habana is Intel) are their bits, NVIDIA bit 0, AMD bit 1, Intel bit 2;
// String writes them back in that order.
func TestParseVendorSet(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want VendorSet
		str  string
		err  string
	}{
		{"", 0, "", ""},
		{"nvidia", 0b001, "nvidia", ""},
		{"amd|NVIDIA", 0b011, "nvidia|amd", ""},
		{" intel , amd ", 0b110, "amd|intel", ""},
		{"habana", 0b100, "intel", ""},
		{"nvidia|amd|intel", AllVendors, "nvidia|amd|intel", ""},
		{"nvidia||amd", 0, "", `vendors "nvidia||amd": an empty name between separators`},
		{"cuda", 0, "", `vendor "cuda": want one of nvidia, amd, intel`},
	} {
		got, err := ParseVendorSet(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseVendorSet(%q): err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseVendorSet(%q) = %03b %q, %v; want %03b %q", tc.in, got, got, err, tc.want, tc.str)
		}
	}
}

// TestAcceptedVendors: a trace's pod that says nvidia fits only the H100
// node, by the core's one rule (Fits, Feasible, Node.Serves), and says
// why on the others; nvidia|amd the H100 and MI300X nodes; no vendors
// every node (as before vendors existed). A pod of amd.com/gpu that says
// amd|intel accepts AMD only; one that says nvidia is refused (its
// resource is AMD's). A pod without GPUs is not bound by its vendors.
func TestAcceptedVendors(t *testing.T) {
	cpx, _ := gpu.ParsePartition("CPX/NPS1")
	mk := map[string]func() (Node, error){
		"h100":   func() (Node, error) { return NewNode("h100", "H100-80GB", 112000, 2<<20, 8) },
		"mi300x": func() (Node, error) { return NewPartitionedNode("mi300x", "MI300X", cpx, 96000, 1850<<10, 8) },
		"gaudi3": func() (Node, error) { return NewNode("gaudi3", "Gaudi3", 160000, 1792<<10, 8) },
	}
	nodes := map[string]*Node{}
	for name, f := range mk {
		n, err := f()
		if err != nil {
			t.Fatal(err)
		}
		nodes[name] = &n
	}
	pod := func(vendors string, k ResourceKind, gpus int, milli int64) Pod {
		s, err := ParseVendorSet(vendors)
		if err != nil {
			t.Fatal(err)
		}
		return Pod{Name: "p", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: milli, Resource: k, Vendors: s}
	}
	for _, tc := range []struct {
		pod      Pod
		accepted VendorSet
		fits     string // the nodes it fits, in h100, mi300x, gaudi3 order
	}{
		{pod("nvidia", ResourceAny, 1, 500), 0b001, "h100"},
		{pod("nvidia|amd", ResourceAny, 2, 1000), 0b011, "h100 mi300x"},
		{pod("", ResourceAny, 1, 500), 0b111, "h100 mi300x gaudi3"},
		{pod("intel", ResourceAny, 8, 1000), 0b100, "gaudi3"},
		{pod("amd|intel", ResourceAMD, 1, 1000), 0b010, "mi300x"},
		{pod("amd", ResourceAny, 0, 0), 0b010, "h100 mi300x gaudi3"},
	} {
		if err := tc.pod.Validate(); err != nil {
			t.Errorf("%s pod of %s: %v", tc.pod.Vendors, tc.pod.Resource.Name(), err)
		}
		if got := tc.pod.AcceptedVendors(); got != tc.accepted {
			t.Errorf("%s pod of %s: accepts %03b, want %03b", tc.pod.Vendors, tc.pod.Resource.Name(), got, tc.accepted)
		}
		var fits []string
		for _, name := range []string{"h100", "mi300x", "gaudi3"} {
			ok, _ := Fits(nodes[name], &tc.pod)
			if ok != Feasible(nodes[name], &tc.pod) {
				t.Errorf("%s pod on %s: Fits %v, Feasible not", tc.pod.Vendors, name, ok)
			}
			if ok {
				fits = append(fits, name)
			}
		}
		if got := strings.Join(fits, " "); got != tc.fits {
			t.Errorf("%s pod of %d x %d milli: fits %q, want %q", tc.pod.Vendors, tc.pod.NumGPU, tc.pod.GPUMilli, got, tc.fits)
		}
	}
	p := pod("nvidia", ResourceAny, 1, 500)
	if _, why := Fits(nodes["mi300x"], &p); why != "GPU vendor amd not accepted (pod accepts nvidia)" {
		t.Errorf("nvidia pod on an MI300X node: %q", why)
	}
	if nodes["gaudi3"].ServesKind(&p) || !nodes["h100"].ServesKind(&p) {
		t.Errorf("ServesKind of an nvidia pod: Gaudi3 %v, H100 %v; want false, true", nodes["gaudi3"].ServesKind(&p), nodes["h100"].ServesKind(&p))
	}
	bad := pod("nvidia", ResourceAMD, 1, 1000)
	if err := bad.Validate(); err == nil || err.Error() != "vendors nvidia with amd.com/gpu: its resource is amd's" {
		t.Errorf("nvidia pod of amd.com/gpu: %v", err)
	}
	if bad := (Pod{NumGPU: 1, GPUMilli: 1000, Vendors: 0b1000}); bad.Validate() == nil {
		t.Errorf("vendor bit 3: no error")
	}
}
