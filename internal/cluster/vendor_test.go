// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// TestNewPartitionedNode: a node of 8 MI300X is 8 GPUs in SPX, 16 in DPX,
// 32 in QPX and 64 in CPX (8 per device, AMD's CPX: one GPU per XCD); 8
// Gaudi3 are 8; 8 H100-80GB 8 and no AMD mode; 9 MI300X in CPX would be
// 72 GPUs, more than a node's 64.
func TestNewPartitionedNode(t *testing.T) {
	for _, tc := range []struct {
		model, mode string
		devices     int
		gpus        int
		vendor      gpu.Vendor
		err         string
	}{
		{"MI300X", "", 8, 8, gpu.AMD, ""},
		{"MI300X", "DPX", 8, 16, gpu.AMD, ""},
		{"MI300X", "QPX/NPS4", 8, 32, gpu.AMD, ""},
		{"MI300X", "CPX/NPS1", 8, 64, gpu.AMD, ""},
		{"MI250X", "", 4, 8, gpu.AMD, ""},
		{"Gaudi3", "", 8, 8, gpu.Intel, ""},
		{"H100-80GB", "", 8, 8, gpu.NVIDIA, ""},
		{"MI300X", "CPX", 9, 0, 0, "node n: 9 devices of 8 GPUs each (MI300X CPX/NPS1) are more than 64 GPUs"},
		{"H100-80GB", "CPX", 8, 0, 0, "node n: model H100-80GB has no compute or memory partitioning"},
	} {
		p, err := gpu.ParsePartition(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		n, err := NewPartitionedNode("n", tc.model, p, 1000, 1024, tc.devices)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s x %d %s: err %v, want %q", tc.model, tc.devices, tc.mode, err, tc.err)
			}
			continue
		}
		if err != nil || n.GPUs() != tc.gpus || n.Vendor != tc.vendor || n.Partition != p || n.GPUFreeTotal() != int64(tc.gpus)*MilliGPU {
			t.Errorf("%s x %d %s: %d GPUs of %s, partition %q, %v; want %d of %s", tc.model, tc.devices, tc.mode, n.GPUs(), n.Vendor, n.Partition, err, tc.gpus, tc.vendor)
		}
	}
}
