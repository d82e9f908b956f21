// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	apidra "github.com/gpuplane/gpuplane/api/dra"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// twoMIGA100 is twoA100 with both GPUs in MIG mode.
var twoMIGA100 = strings.Replace(twoA100, "    numaNode: 1\n", "    numaNode: 1\n    migEnabled: true\n", 1)

// halfHalf is placement's TestRankMIG workload: half 2g.20gb, half
// 4g.40gb pods (MIG profiles 3 and 5 of gpu.MIGProfiles), every shape
// counted (popularity 1).
func halfHalf() *placement.TargetWorkload {
	pod := func(k int) cluster.Pod {
		return cluster.Pod{CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: cluster.MIGMilli(k), MIGProfile: int8(k + 1)}
	}
	return placement.NewTargetWorkload([]cluster.Pod{pod(3), pod(5)}, 1)
}

// The 2g.20gb placements of twoMIGA100 (A100-80GB: starts 0, 2, 4;
// NVML's profile ID 14) in three orders.
var (
	// The table's: GPU, then start.
	table2g = []string{"gpu-0-mig-2g20gb-14-0", "gpu-0-mig-2g20gb-14-2", "gpu-0-mig-2g20gb-14-4", "gpu-1-mig-2g20gb-14-0", "gpu-1-mig-2g20gb-14-2", "gpu-1-mig-2g20gb-14-4"}
	// Ranked against halfHalf on the empty node. A 2g at slot 4 leaves
	// slots 0-3 for a 4g: both shapes still fit every GPU, F = 0. A 2g
	// at slot 0 or 2 takes a slot of the 4g's only placement (0-3): its
	// GPU's 1000 − ⌊2/7 × 1000⌋ = 715 free milli-GPU are a fragment for
	// the 4g half, F = 0.5 × 715 = 357.5. Ties by GPU, then start.
	empty2g = []string{"gpu-0-mig-2g20gb-14-4", "gpu-1-mig-2g20gb-14-4", "gpu-0-mig-2g20gb-14-0", "gpu-0-mig-2g20gb-14-2", "gpu-1-mig-2g20gb-14-0", "gpu-1-mig-2g20gb-14-2"}
	// Ranked with a 4g.40gb at GPU 0's slot 0: placement's TestRankMIG
	// (GPU 1 at 4: 214.5; GPU 1 at 0 and 2: 572; GPU 0 at 4: 1,287),
	// then GPU 0's 0 and 2, which the 4g overlaps, in the table's order.
	held4g2g = []string{"gpu-1-mig-2g20gb-14-4", "gpu-1-mig-2g20gb-14-0", "gpu-1-mig-2g20gb-14-2", "gpu-0-mig-2g20gb-14-4", "gpu-0-mig-2g20gb-14-0", "gpu-0-mig-2g20gb-14-2"}
)

// names2g returns the names of the 2g.20gb devices of devs, in order.
func names2g(devs []resourceapi.Device) []string {
	var out []string
	for _, d := range devs {
		if strings.Contains(d.Name, "-2g20gb-") {
			out = append(out, d.Name)
		}
	}
	return out
}

// TestBuildRank: Options.Rank orders each profile's free placements by
// the core's ranking (the values above, by hand), the taken ones after
// them; without it, the table's order. A whole GPU keeps its place, and
// the devices are the same, reordered.
func TestBuildRank(t *testing.T) {
	_, n := mockNode(t, twoMIGA100)
	held := map[string][]PreparedMIG{n.GPUs[0].UUID: {{GIProfile: "4g.40gb", Start: 0}}}
	static := map[string][]device.MIGInstance{n.GPUs[0].UUID: {{MIGDevice: device.MIGDevice{UUID: "MIG-s", Profile: "4g.40gb", GPUInstanceID: 1}, GIProfile: "4g.40gb", Placement: device.MIGPlacement{Start: 0, Size: 4}}}}
	table, err := Build(n, Options{MIG: true, Held: held})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"table", Options{MIG: true, Held: held}, table2g},
		{"ranked, empty", Options{MIG: true, Rank: halfHalf()}, empty2g},
		{"ranked, 4g at GPU 0's 0", Options{MIG: true, Rank: halfHalf(), Held: held}, held4g2g},
		// Made outside DRA, the 4g is published as it is and the 2g
		// placements it overlaps are not.
		{"ranked, the 4g made outside DRA", Options{MIG: true, Rank: halfHalf(), Static: static}, held4g2g[:4]},
	} {
		r, err := Build(n, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := names2g(r.Devices); !slices.Equal(got, tc.want) {
			t.Errorf("%s: 2g.20gb devices\n got %v\nwant %v", tc.name, got, tc.want)
		}
		if tc.o.Static == nil && !sameSet(r.Devices, table.Devices) {
			t.Errorf("%s: not the table's devices reordered", tc.name)
		}
	}
	// GPU 1 without MIG: its whole GPU stays last, after GPU 0's MIG
	// devices; GPU 0's 2g.20gb ranked alone (slot 4: 0; 0 and 2: 357.5).
	_, n = mockNode(t, twoA100)
	r, err := Build(n, Options{MIG: true, Rank: halfHalf()})
	if err != nil {
		t.Fatal(err)
	}
	if last := r.Devices[len(r.Devices)-1].Name; last != "gpu-1" {
		t.Errorf("last device %s, want gpu-1", last)
	}
	if got, want := names2g(r.Devices), []string{"gpu-0-mig-2g20gb-14-4", "gpu-0-mig-2g20gb-14-0", "gpu-0-mig-2g20gb-14-2"}; !slices.Equal(got, want) {
		t.Errorf("one MIG GPU: %v, want %v", got, want)
	}
}

// sameSet reports whether a and b have the same device names.
func sameSet(a, b []resourceapi.Device) bool {
	name := func(d resourceapi.Device) string { return d.Name }
	x, y := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		x[i] = name(a[i])
	}
	for i := range b {
		y[i] = name(b[i])
	}
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// waitOrder waits until the published 2g.20gb devices are want, in that
// order (one slice holds the node's devices).
func (k *kubelet) waitOrder(want []string) {
	k.t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := k.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got = nil
		for _, s := range list.Items {
			got = append(got, names2g(s.Spec.Devices)...)
		}
		return slices.Equal(got, want), nil
	})
	if err != nil {
		k.t.Fatalf("published 2g.20gb devices %v, want %v", got, want)
	}
}

// publishCount is how many times the plugin handed its devices to the
// ResourceSlice controller.
func (d *Driver) publishCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.publishes
}

// TestDriverRank: the plugin over two A100s of MIG on demand, ranking
// against halfHalf, publishes the empty node's order (empty2g); a
// prepared 4g.40gb at GPU 0's slot 0 republishes it ranked (held4g2g,
// read back from the API server), one publication (Driver.publish);
// preparing that claim again, a claim that fails (a 2g.20gb that the 4g
// overlaps) and unpreparing a claim never prepared change no order and
// publish nothing; unpreparing the 4g brings back the empty node's order,
// one publication. (The ResourceSlice writes per publication are the
// resourceslice controller's: one here, more when it retries a conflict;
// they are not counted.)
func TestDriverRank(t *testing.T) {
	b, _ := mockNode(t, twoMIGA100)
	k := newKubelet(t)
	k.dirs.Rank = halfHalf()
	d := k.start(b)
	k.waitOrder(empty2g)
	pubs := d.publishCount()
	step := func(what string, wantPubs int, want []string) {
		t.Helper()
		k.waitOrder(want)
		if got := d.publishCount() - pubs; got != wantPubs {
			t.Errorf("%s: %d publications in all, want %d", what, got, wantPubs)
		}
	}
	big := k.claim("big", "gpu-0-mig-4g40gb-5-0")
	if _, e := k.prepare(big); e != "" {
		t.Fatalf("prepare 4g.40gb: %s", e)
	}
	step("4g prepared", 1, held4g2g)
	if _, e := k.prepare(big); e != "" {
		t.Fatalf("prepare 4g.40gb again: %s", e)
	}
	if _, e := k.prepare(k.claim("over", "gpu-0-mig-2g20gb-14-2")); e == "" {
		t.Fatal("a 2g.20gb inside the 4g was prepared")
	}
	k.unprepare(k.claim("never", "gpu-1-mig-1g10gb-19-0"))
	step("nothing changed", 1, held4g2g)
	k.unprepare(big)
	step("4g unprepared", 2, empty2g)
}

// TestAllocatorTakesRanked: upstream's allocator
// (k8s.io/dynamic-resource-allocation/structured) over twoMIGA100's
// slices, GPU 0's 4g.40gb at slot 0 allocated, gives a 2g.20gb claim the
// first free placement published: GPU 0's slot 4 in the table's order,
// GPU 1's slot 4 ranked (held4g2g's first, the core's choice in
// placement's TestFGDMIGStranded).
func TestAllocatorTakesRanked(t *testing.T) {
	ctx := context.Background()
	_, n := mockNode(t, twoMIGA100)
	held := map[string][]PreparedMIG{n.GPUs[0].UUID: {{GIProfile: "4g.40gb", Start: 0}}}
	cls, err := kube.ChartClasses()
	if err != nil {
		t.Fatal(err)
	}
	k8sNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"kubernetes.io/hostname": node}}}
	features := structured.Features{PartitionableDevices: true, DeviceTaints: true, ConsumableCapacity: true}
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c", UID: "c"}}
	claim.Spec.Devices.Requests = []resourceapi.DeviceRequest{{Name: "r", Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: "mig.nvidia.com", Count: 1, AllocationMode: resourceapi.DeviceAllocationModeExactCount,
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "device.attributes['gpu.nvidia.com'].profile == '2g.20gb'"}}},
	}}}
	for _, tc := range []struct {
		o    Options
		want string
	}{{Options{MIG: true, Held: held}, "gpu-0-mig-2g20gb-14-4"}, {Options{MIG: true, Held: held, Rank: halfHalf()}, "gpu-1-mig-2g20gb-14-4"}} {
		r, err := Build(n, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		state := structured.AllocatedState{AllocatedDevices: sets.New(structured.MakeDeviceID(apidra.DriverName, node, "gpu-0-mig-4g40gb-5-0")), AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}
		a, err := structured.NewAllocator(ctx, features, state, cls, poolSlices(r), cel.NewCache(100, cel.Features{EnableConsumableCapacity: true}))
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Allocate(ctx, k8sNode, []*resourceapi.ResourceClaim{claim})
		if err != nil || len(res) != 1 {
			t.Fatalf("allocate: %v %v", res, err)
		}
		if got := res[0].Devices.Results[0].Device; got != tc.want {
			t.Errorf("rank %v: allocated %s, want %s", tc.o.Rank != nil, got, tc.want)
		}
	}
}
