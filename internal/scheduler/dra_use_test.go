// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestDeviceUse: what allocated claims hold of a GPU, as the framework's
// AllocatedState gives it, by hand. On a shared A100-80GB (80Gi): claims
// consuming 300 milliGPU and 10Gi hold 300 (10/80 is 125); memory shares
// as NVIDIA's driver's claims ask them, 40Gi and milliGPU's default 1 each
// (2 for two), hold 500; a claim that asks neither consumes all the
// memory: 1000. A GPU allocated whole holds 1000; one nobody holds, 0.
func TestDeviceUse(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	g := draGPU{name: "gpu-1", shared: true, mem: 80 << 30}
	id := structured.MakeDeviceID(apidra.DriverName, "n", "gpu-1")
	for _, c := range []struct {
		name     string
		consumed structured.ConsumedCapacity
		want     int64
	}{
		{"compute share", structured.ConsumedCapacity{apidra.CapacityMilliGPU: q("300"), apidra.CapacityMemory: q("10Gi")}, 300},
		{"two memory shares", structured.ConsumedCapacity{apidra.CapacityMilliGPU: q("2"), apidra.CapacityMemory: q("40Gi")}, 500},
		{"neither asked", structured.ConsumedCapacity{apidra.CapacityMilliGPU: q("1"), apidra.CapacityMemory: q("80Gi")}, 1000},
	} {
		st := &structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](), AggregatedCapacity: structured.ConsumedCapacityCollection{id: c.consumed}}
		if got := deviceUse(st, "n", g); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// NVIDIA's integer shares (sigs.k8s.io/dra-driver-nvidia-gpu, commit
	// 95932046, --consumable-shares=4: "shares" 4, memory default 0): three
	// claims of integer-sharing.yaml's shape consume 3 shares, 0 memory and
	// 3 milliGPU: 3/4 of the GPU, 750; in the unlimited mode two such
	// claims consume 2 milliGPU and no memory: 2, a milli-GPU each.
	g4 := g
	g4.shares = 4
	for _, c := range []struct {
		name     string
		g        draGPU
		consumed structured.ConsumedCapacity
		want     int64
	}{
		{"three of 4 shares", g4, structured.ConsumedCapacity{apidra.CapacityMilliGPU: q("3"), apidra.CapacityMemory: q("0"), apidra.CapacityShares: q("3")}, 750},
		{"two unlimited", g, structured.ConsumedCapacity{apidra.CapacityMilliGPU: q("2"), apidra.CapacityMemory: q("0")}, 2},
	} {
		st := &structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](), AggregatedCapacity: structured.ConsumedCapacityCollection{id: c.consumed}}
		if got := deviceUse(st, "n", c.g); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	whole := &structured.AllocatedState{AllocatedDevices: sets.New(id)}
	if got := deviceUse(whole, "n", g); got != 1000 {
		t.Errorf("allocated whole: %d", got)
	}
	if got := deviceUse(&structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID]()}, "n", g); got != 0 {
		t.Errorf("free: %d", got)
	}
}

// TestWholeGPUShares: a GPU published in NVIDIA's integer mode (its
// "shares" capacity 4, memory 80Gi, gpuplane's milliGPU) reads as shared
// with 4 shares and 80Gi; in its unlimited mode (no shares), 0 shares.
func TestWholeGPUShares(t *testing.T) {
	caps := map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
		apidra.CapacityMemory:   {Value: resource.MustParse("80Gi")},
		apidra.CapacityMilliGPU: {Value: resource.MustParse("1k")},
	}
	shared, typ := true, apidra.TypeGPU
	d := &resourceapi.Device{Name: "gpu-0", AllowMultipleAllocations: &shared, Capacity: caps,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{apidra.AttrType: {StringValue: &typ}}}
	g, ok := wholeGPU(d)
	if !ok || !g.shared || g.shares != 0 || g.mem != 80<<30 {
		t.Errorf("unlimited: %+v %v", g, ok)
	}
	caps[apidra.CapacityShares] = resourceapi.DeviceCapacity{Value: resource.MustParse("4")}
	g, ok = wholeGPU(d)
	if !ok || !g.shared || g.shares != 4 || g.mem != 80<<30 {
		t.Errorf("4 shares: %+v %v", g, ok)
	}
}

// TestPlainShare: what a claim asking no capacity (NVIDIA's demo
// templates) holds of a GPU of 80Gi by the defaults its capacities
// publish, by hand: NVIDIA's memory mode (memory defaults to all): 1000;
// its unlimited mode as gpuplane publishes it (memory default 0,
// milliGPU default 1): 1; its integer mode 4 (shares default 1 of 4):
// 250, and 3: 1000/3 rounded up, 334. Then onNode: on a node giving such
// a claim 250, a plain claim asks 250 and fits a GPU 250 already holds
// (750 free) where a whole GPU does not; a claim asking capacity, or a
// node of the memory mode, keeps its ask.
func TestPlainShare(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	policy := func(value, def string) resourceapi.DeviceCapacity {
		return resourceapi.DeviceCapacity{Value: *q(value), RequestPolicy: &resourceapi.CapacityRequestPolicy{Default: q(def)}}
	}
	shared := true
	for _, c := range []struct {
		name         string
		memDefault   string
		shares, want int64
	}{
		{"memory", "80Gi", 0, 1000},
		{"unlimited", "0", 0, 1},
		{"4 shares", "0", 4, 250},
		{"3 shares", "0", 3, 334},
	} {
		d := &resourceapi.Device{Name: "gpu-0", AllowMultipleAllocations: &shared, Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			apidra.CapacityMemory: policy("80Gi", c.memDefault), apidra.CapacityMilliGPU: policy("1k", "1")}}
		if c.shares > 0 {
			d.Capacity[apidra.CapacityShares] = policy(fmt.Sprint(c.shares), "1")
		}
		if got := plainShare(d, 80<<30, c.shares); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}

	n, err := cluster.NewNode("n", "A100-80GB", 1000, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Add(&cluster.Pod{Name: "held", NumGPU: 1, GPUMilli: 250}, 1); err != nil {
		t.Fatal(err)
	}
	whole := cluster.Pod{Name: "p", NumGPU: 1, GPUMilli: 1000}
	ns := &nodeState{dra: true, shares: true, plain: 250, node: n}
	plain := &podState{pod: whole, claimGPUs: true, plain: true}
	got := plain.onNode(&plain.pod, ns)
	if got.GPUMilli != 250 {
		t.Errorf("plain claim on a 4-share node asks %d, want 250", got.GPUMilli)
	}
	if ok, _ := cluster.Fits(&ns.node, got); !ok {
		t.Error("a 250 share does not fit 750 free")
	}
	if ok, _ := cluster.Fits(&ns.node, &whole); ok {
		t.Error("a whole GPU fits 750 free")
	}
	asked := &podState{pod: whole, claimGPUs: true}
	if got := asked.onNode(&asked.pod, ns); got.GPUMilli != 1000 {
		t.Errorf("a claim asking capacity: %d, want 1000", got.GPUMilli)
	}
	if got := plain.onNode(&plain.pod, &nodeState{dra: true, shares: true, plain: 1000}); got.GPUMilli != 1000 {
		t.Errorf("memory mode: %d, want 1000", got.GPUMilli)
	}
}
