// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package device

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/api/resource"
)

// ID is a kubelet device ID, as the device plugin advertises it and the
// kubelet's pod-resources API reports it back: a GPU UUID ("GPU-..."), a MIG
// device UUID ("MIG-..."), "<uuid>::<n>" for time-slicing replica n of
// either, or "<uuid>::m<k>" for milli-GPU unit k (0..999) of a GPU, a
// device of gpuplane.io/gpu-milli. The replica format is NVIDIA's device
// plugin's (AnnotatedID in github.com/NVIDIA/k8s-device-plugin
// internal/rm), so allocations made by either plugin read the same; the
// milli-GPU format is gpuplane's. This type is the one place that writes or
// reads these formats.
type ID string

// replicaSep separates a device UUID from its replica number.
const replicaSep = "::"

// NewID returns the ID of replica n of the device uuid shared as replicas
// time-slicing replicas; an unshared device (replicas ≤ 1) is its UUID.
func NewID(uuid string, n, replicas int) ID {
	if replicas <= 1 {
		return ID(uuid)
	}
	return ID(uuid + replicaSep + strconv.Itoa(n))
}

// milliMark starts the milli-GPU unit part after replicaSep.
const milliMark = "m"

// MilliUnits is the number of milli-GPU units (devices of
// gpuplane.io/gpu-milli) of one GPU.
const MilliUnits = resource.MilliPerGPU

// NewMilliID returns the ID of milli-GPU unit k (0..MilliUnits-1) of the
// GPU uuid, e.g. "GPU-...::m299".
func NewMilliID(uuid string, k int) ID {
	return ID(uuid + replicaSep + milliMark + strconv.Itoa(k))
}

// UUID returns the GPU or MIG device UUID: the ID without its replica part.
// It does not check the replica number; Split does.
func (id ID) UUID() string {
	u, _, _ := strings.Cut(string(id), replicaSep)
	return u
}

// Split returns the device UUID and the replica number (0 for an ID without
// one). It fails when the replica part is not a non-negative number, as
// for a milli-GPU unit's ID, which is no replica.
func (id ID) Split() (uuid string, replica int, err error) {
	u, r, ok := strings.Cut(string(id), replicaSep)
	if !ok {
		return u, 0, nil
	}
	n, err := strconv.Atoi(r)
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("device ID %q: replica %q is not a non-negative number", string(id), r)
	}
	return u, n, nil
}

// IsMilli reports whether the ID is a milli-GPU unit's (NewMilliID).
func (id ID) IsMilli() bool {
	_, r, ok := strings.Cut(string(id), replicaSep)
	return ok && strings.HasPrefix(r, milliMark)
}
