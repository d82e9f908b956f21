// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"

	apidra "github.com/gpuplane/gpuplane/api/dra"
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
	whole := &structured.AllocatedState{AllocatedDevices: sets.New(id)}
	if got := deviceUse(whole, "n", g); got != 1000 {
		t.Errorf("allocated whole: %d", got)
	}
	if got := deviceUse(&structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID]()}, "n", g); got != 0 {
		t.Errorf("free: %d", got)
	}
}
