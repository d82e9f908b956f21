// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "testing"

func TestTypicalServer(t *testing.T) {
	// T4: 387 of the 404 T4 nodes of openb_node_list_gpu_node.csv have
	// 104,000 m CPU, 524,288 MiB (512 GiB) and 2 GPUs.
	s, ok := TypicalServer("T4")
	if !ok || s.GPUs != 2 || s.CPUMilli != 104000 || s.MemoryMiB != 524288 {
		t.Errorf("T4 = %+v, %v", s, ok)
	}
	// DGX H100: 8 GPUs, 112 cores, 2 TB = 2,097,152 MiB.
	s, ok = TypicalServer("H100-80GB")
	if !ok || s.GPUs != 8 || s.CPUMilli != 112000 || s.MemoryMiB != 2097152 {
		t.Errorf("H100-80GB = %+v, %v", s, ok)
	}
	// L4: Google Cloud g2-standard-96, 8 GPUs, 96 vCPUs, 384 GB =
	// 393,216 MiB. L40S: AWS g6e.48xlarge, 8 GPUs, 192 vCPUs, 1,536 GiB =
	// 1,572,864 MiB.
	s, ok = TypicalServer("L4")
	if !ok || s.GPUs != 8 || s.CPUMilli != 96000 || s.MemoryMiB != 393216 {
		t.Errorf("L4 = %+v, %v", s, ok)
	}
	// Azure ND MI300X v5: 8 GPUs, 96 vCPUs, 1,850 GiB = 1,894,400 MiB.
	if s, ok := TypicalServer("MI300X"); !ok || s.GPUs != 8 || s.CPUMilli != 96000 || s.MemoryMiB != 1894400 {
		t.Errorf("MI300X = %+v, %v", s, ok)
	}
	s, ok = TypicalServer("L40S")
	if !ok || s.GPUs != 8 || s.CPUMilli != 192000 || s.MemoryMiB != 1572864 {
		t.Errorf("L40S = %+v, %v", s, ok)
	}
	if _, ok := TypicalServer("H20"); ok {
		t.Error("H20 has a typical server")
	}
	c := Default()
	for name := range servers {
		if _, ok := c.Get(name); !ok {
			t.Errorf("typical server for %s, which is not in the catalog", name)
		}
	}
}
