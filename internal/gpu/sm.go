// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "strings"

// multiprocessors maps substrings of NVML product names (nvmlDeviceGetName)
// to the board's streaming multiprocessor (SM) count, as NVIDIA publishes
// it or, for boards NVIDIA gives no count for, as CUDA reports it on one
// (sources below, each to be cited where a count is added). It is keyed by product name, not by catalog model, because one model
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
//	L4    58   NVIDIA Ada GPU Architecture whitepaper (v2.02), Appendix D, Table 5 (NVIDIA L4: 58 SMs,
//	           7,424 CUDA cores = 58 x 128 per Ada SM)
//
// NVIDIA publishes no datasheet or whitepaper SM count for the following
// boards; their counts are what CUDA reports on one (cudaDevAttrMultiProcessorCount,
// or OpenCL's compute units, one per SM), in the public record named:
//
//	A10G      80   the A10 variant of AWS's G5 instances: PyTorch get_device_properties on an "NVIDIA A10G"
//	               (multi_processor_count=80), meta-pytorch/torchcodec docs, "Accelerated
//	               video decoding on GPUs with CUDA and NVDEC" (basic_cuda_example)
//	H100 NVL 132   OpenCL coreCount 132 on "NVIDIA H100 NVL" (driver 570.86.15),
//	               fastfetch-cli/fastfetch issue 1658 (the H100 SXM5's count)
//	H20       78   PyTorch get_device_properties on an "NVIDIA H20" (97285 MiB,
//	               multi_processor_count=78), alipay/PainlessInferenceAcceleration
//	               flood/flood/ops/seg_attn.py; the 141 GB "H20 HBM3e" has no cited count
//	B200     148   CUDA device query on an "NVIDIA B200" ("Number of SMs: 148"),
//	               pytorch/ao pull request 4002 (two dies of 74 SMs)
//
// Not listed, so 0 (unknown): GB200, the H20 HBM3e, the H800 NVL and any
// board whose SM count is neither published by NVIDIA nor in a public
// CUDA report.
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
	{"L4 ", 58}, // "L4 " so that an L40 or L40S is not taken for it
	{"A10G", 80},
	{"H100 NVL", 132},
	{"H20 ", 78},     // "H20 " so that an H200 is not taken for it
	{"H20 HBM3E", 0}, // the 141 GB H20: no cited count (longest match wins)
	{" B200", 148},   // " B200" so that a GB200 is not taken for it
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
