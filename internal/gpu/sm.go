// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "strings"

// multiprocessors maps substrings of NVML product names (nvmlDeviceGetName)
// to the board's streaming multiprocessor (SM) count, as NVIDIA publishes
// it. It is keyed by product name, not by catalog model, because one model
// can span boards of different SM counts (H100-80GB: SXM5 132, PCIe 114).
// Sources:
//
//	P100  56   NVIDIA Tesla P100 whitepaper (GP100: "Tesla P100 ... 56 SMs")
//	V100  80   NVIDIA Tesla V100 GPU Architecture whitepaper ("80 SMs"; V100S the same GV100)
//	T4    40   NVIDIA Turing GPU Architecture whitepaper (Tesla T4: 40 SMs, 2,560 CUDA cores)
//	A10   72   NVIDIA A10 datasheet, 9,216 CUDA cores / 128 per GA10x SM (NVIDIA Ampere GA102 whitepaper)
//	A100 108   NVIDIA A100 Tensor Core GPU Architecture whitepaper ("108 SMs"; SXM4 and PCIe, 40 and 80 GB)
//	A30   56   NVIDIA A30 datasheet, 3,584 FP32 CUDA cores / 64 per GA100 SM (A100 whitepaper)
//	H100 SXM5 132, PCIe 114   NVIDIA H100 Tensor Core GPU Architecture whitepaper
//	H200 132   the GH100 of the H100 SXM5; measured by CUDA (cudaDevAttrMultiProcessorCount) on an H200, issue 35
//	GH200 132  NVIDIA Grace Hopper Superchip Architecture whitepaper ("H100 ... 132 SMs")
//	L40S 142   NVIDIA L40S datasheet, 18,176 CUDA cores / 128 per Ada SM, 142 RT cores (one per SM)
//
// Not listed, so 0 (unknown): A10G, L4, H100 NVL, H20, B200, GB200 and any
// board NVIDIA does not give an SM count for in a datasheet or whitepaper.
var multiprocessors = []struct {
	product string
	sms     int
}{
	{"P100", 56},
	{"V100", 80},
	{"T4 ", 40},
	{"A10 ", 72},
	{"A100", 108},
	{"A30 ", 56},
	{"H100 80GB HBM3", 132}, // NVML's name of the H100 SXM5
	{"H100 SXM", 132},
	{"H100 PCIE", 114},
	{"H200", 132},
	{"GH200", 132},
	{"L40S", 142},
}

// Multiprocessors returns the SM count of the board with NVML product name
// product ("NVIDIA H200", "Tesla T4"), or 0 when the table above lacks it.
// The longest matching entry wins, case-insensitively, with a space
// appended to the name so that "A10 " matches "NVIDIA A10" but not "A100"
// or "A10G". Discovery uses it where NVML's nvmlDeviceGetAttributes is
// NOT_SUPPORTED (a whole H200, issue 35).
func Multiprocessors(product string) int {
	p := strings.ToUpper(product) + " "
	best, bestLen := 0, 0
	for _, e := range multiprocessors {
		if len(e.product) > bestLen && strings.Contains(p, e.product) {
			best, bestLen = e.sms, len(e.product)
		}
	}
	return best
}
