// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"sort"

	"github.com/gpuplane/gpuplane/internal/trace"
)

// Why a pod failed, in Result.Failed and the per-pod placements file.
const (
	// ReasonNoRoom: the pod fits some node of the empty cluster but none
	// had room for it when it arrived (fill) or before the run ended
	// (replay).
	ReasonNoRoom = "no_room"
	// ReasonTooLarge: the pod is larger than every node of the GPU models
	// it allows, even empty.
	ReasonTooLarge = "too_large"
	// ReasonNoModel: no node has a GPU model that the pod's gpu_spec
	// allows.
	ReasonNoModel = "no_model"
	// ReasonNoGPUNodes: the pod requests GPUs and no node has any.
	ReasonNoGPUNodes = "no_gpu_nodes"
	// ReasonNoResource: the pod asks for its GPUs in a way no node of
	// its GPU models serves, even empty (cluster.Node.ServesKind): a MIG
	// device and no MIG-enabled GPU, a ResourceClaim and no node whose
	// ResourceSlices publish devices of its class, nvidia.com/gpu and
	// only DRA nodes with no DeviceClass that maps it.
	ReasonNoResource = "no_resource"
	// ReasonDeleted: replay only; the pod was still waiting at its trace
	// deletion time and left the queue without starting.
	ReasonDeleted = "deleted_waiting"
)

// Failure classes (FailureClass): what would have to change for a failed
// pod to place.
const (
	// ClassCapacity: the pod fits an empty node but found no room (or
	// waited until deleted, or its gang did not fit together).
	ClassCapacity = "capacity"
	// ClassSize: the pod is larger than every node it may use, even
	// empty (GPUs, CPU or memory: the reason does not say which).
	ClassSize = "size"
	// ClassSelector: its GPU model constraints name no model of the
	// nodes, or its nodeName, nodeSelector or required node affinity no
	// node it fits (a snapshot's pod).
	ClassSelector = "selector"
	// ClassTaint: a snapshot's pod kept off every node it fits and
	// selects by a taint it does not tolerate or a cordon.
	ClassTaint = "taint"
	// ClassResourceKind: it asks for GPUs and no node has any, or asks
	// for them in a way no node serves (ReasonNoResource).
	ClassResourceKind = "resource kind"
	// ClassQuota: its team's quota never admitted it (--teams).
	ClassQuota = "quota"
)

// FailureClasses are the classes in the order reports show them.
var FailureClasses = []string{ClassCapacity, ClassSize, ClassSelector, ClassTaint, ClassResourceKind, ClassQuota}

// FailureClass returns the class of a failure reason; "" for an unknown
// one. Memory alone is no class: a pod too large in memory is too_large
// like one too large in GPUs.
func FailureClass(reason string) string {
	switch reason {
	case ReasonNoRoom, ReasonDeleted, ReasonGangUnfit, ReasonGangIncomplete:
		return ClassCapacity
	case ReasonTooLarge:
		return ClassSize
	case ReasonNoModel, ReasonSelector:
		return ClassSelector
	case ReasonTaint:
		return ClassTaint
	case ReasonNoGPUNodes, ReasonNoResource:
		return ClassResourceKind
	case ReasonNoQuota, ReasonQuotaWait:
		return ClassQuota
	}
	return ""
}

// FailedGroup counts the failed pods of one shape and one reason in a run.
type FailedGroup struct {
	Reason string `json:"reason"`
	// CPUMilli in millicores, MemoryMiB in MiB, GPUMilli in milli-GPU per
	// GPU; GPUSpec as the pod list writes it ("" means any model).
	CPUMilli  int64  `json:"cpu_milli"`
	MemoryMiB int64  `json:"memory_mib"`
	NumGPU    int    `json:"num_gpu"`
	GPUMilli  int64  `json:"gpu_milli"`
	GPUSpec   string `json:"gpu_spec,omitempty"`
	Pods      int    `json:"pods"`
}

// failures counts a run's failed pods by reason and shape.
type failures map[FailedGroup]int

// add counts one failed pod s for reason.
func (f failures) add(reason string, s *trace.PodSpec) {
	f[FailedGroup{Reason: reason, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, NumGPU: int(s.NumGPU), GPUMilli: int64(s.GPUMilli), GPUSpec: s.GPUSpec}]++
}

// groups returns the counts, most pods first, then by reason and shape.
func (f failures) groups() []FailedGroup {
	out := make([]FailedGroup, 0, len(f))
	for g, n := range f {
		g.Pods = n
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Pods != b.Pods:
			return a.Pods > b.Pods
		case a.Reason != b.Reason:
			return a.Reason < b.Reason
		case a.NumGPU != b.NumGPU:
			return a.NumGPU > b.NumGPU
		case a.GPUMilli != b.GPUMilli:
			return a.GPUMilli > b.GPUMilli
		case a.CPUMilli != b.CPUMilli:
			return a.CPUMilli > b.CPUMilli
		case a.MemoryMiB != b.MemoryMiB:
			return a.MemoryMiB > b.MemoryMiB
		}
		return a.GPUSpec < b.GPUSpec
	})
	if len(out) == 0 {
		return nil
	}
	return out
}
