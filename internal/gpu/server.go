// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

// Server is a typical server of one GPU model: what a node of that model
// has when a short node spec ("T4 x 100") gives only the model and count.
type Server struct {
	// GPUs per node.
	GPUs int
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	// Source names where the shape comes from.
	Source string
}

const openbSource = "most frequent node of this model in the Alibaba openb node list (clusterdata cluster-trace-gpu-v2023, openb_node_list_gpu_node.csv)"

// servers are the typical servers. The openb models take the trace's most
// frequent node of the model; the NVIDIA data-centre models take the DGX
// system of that GPU from its data sheet (CPU cores, system memory in TB ×
// 1024 × 1024 MiB). L4 and L40S, inference GPUs sold in cloud instances
// more than in DGX systems, take the largest instance of the cloud whose
// price internal/cost/prices uses for them (vCPUs as Kubernetes counts
// CPUs, memory in GiB). AMD and Intel models take a cloud's or a
// supercomputer's node of 8 (MI250X: 4) devices, GPUs counting physical
// devices (Partitions makes them more).
var servers = map[string]Server{
	"P100":    {2, 16000, 120 * 1024, openbSource},
	"T4":      {2, 104000, 512 * 1024, openbSource},
	"V100M16": {4, 32000, 128 * 1024, openbSource},
	"V100M32": {8, 96000, 768 * 1024, openbSource},
	"A10":     {1, 128000, 1024 * 1024, openbSource},
	"G2":      {8, 96000, 384 * 1024, openbSource},
	"G3":      {8, 128000, 768 * 1024, openbSource},
	// DGX A100 320GB: 2 × AMD EPYC 7742 (128 cores), 1 TB.
	"A100-40GB": {8, 128000, 1024 * 1024, "NVIDIA DGX A100 data sheet (320GB system)"},
	// DGX A100 640GB: 2 × AMD EPYC 7742 (128 cores), 2 TB.
	"A100-80GB": {8, 128000, 2048 * 1024, "NVIDIA DGX A100 data sheet (640GB system)"},
	// DGX H100: 2 × Intel Xeon Platinum 8480C (112 cores), 2 TB.
	"H100-80GB": {8, 112000, 2048 * 1024, "NVIDIA DGX H100 data sheet"},
	// DGX H200: 2 × Intel Xeon Platinum 8480C (112 cores), 2 TB.
	"H200-141GB": {8, 112000, 2048 * 1024, "NVIDIA DGX H200 data sheet"},
	// DGX B200: 2 × Intel Xeon Platinum 8570 (112 cores), 2 TB (up to 4).
	"B200": {8, 112000, 2048 * 1024, "NVIDIA DGX B200 data sheet"},
	// Google Cloud g2-standard-96: 8 × L4, 96 vCPUs, 384 GB.
	"L4": {8, 96000, 384 * 1024, "Google Cloud Compute Engine g2-standard-96 (8x L4), cloud.google.com/compute/docs/gpus (L4 machine types)"},
	// AWS EC2 g6e.48xlarge: 8 × L40S, 192 vCPUs, 1,536 GiB.
	"L40S": {8, 192000, 1536 * 1024, "AWS EC2 g6e.48xlarge (8x L40S), aws.amazon.com/ec2/instance-types/g6e"},
	// Azure ND MI300X v5: 8 × MI300X, 96 vCPUs, 1,850 GiB
	// (learn.microsoft.com, ND MI300X v5 size series).
	"MI300X": {8, 96000, 1850 * 1024, "Azure ND MI300X v5 (8x MI300X), learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndmi300xv5-series"},
	// The MI325X fits the MI300X's 8-GPU platform (AMD's UBB); the MI355X
	// server: 8 GPUs, 2 × AMD EPYC 9575F (128 cores), 3 TB, as AMD's
	// MI355X platform brief shows it. Estimates.
	"MI325X": {8, 96000, 1850 * 1024, "estimate: the MI300X's server (Azure ND MI300X v5), the MI325X being a drop-in on AMD's 8-GPU platform"},
	"MI355X": {8, 128000, 3072 * 1024, "estimate: 8x MI355X, 2x AMD EPYC 9575F (128 cores), 3 TB, AMD Instinct MI355X platform"},
	// HPE Cray EX235a (Frontier's node): 4 × MI250X, 1 × AMD EPYC 7A53 (64
	// cores), 512 GB DDR4 (OLCF Frontier User Guide, "System Overview").
	"MI250X": {4, 64000, 512 * 1024, "HPE Cray EX235a node (4x MI250X), OLCF Frontier User Guide"},
	// IBM Cloud VPC gx3d-160x1792x8gaudi3: 8 × Gaudi 3, 160 vCPUs, 1,792
	// GiB (the profile's name). Gaudi 2: Intel's 8-OAM HLS-Gaudi2 server,
	// 2 × Xeon Platinum 8380 (80 cores), 1 TB, an estimate.
	"Gaudi3": {8, 160000, 1792 * 1024, "IBM Cloud VPC profile gx3d-160x1792x8gaudi3 (8x Gaudi 3)"},
	"Gaudi2": {8, 80000, 1024 * 1024, "estimate: Intel HLS-Gaudi2 server (8x Gaudi 2, 2x Xeon Platinum 8380, 1 TB)"},
}

// TypicalServer returns the typical server of a catalog model, and false
// for a model that has none (H100-NVL, H20, GH200, or a name not in the
// catalog).
func TypicalServer(model string) (Server, bool) {
	s, ok := servers[model]
	return s, ok
}
