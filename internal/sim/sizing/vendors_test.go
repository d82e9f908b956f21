// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package sizing

import (
	"math"
	"reflect"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// vendorTypes are an H100, an MI300X and a Gaudi3 server type.
var vendorTypes = []trace.NodeSpec{
	{Name: "h", Model: "H100-80GB", GPUs: 8, CPUMilli: 112000, MemoryMiB: 2 << 20, Vendor: gpu.NVIDIA},
	{Name: "m", Model: "MI300X", GPUs: 8, CPUMilli: 96000, MemoryMiB: 1850 << 10, Vendor: gpu.AMD},
	{Name: "g", Model: "Gaudi3", GPUs: 8, CPUMilli: 160000, MemoryMiB: 1792 << 10, Vendor: gpu.Intel},
}

// vendorGroups are 40 pods that accept nvidia only, 100 nvidia or amd and
// 260 any vendor.
var vendorGroups = []VendorGroup{
	{Accepts: cluster.VendorSetOf(gpu.NVIDIA), Vendors: "nvidia", Pods: 40},
	{Accepts: cluster.VendorSetOf(gpu.NVIDIA, gpu.AMD), Vendors: "nvidia|amd", Pods: 100},
	{Accepts: cluster.AllVendors, Vendors: "nvidia|amd|intel", Pods: 260},
}

// TestAcrossVendors: NVIDIA types, or AMD ones, beside a CPU-only type
// (no vendor's GPUs) for pods of any vendor compare none (the output
// stays as it was); types of two vendors, or pods that accept some
// vendors only, do.
func TestAcrossVendors(t *testing.T) {
	any := vendorGroups[2:]
	cpu := trace.NodeSpec{CPUMilli: 1000} // CPU-only: NVIDIA, the zero vendor
	if AcrossVendors(append(vendorTypes[:1:1], cpu), any) || AcrossVendors([]trace.NodeSpec{cpu, vendorTypes[1]}, any) {
		t.Errorf("H100 only, or MI300X only beside a CPU-only type, pods of any vendor: across vendors")
	}
	if !AcrossVendors(vendorTypes[:2], any) || !AcrossVendors(vendorTypes[:1], vendorGroups[:1]) {
		t.Errorf("H100 and MI300X, or pods of nvidia only: not across vendors")
	}
}

// TestCompareVendors: per answer, its pods placed, GPU-hours and USD, USD
// per served GPU-hour (13,456.48 / 1,224 = 10.994; 12,737.92 / 1,212.5 =
// 10.506; 11,775.36 / 920 = 12.799), and the pods its vendor cannot
// serve: an MI300X the 40 of nvidia (2.5 of them placed on the cluster
// as given), a Gaudi3 those 40 and the 100 of nvidia|amd (4 + 6 = 10
// placed); an MI300X answer that reaches 90% leaves 40 − 3 = 37 of them
// unplaced, and says so.
func TestCompareVendors(t *testing.T) {
	res := func(pol string, ty int, reached bool, added int, s Served) Result {
		s.Added = added
		return Result{Policy: pol, NodeType: TypeName(vendorTypes[ty]), Model: vendorTypes[ty].Model, Reached: reached, Answer: Step{Added: added}, Served: &s}
	}
	r := &Report{Mode: "fill", Target: "placed>=90%", Results: []Result{
		res("fgd", 0, true, 147, Served{Placed: 397.5, GPUHours: 1224, USD: 13456.48, ByGroup: []float64{40, 99.5, 258}}),
		res("fgd", 1, false, 256, Served{Placed: 362.5, GPUHours: 1212.5, USD: 12737.92, ByGroup: []float64{2.5, 100, 260}}),
		res("fgd", 2, false, 128, Served{Placed: 270, GPUHours: 920, USD: 11775.36, ByGroup: []float64{4, 6, 260}}),
		res("gpupacking", 1, true, 200, Served{Placed: 363, GPUHours: 1200, USD: 10000, ByGroup: []float64{3, 100, 260}}),
		{Policy: "random", NodeType: TypeName(vendorTypes[1])}, // no Served: left out
	}}
	vc := CompareVendors(r, vendorTypes, vendorGroups)
	type row struct {
		vendor  string
		added   int
		usdGPUh float64
		cannot  int
		placed  float64
	}
	want := []row{{"nvidia", 147, 10.994, 0, 0}, {"amd", 256, 10.506, 40, 2.5}, {"intel", 128, 12.799, 140, 10}, {"amd", 200, 8.333, 40, 3}}
	if len(vc.Candidates) != len(want) {
		t.Fatalf("%d candidates, want %d", len(vc.Candidates), len(want))
	}
	for i, w := range want {
		c := vc.Candidates[i]
		if c.Vendor != w.vendor || c.Added != w.added || math.Abs(c.USDPerServedGPUHour-w.usdGPUh) > 0.0005 || c.CannotServe != w.cannot || c.CannotServePlaced != w.placed {
			t.Errorf("candidate %d: %s +%d, %.3f USD per GPU-h, cannot serve %d (%v placed); want %+v", i, c.Vendor, c.Added, c.USDPerServedGPUHour, c.CannotServe, c.CannotServePlaced, w)
		}
	}
	wantNC := []string{
		"40 pods accept only nvidia: MI300X and Gaudi3 cannot serve them",
		"100 pods accept only nvidia or amd: Gaudi3 cannot serve them",
		"gpupacking, adding MI300X x8 (96 CPU, 1850 GiB), meets placed>=90% with 37 of the 40 pods it cannot serve left unplaced",
	}
	if !reflect.DeepEqual(vc.NotComparable, wantNC) {
		t.Errorf("not comparable:\n%q\nwant\n%q", vc.NotComparable, wantNC)
	}
	// The H100 answer alone (the others not searched: no pod fits them):
	// the cluster's MI300X and Gaudi3 types are still named.
	r.Results = r.Results[:1]
	if vc = CompareVendors(r, vendorTypes, vendorGroups); !reflect.DeepEqual(vc.NotComparable, wantNC[:2]) {
		t.Errorf("H100 answer alone: not comparable %q, want %q", vc.NotComparable, wantNC[:2])
	}
}

// TestBestServed: an MI300X search that did not reach its target is
// compared at the fewest nodes that place, within one pod, the most pods
// an MI300X can serve (those of nvidia|amd and of any vendor): 360 at +4
// and +8, 358.5 at +2 (more than a pod short), so +4; the 7 pods of nvidia
// only placed at +8 are the cluster's H100s', and do not count.
func TestBestServed(t *testing.T) {
	curve := []Step{{Added: 0, Nodes: 6}, {Added: 1, Nodes: 7}, {Added: 2, Nodes: 8}, {Added: 4, Nodes: 10}, {Added: 8, Nodes: 14}}
	served := map[int]Served{
		6:  {ByGroup: []float64{3, 20, 100}},
		7:  {ByGroup: []float64{2, 50, 200}},
		8:  {ByGroup: []float64{4, 99.5, 259}},
		10: {ByGroup: []float64{2.5, 100, 260}},
		14: {ByGroup: []float64{7, 100, 260}},
	}
	st, s, ok := BestServed(curve, served, vendorGroups, gpu.AMD)
	if !ok || st.Added != 4 || s.ByGroup[0] != 2.5 {
		t.Errorf("best step +%d (%v, %v), want +4", st.Added, s.ByGroup, ok)
	}
	if _, _, ok := BestServed(curve, nil, vendorGroups, gpu.AMD); ok {
		t.Errorf("no step served: found one")
	}
	if got := thousands(2073) + " " + thousands(999) + " " + thousands(1234567); got != "2,073 999 1,234,567" {
		t.Errorf("thousands: %q", got)
	}
}
