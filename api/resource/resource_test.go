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

// TestSharedGPUMilliShares: NVIDIA's integer shares
// (sigs.k8s.io/dra-driver-nvidia-gpu, commit 95932046, --consumable-shares=N
// publishes "shares" of value N, default 1) as thousandths of the GPU,
// worked out by hand.
func TestSharedGPUMilliShares(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		milli, mem, gpuMem, shares, gpuShares, want int64
	}{
		{1, 0, 80 * gib, 1, 4, 250},          // 1 of 4 (demo integer-sharing.yaml): 1000/4
		{1, 0, 80 * gib, 4, 4, 1000},         // all 4
		{1, 0, 80 * gib, 1, 3, 334},          // 1000/3 = 333.3, rounded up
		{1, 0, 80 * gib, 2, 3, 667},          // 2000/3 = 666.7, rounded up
		{1, 40 * gib, 80 * gib, 1, 4, 500},   // memory's half beats a quarter
		{600, 0, 80 * gib, 1, 4, 600},        // milliGPU 600 beats a quarter
		{1, 0, 80 * gib, 9, 4, 1000},         // more than the GPU has: at most all
		{1, 0, 80 * gib, 0, 0, 1},            // unlimited mode: milliGPU's default alone, the smallest share
		{1, 0, 80 * gib, 1, 0, 1},            // shares unknown on the GPU: no shares part
		{1, 1 << 20, 80 * gib, 1, 1000, 1},   // 1 of 1000, 1Mi: 1
		{1, 0, 80 * gib, 1, 1 << 40, 1},      // 1 of 2^40: rounded up to 1
		{250, 20 * gib, 80 * gib, 0, 0, 250}, // as SharedGPUMilli
	} {
		if got := SharedGPUMilliShares(c.milli, c.mem, c.gpuMem, c.shares, c.gpuShares); got != c.want {
			t.Errorf("SharedGPUMilliShares(%d, %d, %d, %d, %d) = %d, want %d", c.milli, c.mem, c.gpuMem, c.shares, c.gpuShares, got, c.want)
		}
	}
}
