// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

// Pod annotations. The scheduler's choice of GPUs for a pod is written on
// the pod by gpuplane-scheduler in PreBind (before the pod is bound), read
// back when the scheduler rebuilds per-GPU state from bound pods (after a
// restart too) and by the node agent's Allocate, which gives the container
// exactly these GPUs (docs/node-agent.md, "With gpuplane-scheduler"); the
// simulator's snapshot reader reads it too.
const (
	// AnnotationGPUs lists the chosen GPU indices of the node, e.g. "0,3":
	// the node agent's GPU index (NVML index order).
	AnnotationGPUs = "gpuplane.io/gpus"
	// AnnotationGPUUUIDs lists the chosen GPUs' UUIDs in the same order,
	// when the node publishes them (AnnotationNodeGPUUUIDs).
	AnnotationGPUUUIDs = "gpuplane.io/gpu-uuids"
	// AnnotationGPUShare is the milli-GPU the pod holds on each chosen GPU:
	// "1000" for whole GPUs, 1..999 for a share of one GPU.
	AnnotationGPUShare = "gpuplane.io/gpu-share"
	// AnnotationAllocated ("true") marks a pod whose choice the node agent
	// has given to a container, so that the next Allocate takes the next
	// pod.
	AnnotationAllocated = "gpuplane.io/allocated"
	// AnnotationGPUModel restricts the GPU models a pod may use: catalog
	// names joined by '|', e.g. "A100-80GB|H100-80GB" (the openb trace's
	// gpu_spec). An annotation, since it is a choice among several label
	// values that a nodeSelector cannot express.
	AnnotationGPUModel = "gpuplane.io/gpu-model"
)

// Node annotations.
const (
	// AnnotationNodeGPUUUIDs on a Node lists its GPUs' UUIDs in index
	// order, comma-separated; written by the node agent with --label-node.
	// The same key as the pod's AnnotationGPUUUIDs.
	AnnotationNodeGPUUUIDs = AnnotationGPUUUIDs
	// AnnotationNodeUnhealthyGPUs on a Node lists the indices of its
	// unhealthy GPUs (the node agent's health policy), comma-separated,
	// e.g. "3"; absent when every GPU is healthy. Written by the node agent
	// with --label-node on each change; gpuplane-scheduler never chooses
	// them.
	AnnotationNodeUnhealthyGPUs = "gpuplane.io/unhealthy-gpus"
)

// AnnotationNodeUnplacedPods on a Node lists the GPUs held by the pods
// whose GPUs gpuplane-scheduler did not choose, as the kubelet really gave
// them: pods created with spec.nodeName, DaemonSet pods, pods of another
// scheduler, static pods, pods from before gpuplane, and pods whose
// AnnotationGPUs does not name exactly the GPUs they hold. Its value is
// the JSON of UnplacedPods, e.g.
//
//	{"default/bypass":{"5":1000,"6":1000},"ml/share":{"2":250}}
//
// "{}" when there is none. Written by the node agent with --label-node
// and --scheduler-choice from the kubelet's pod-resources List, refreshed
// every pod-resources interval; gpuplane-scheduler counts those pods on
// these GPUs, and while the annotation is present it treats the GPUs of a
// pod bound to the node that is in neither the annotation nor its own
// record as unknown: every GPU it cannot attribute is held.
const AnnotationNodeUnplacedPods = "gpuplane.io/unplaced-pods"

// UnplacedPods is the value of AnnotationNodeUnplacedPods: per pod
// ("namespace/name"), per GPU of the node (its index, in decimal), the
// milli-GPU the pod holds there: 1000 for a whole GPU (nvidia.com/gpu, a
// MIG device or time-slicing replica of it), 1..1000 for
// gpuplane.io/gpu-milli units.
type UnplacedPods map[string]map[string]int64
