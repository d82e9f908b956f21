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
// CPUs, memory in GiB).
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
}

// TypicalServer returns the typical server of a catalog model, and false
// for a model that has none (H100-NVL, H20, GH200, or a name not in the
// catalog).
func TypicalServer(model string) (Server, bool) {
	s, ok := servers[model]
	return s, ok
}
