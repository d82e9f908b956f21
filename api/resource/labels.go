// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

// Node labels, as NVIDIA's gpu-feature-discovery names them, written by the
// node agent (internal/node/labels) and read by gpuplane-scheduler, the
// simulator's snapshot reader, the admission policy and the quota plan.
// Labels that only the node agent writes and no one reads stay in
// internal/node/labels.
const (
	// LabelGPUProduct is the GPU product, e.g. "NVIDIA-A100-SXM4-80GB"
	// (NVML's name with spaces as dashes), or a catalog name.
	LabelGPUProduct = "nvidia.com/gpu.product"
	// LabelGPUCount is the node's GPU count, MIG-enabled GPUs included.
	LabelGPUCount = "nvidia.com/gpu.count"
	// LabelGPUPresent ("true") marks a node with GPUs.
	LabelGPUPresent = "nvidia.com/gpu.present"
	// LabelGPUMemory is one GPU's memory, in MiB.
	LabelGPUMemory = "nvidia.com/gpu.memory"
	// LabelGPUReplicas is the time-slicing replicas of each GPU (1 for
	// none, 0 when the node has no GPUs).
	LabelGPUReplicas = "nvidia.com/gpu.replicas"
	// LabelGPUClique is the NVLink clique (multi-node NVLink domain) of the
	// node's GPUs: nodes with the same value are joined by NVLink.
	LabelGPUClique = "nvidia.com/gpu.clique"
	// LabelMIGConfig is the MIG layout NVIDIA's MIG manager applies, e.g.
	// "all-1g.10gb".
	LabelMIGConfig = "nvidia.com/mig.config"
	// LabelGPUModel is gpuplane's catalog model of the node's GPUs, e.g.
	// "A100-80GB" (internal/gpu), a gpuplane extension.
	LabelGPUModel = "gpuplane.io/gpu.model"
	// LabelKubeletAPI (device-plugin or dra) is set by administrators to
	// pick the kubelet API of a node under the chart's nodeAgent.perNode;
	// the node agent never writes it.
	LabelKubeletAPI = "gpuplane.io/kubelet-api"
)

// Pod labels that the admission policy reads and sets by default.
const (
	// LabelTeam is the default label naming a pod's team.
	LabelTeam = "gpuplane.io/team"
	// LabelTraining ("true") is the default label marking a training pod.
	LabelTraining = "gpuplane.io/training"
)

// Labels of NVIDIA's gpu-feature-discovery that say how the device plugin
// serves a node's GPUs (github.com/NVIDIA/k8s-device-plugin,
// internal/lm/resource.go baseLabeler and internal/lm/mig-strategy.go);
// internal/gpu.ReadDevicePluginSetup reads them.
const (
	// LabelGPUSharingStrategy is "none", "time-slicing" or "mps".
	LabelGPUSharingStrategy = "nvidia.com/gpu.sharing-strategy"
	// LabelMIGStrategy is the device plugin's MIG strategy: "none",
	// "single" or "mixed".
	LabelMIGStrategy = "nvidia.com/mig.strategy"
	// LabelMIGCapable ("true") marks a node whose GPUs can enable MIG.
	LabelMIGCapable = "nvidia.com/mig.capable"
)
