// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "testing"

// TestMultiprocessors: NVML product names as drivers report them, and the
// SM counts NVIDIA publishes or CUDA reported on the board (sources in
// sm.go: the Ada whitepaper's L4 58; A10G 80, H100 NVL 132, H20 78 and
// B200 148 from public CUDA/OpenCL device queries): an H100 SXM5 132 and
// an H100 PCIe 114 though both are catalog model H100-80GB; "A10" is not
// an A100 nor an A10G, "L4" not an L40S, "H20" not an H200, "B200" not a
// GB200; boards without a cited count are 0.
func TestMultiprocessors(t *testing.T) {
	for product, want := range map[string]int{
		"NVIDIA H200":                   132,
		"NVIDIA H100 80GB HBM3":         132,
		"NVIDIA H100 PCIe":              114,
		"NVIDIA GH200 480GB":            132,
		"NVIDIA A100-SXM4-80GB":         108,
		"NVIDIA A100-PCIE-40GB":         108,
		"NVIDIA A30":                    56,
		"NVIDIA A10":                    72,
		"NVIDIA A10G":                   80,
		"NVIDIA L40S":                   142,
		"NVIDIA L4":                     58,
		"NVIDIA L40":                    0,
		"Tesla T4":                      40,
		"Tesla V100-SXM2-16GB":          80,
		"Tesla P100-PCIE-16GB":          56,
		"NVIDIA H100 NVL":               132,
		"NVIDIA H20":                    78,
		"NVIDIA H20 HBM3e":              0,
		"NVIDIA B200":                   148,
		"NVIDIA B200 180GB HBM3e":       148,
		"NVIDIA GB200":                  0,
		"NVIDIA RTX PRO 6000 Blackwell": 0,
	} {
		if got := Multiprocessors(product); got != want {
			t.Errorf("Multiprocessors(%q) = %d, want %d", product, got, want)
		}
	}
}
