// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// twoA100 is an A100-80GB with MIG mode on and no MIG devices (GPU 0) and
// one without MIG (GPU 1, brand Tesla: the mock's default is Nvidia).
const twoA100 = `
name: two-a100
driverVersion: "535.104.05"
cudaDriverVersion: "12.2"
gpus:
  - productName: NVIDIA A100-SXM4-80GB
    migEnabled: true
    numaNode: 0
  - productName: NVIDIA A100-SXM4-80GB
    numaNode: 1
    brand: Tesla
`

func mockNode(t *testing.T, profile string) (*mock.Backend, device.Node) {
	t.Helper()
	p, err := mock.ParseProfile("test.yaml", []byte(profile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := mock.New(p, mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b, n
}

func fakeRoot(busID string) (string, error) { return "pci" + busID[:4] + ":00", nil }

func mi(n int64) resource.Quantity { return *resource.NewQuantity(n<<20, resource.BinarySI) }

func str(a resourceapi.DeviceAttribute) string {
	switch {
	case a.StringValue != nil:
		return *a.StringValue
	case a.VersionValue != nil:
		return "v" + *a.VersionValue
	case a.IntValue != nil:
		return fmt.Sprint(*a.IntValue)
	case a.BoolValue != nil:
		return fmt.Sprint(*a.BoolValue)
	}
	return "?"
}

func byName(r Resources) map[string]resourceapi.Device {
	out := map[string]resourceapi.Device{}
	for _, d := range r.Devices {
		out[d.Name] = d
	}
	return out
}

// TestBuildA100 checks the devices of an A100-80GB in MIG mode against the
// MIG user guide's A100 placement table, by hand, with no whole-GPU
// device for it (MIG mode stays on): 1g.10gb starts at slots
// 0..6 (7 placements), 1g.20gb at 0, 2, 4, 6, 2g.20gb at 0, 2, 4, 3g.40gb at
// 0 and 4, 4g.40gb and 7g.80gb at 0; profile IDs as nvidia-smi mig -lgip
// lists them (19, 20, 15, 14, 9, 5, 0).
func TestBuildA100(t *testing.T) {
	_, n := mockNode(t, twoA100)
	r, err := Build(n, Options{MIG: true, PCIeRoot: fakeRoot})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range r.Devices {
		names = append(names, d.Name)
	}
	var want []string
	for s := 0; s < 7; s++ {
		want = append(want, fmt.Sprintf("gpu-0-mig-1g10gb-19-%d", s))
	}
	for s := 0; s < 7; s++ {
		want = append(want, fmt.Sprintf("gpu-0-mig-1g10gb-me-20-%d", s))
	}
	want = append(want, "gpu-0-mig-1g20gb-15-0", "gpu-0-mig-1g20gb-15-2", "gpu-0-mig-1g20gb-15-4", "gpu-0-mig-1g20gb-15-6",
		"gpu-0-mig-2g20gb-14-0", "gpu-0-mig-2g20gb-14-2", "gpu-0-mig-2g20gb-14-4",
		"gpu-0-mig-3g40gb-9-0", "gpu-0-mig-3g40gb-9-4",
		"gpu-0-mig-4g40gb-5-0",
		"gpu-0-mig-7g80gb-0-0",
		"gpu-1")
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("devices:\n got %v\nwant %v", names, want)
	}
	count := map[string]int{}
	for _, e := range r.Entries {
		if e.MIG != nil {
			count[e.MIG.Profile]++
		}
	}
	if count["1g.10gb"] != 7 || count["3g.40gb"] != 2 || count["7g.80gb"] != 1 {
		t.Errorf("placements per profile: %v; want 7 of 1g.10gb, 2 of 3g.40gb, 1 of 7g.80gb", count)
	}

	// The counter set: 8 memory slots, 7 compute slices, the 7g.80gb's
	// memory (80384 MiB) and SMs (98).
	if len(r.Counters) != 1 || r.Counters[0].Name != "gpu-0-counter-set" {
		t.Fatalf("counter sets: %+v", r.Counters)
	}
	c := r.Counters[0].Counters
	wantC := map[string]resource.Quantity{"memory": mi(80384), "multiprocessors": resource.MustParse("98"), "compute-slices": resource.MustParse("7")}
	for i := 0; i < 8; i++ {
		wantC[fmt.Sprintf("memory-slice-%d", i)] = resource.MustParse("1")
	}
	checkCounters(t, "gpu-0-counter-set", c, wantC)

	devs := byName(r)
	for _, tc := range []struct {
		name   string
		mem    int64
		sm     string
		cs     string
		slices []int
	}{
		{"gpu-0-mig-1g10gb-19-3", 9856, "14", "1", []int{3}},
		{"gpu-0-mig-1g20gb-15-6", 19968, "14", "1", []int{6, 7}},
		{"gpu-0-mig-3g40gb-9-4", 40192, "42", "3", []int{4, 5, 6, 7}},
		{"gpu-0-mig-7g80gb-0-0", 80384, "98", "7", []int{0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		d := devs[tc.name]
		if len(d.ConsumesCounters) != 1 || d.ConsumesCounters[0].CounterSet != "gpu-0-counter-set" {
			t.Fatalf("%s: consumes %+v", tc.name, d.ConsumesCounters)
		}
		w := map[string]resource.Quantity{"memory": mi(tc.mem), "multiprocessors": resource.MustParse(tc.sm), "compute-slices": resource.MustParse(tc.cs)}
		for _, s := range tc.slices {
			w[fmt.Sprintf("memory-slice-%d", s)] = resource.MustParse("1")
		}
		checkCounters(t, tc.name, d.ConsumesCounters[0].Counters, w)
		if got := d.Capacity["memory"].Value; got.Cmp(mi(tc.mem)) != 0 {
			t.Errorf("%s: memory capacity %s, want %dMi", tc.name, got.String(), tc.mem)
		}
		if got := str(d.Attributes["type"]) + " " + str(d.Attributes["parentUUID"]); got != "mig "+n.GPUs[0].UUID {
			t.Errorf("%s: type and parentUUID %q", tc.name, got)
		}
		if _, ok := d.Attributes["uuid"]; ok {
			t.Errorf("%s: a MIG placement has no UUID before it is created", tc.name)
		}
	}
	if got := str(devs["gpu-0-mig-1g10gb-me-20-0"].Attributes["brand"]); got != "Nvidia" {
		t.Errorf("brand of GPU 0 (the mock's default) %q, want Nvidia", got)
	}
	if got := str(devs["gpu-0-mig-1g10gb-me-20-0"].Attributes["profile"]); got != "1g.10gb+me" {
		t.Errorf("1g.10gb+me profile attribute %q", got)
	}
	// The 7g.80gb consumes every counter: the GPU's full-size device.
	checkCounters(t, "gpu-0-mig-7g80gb-0-0", devs["gpu-0-mig-7g80gb-0-0"].ConsumesCounters[0].Counters, wantC)

	// Attributes of the GPU without MIG, by hand.
	g1 := devs["gpu-1"]
	wantA := map[string]string{
		"type": "gpu", "uuid": n.GPUs[1].UUID, "productName": "NVIDIA A100-SXM4-80GB", "brand": "Tesla",
		"architecture": "Ampere", "cudaComputeCapability": "v8.0.0", "driverVersion": "v535.104.5",
		"cudaDriverVersion": "v12.2.0", "resource.kubernetes.io/pciBusID": "0000:02:00.0",
		"resource.kubernetes.io/pcieRoot": "pci0000:00", "resource.kubernetes.io/numaNode": "1",
	}
	if len(g1.Attributes) != len(wantA) {
		t.Errorf("gpu-1: %d attributes, want %d", len(g1.Attributes), len(wantA))
	}
	for k, v := range wantA {
		if got := str(g1.Attributes[resourceapi.QualifiedName(k)]); got != v {
			t.Errorf("gpu-1 %s = %q, want %q", k, got, v)
		}
	}
	if g1.ConsumesCounters != nil || g1.AllowMultipleAllocations != nil {
		t.Errorf("gpu-1: counters %v, shared %v; want neither", g1.ConsumesCounters, g1.AllowMultipleAllocations)
	}
}

func checkCounters(t *testing.T, what string, got map[string]resourceapi.Counter, want map[string]resource.Quantity) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d counters, want %d: %v", what, len(got), len(want), got)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g.Value.Cmp(v) != 0 {
			t.Errorf("%s: counter %s = %v, want %s", what, k, g.Value.String(), v.String())
		}
	}
}

// fits reports whether devices can be allocated together under the
// counter set: no counter is consumed past its value.
func fits(set resourceapi.CounterSet, devs ...resourceapi.Device) bool {
	sum := map[string]int64{}
	for _, d := range devs {
		for _, c := range d.ConsumesCounters {
			for k, v := range c.Counters {
				sum[k] += v.Value.Value()
			}
		}
	}
	for k, v := range sum {
		limit := set.Counters[k].Value
		if v > limit.Value() {
			return false
		}
	}
	return true
}

// TestCountersExclusive checks, for every MIG model, that two MIG
// placements fit together exactly when their memory slots do not
// overlap and that every maximal layout of the MIG table fits.
func TestCountersExclusive(t *testing.T) {
	for _, product := range []string{"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"} {
		_, n := mockNode(t, fmt.Sprintf("name: x\ngpus:\n  - productName: %s\n    migEnabled: true\n", product))
		r, err := Build(n, Options{MIG: true})
		if err != nil {
			t.Fatal(err)
		}
		set := r.Counters[0]
		devs := byName(r)
		if _, ok := devs["gpu-0"]; ok {
			t.Errorf("%s: the whole GPU is published in MIG mode", product)
		}
		byPlacement := map[string]resourceapi.Device{}
		for a, ea := range r.Entries {
			if ea.MIG == nil {
				continue
			}
			byPlacement[fmt.Sprintf("%s@%d", ea.MIG.GIProfile, ea.MIG.Start)] = devs[a]
			for b, eb := range r.Entries {
				if eb.MIG == nil || a == b {
					continue
				}
				pa, pb := ea.MIG.MIGPlacement, eb.MIG.MIGPlacement
				overlap := pa.Start < pb.Start+pb.Size && pb.Start < pa.Start+pa.Size
				if got := fits(set, devs[a], devs[b]); got == overlap {
					t.Errorf("%s: %s and %s fit together: %v, overlap: %v", product, a, b, got, overlap)
				}
			}
		}
		model := n.GPUs[0].Model
		for _, l := range gpu.MIGLayouts(model) {
			names := l.Names(model)
			starts, err := gpu.PlaceMIG(model, names)
			if err != nil {
				t.Fatal(err)
			}
			var ds []resourceapi.Device
			for i, nm := range names {
				d, ok := byPlacement[fmt.Sprintf("%s@%d", nm, starts[i])]
				if !ok {
					t.Fatalf("%s: no device for %s at %d", product, nm, starts[i])
				}
				ds = append(ds, d)
			}
			if !fits(set, ds...) {
				t.Errorf("%s: layout %v does not fit the counters", product, names)
			}
		}
	}
}

func TestBuildShares(t *testing.T) {
	_, n := mockNode(t, twoA100)
	r, err := Build(n, Options{MIG: true, Shares: true})
	if err != nil {
		t.Fatal(err)
	}
	devs := byName(r)
	for name, e := range r.Entries {
		if e.GPU == 0 && (e.Shared || devs[name].AllowMultipleAllocations != nil) {
			t.Errorf("%s of the MIG-enabled GPU is shared", name)
		}
	}
	g := devs["gpu-1"]
	if g.AllowMultipleAllocations == nil || !*g.AllowMultipleAllocations || !r.Entries["gpu-1"].Shared {
		t.Fatal("gpu-1 is not shared")
	}
	m := g.Capacity["memory"]
	p := m.RequestPolicy
	if m.Value.Cmp(mi(81920)) != 0 || p == nil || p.Default.Cmp(mi(81920)) != 0 || p.ValidRange.Min.Cmp(mi(1)) != 0 ||
		p.ValidRange.Max.Cmp(mi(81920)) != 0 || p.ValidRange.Step.Cmp(mi(1)) != 0 {
		t.Errorf("memory capacity %+v", m)
	}
	c := g.Capacity["milliGPU"]
	p = c.RequestPolicy
	if c.Value.Value() != 1000 || p == nil || p.Default.Value() != 1 || p.ValidRange.Min.Value() != 1 || p.ValidRange.Max.Value() != 1000 || p.ValidRange.Step.Value() != 1 {
		t.Errorf("milliGPU capacity %+v", c)
	}
}

func TestBuildWithoutMIG(t *testing.T) {
	_, n := mockNode(t, twoA100)
	r, err := Build(n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Devices) != 1 || r.Devices[0].Name != "gpu-1" || len(r.Counters) != 0 {
		t.Errorf("without MIG creation: %d devices, %d counter sets; want gpu-1 only", len(r.Devices), len(r.Counters))
	}
}

// TestPool checks the split into slices: 8 MIG-enabled A100s have 200
// devices (25 placements each), in slices of at most 64 (they consume counters), and 8
// counter sets in a slice of their own.
func TestPool(t *testing.T) {
	_, n := mockNode(t, "name: x\ngpus:\n  - count: 8\n    productName: NVIDIA A100-SXM4-80GB\n    migEnabled: true\n")
	r, err := Build(n, Options{MIG: true})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Pool()
	var sizes []string
	for _, s := range p.Slices {
		sizes = append(sizes, fmt.Sprintf("%d/%d", len(s.Devices), len(s.SharedCounters)))
	}
	if got := strings.Join(sizes, " "); got != "0/8 64/0 64/0 64/0 8/0" {
		t.Errorf("slices (devices/counter sets): %s", got)
	}
}

func TestVersions(t *testing.T) {
	for in, want := range map[string]string{"550.54.15": "550.54.15", "535.104.05": "535.104.5", "560.28": "560.28.0"} {
		if got, err := semver(in); err != nil || got != want {
			t.Errorf("semver(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "550", "a.b", "1.2.3.4"} {
		if _, err := semver(bad); err == nil {
			t.Errorf("semver(%q) succeeded", bad)
		}
	}
	if got, ok := PCIBusID("00000000:A1:00.0"); !ok || got != "0000:a1:00.0" {
		t.Errorf("PCIBusID = %q, %v", got, ok)
	}
	for cc, want := range map[[2]int]string{{7, 0}: "Volta", {7, 5}: "Turing", {8, 0}: "Ampere", {8, 9}: "Ada Lovelace", {9, 0}: "Hopper", {10, 0}: "Blackwell"} {
		if got := Architecture(cc[0], cc[1]); got != want {
			t.Errorf("Architecture(%v) = %q, want %q", cc, got, want)
		}
	}
}

// TestBuildStatic: a MIG device made outside DRA (a 3g.40gb at slots
// 4..7, UUID MIG-s) is published as it is, under its placement's name
// gpu-0-mig-3g40gb-9-4, with its UUID and no counters (NVIDIA's static
// MIG device), and keeps the placements it overlaps out of the slices:
// left are 1g.10gb and 1g.10gb+me at 0..3, 1g.20gb and 2g.20gb at 0 and
// 2, 3g.40gb at 0 and the static one at 4, 4g.40gb at 0. A MIG device
// whose compute instance is smaller than its GPU instance (1c.3g.40gb)
// only keeps its placements out.
func TestBuildStatic(t *testing.T) {
	_, n := mockNode(t, twoA100)
	g0 := n.GPUs[0].UUID
	static := device.MIGInstance{MIGDevice: device.MIGDevice{UUID: "MIG-s", Profile: "3g.40gb", GPUInstanceID: 2}, GIProfile: "3g.40gb", Placement: device.MIGPlacement{Start: 4, Size: 4}}
	r, err := Build(n, Options{MIG: true, Static: map[string][]device.MIGInstance{g0: {static}}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range r.Devices {
		names = append(names, d.Name)
	}
	want := "gpu-0-mig-1g10gb-19-0 gpu-0-mig-1g10gb-19-1 gpu-0-mig-1g10gb-19-2 gpu-0-mig-1g10gb-19-3 " +
		"gpu-0-mig-1g10gb-me-20-0 gpu-0-mig-1g10gb-me-20-1 gpu-0-mig-1g10gb-me-20-2 gpu-0-mig-1g10gb-me-20-3 " +
		"gpu-0-mig-1g20gb-15-0 gpu-0-mig-1g20gb-15-2 gpu-0-mig-2g20gb-14-0 gpu-0-mig-2g20gb-14-2 " +
		"gpu-0-mig-3g40gb-9-0 gpu-0-mig-3g40gb-9-4 gpu-0-mig-4g40gb-5-0 gpu-1"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("devices:\n got %s\nwant %s", got, want)
	}
	d := byName(r)["gpu-0-mig-3g40gb-9-4"]
	got := str(d.Attributes["type"]) + " " + str(d.Attributes["uuid"]) + " " + str(d.Attributes["parentUUID"]) + " " + str(d.Attributes["profile"])
	memCap := d.Capacity["memory"].Value
	if got != "mig MIG-s "+g0+" 3g.40gb" || d.ConsumesCounters != nil || memCap.Cmp(mi(40192)) != 0 {
		t.Errorf("static device: attributes %q, counters %v, capacity %v", got, d.ConsumesCounters, d.Capacity)
	}
	if e := r.Entries["gpu-0-mig-3g40gb-9-4"]; e.MIG == nil || e.MIG.UUID != "MIG-s" || e.MIG.Start != 4 {
		t.Errorf("static entry %+v", e.MIG)
	}
	if len(r.Counters) != 1 {
		t.Errorf("%d counter sets, want 1", len(r.Counters))
	}
	static.Profile = "1c.3g.40gb"
	r, err = Build(n, Options{MIG: true, Static: map[string][]device.MIGInstance{g0: {static}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Entries["gpu-0-mig-3g40gb-9-4"]; ok || len(r.Devices) != 15 {
		t.Errorf("a 1c.3g.40gb: %d devices (want 15), gpu-0-mig-3g40gb-9-4 published: %v", len(r.Devices), ok)
	}
}

// OfferDiff names each difference between the A100-80GB MIG table and
// what a GPU offers, worked out by hand: no 1g.10gb+me at all (its 7
// starts), 3g.40gb at slot 0 only, 2g.20gb also at slot 6 (the table has
// 0, 2, 4), and a profile the table lacks. Build then publishes the 25
// placements less the 7 and the 1 (17).
func TestOfferDiff(t *testing.T) {
	off := device.MIGOffer{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: {0, 1, 2, 3, 4, 5, 6}, nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: {0, 2, 4, 6},
		nvml.GPU_INSTANCE_PROFILE_2_SLICE: {0, 2, 4, 6}, nvml.GPU_INSTANCE_PROFILE_3_SLICE: {0},
		nvml.GPU_INSTANCE_PROFILE_4_SLICE: {0}, nvml.GPU_INSTANCE_PROFILE_7_SLICE: {0}, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1: {0},
	}
	var want []string
	for s := range 7 {
		want = append(want, fmt.Sprintf("1g.10gb+me at memory slot %d: in the MIG table, not offered by the GPU", s))
	}
	want = append(want,
		"2g.20gb at memory slot 6: offered by the GPU, not in the MIG table",
		"3g.40gb at memory slot 4: in the MIG table, not offered by the GPU",
		fmt.Sprintf("GPU instance profile %d (NVML's constant): offered by the GPU, not in the MIG table", nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1))
	if got := OfferDiff("A100-80GB", off); !slices.Equal(got, want) {
		t.Errorf("OfferDiff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, n := mockNode(t, twoA100)
	res, err := Build(n, Options{MIG: true, Offers: map[string]device.MIGOffer{n.GPUs[0].UUID: off}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Devices); got != 17+1 {
		t.Errorf("%d devices, want GPU 0's 17 and gpu-1", got)
	}
	if got := OfferDiff("A100-80GB", device.MIGOffer{}); len(got) != 25 {
		t.Errorf("a GPU offering nothing: %d differences, want the table's 25 placements", len(got))
	}
}
