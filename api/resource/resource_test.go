// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import "testing"

func TestIsGPU(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu":                true,
		"nvidia.com/gpu.shared":         true, // renameByDefault
		"nvidia.com/mig-1g.10gb":        true,
		"nvidia.com/mig-1g.10gb.shared": true,
		"gpuplane.io/gpu-milli":         true,
		"rdma/hca_shared_devices_a":     false, // another device plugin (an RDMA NIC)
		"nvidia.com/mig-":               false,
		"nvidia.com/gpus":               false,
		"example.com/gpu":               false,
		"":                              false,
	} {
		if got := IsGPU(name); got != want {
			t.Errorf("IsGPU(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSharedGPUMilli(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		milli, mem, gpuMem, want int64
	}{
		{500, 20 * gib, 80 * gib, 500},  // both asked: the milliGPU, the larger
		{1, 40 * gib, 80 * gib, 500},    // memory only (milliGPU's default 1): half the memory
		{1, 80 * gib, 80 * gib, 1000},   // neither asked: all the memory
		{100, 80 * gib, 80 * gib, 1000}, // milliGPU only: memory's default, all
		{1, 1 << 20, 80 * gib, 1},       // 1Mi of 80Gi: 0.0122 thousandths, rounded up to 1
		{1, 10 * gib, 24 * gib, 417},    // 10/24 = 0.41667: 416.67 rounded up
		{700, 0, 80 * gib, 700},         // no memory consumed
		{700, 90 * gib, 80 * gib, 1000}, // more than the GPU: at most 1000
		{300, 40 * gib, 0, 300},         // GPU memory unknown: milliGPU alone
		{1, 1 << 62, 1 << 62, 1000},     // no overflow: all of a huge GPU
		{1, 1 << 61, 1 << 62, 500},      // half of it
	} {
		if got := SharedGPUMilli(c.milli, c.mem, c.gpuMem); got != c.want {
			t.Errorf("SharedGPUMilli(%d, %d, %d) = %d, want %d", c.milli, c.mem, c.gpuMem, got, c.want)
		}
	}
}
