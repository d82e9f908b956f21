// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// draDriver is the DRA driver whose devices are GPUs: NVIDIA's
// (sigs.k8s.io/dra-driver-nvidia-gpu) and gpuplane's
// (internal/node/dra.DriverName), which publish the same device names.
const draDriver = "gpu.nvidia.com"

// migComputeSlices is the number of compute slices of a MIG-capable GPU
// (A100, H100, H200: 7).
const migComputeSlices = 7

// ClaimShares tells how much of a DRA device a claim consumes. The kubelet's
// pod-resources API names the claim and device but not the capacity consumed
// (that is in the ResourceClaim's status, which the DRA driver recorded when
// it prepared the claim); *dra.Driver is one.
type ClaimShares interface {
	// ClaimShare returns the fraction, in (0, 1], of DRA device device the
	// claim namespace/name holds through share shareID ("" when allocated
	// whole): milliGPU/1000 of its consumed capacity, 1 for a device
	// allocated whole. ok is false when the claim or device is unknown.
	ClaimShare(namespace, name, device, shareID string) (share float64, ok bool)
}

// draDeviceName matches the device names of driver gpu.nvidia.com: gpu-<minor>
// and, for a MIG placement, gpu-<minor>-mig-<profile>-<profile ID>-<start>
// where the profile (dots dropped, + as -) starts with its compute slices,
// e.g. gpu-0-mig-1g10gb-me-20-0 (internal/node/dra.Build).
var draDeviceName = regexp.MustCompile(`^gpu-(\d+)(?:-mig-(\d)g[0-9a-z-]*-\d+-\d+)?$`)

// draHolding is what one DRA allocation holds.
type draHolding struct {
	d *devInfo
	// share is the fraction of d held; -1 when unknown.
	share float64
	// ofParent: the allocation is a MIG device the exporter does not know
	// (created after discovery), counted as its compute slices of the GPU d.
	ofParent bool
}

// resolveDRA maps a DRA allocation of driver gpu.nvidia.com to a known
// device: the device of its CDI device's UUID (nvidia.com/gpu=<UUID>, as
// gpuplane's driver names them), else by the device name's minor number (a
// MIG placement counts on its GPU by its compute slices). ok is false when
// it is no GPU of this node.
func (s *state) resolveDRA(a podresources.Allocation) (h draHolding, ok bool) {
	if a.DRA.Driver != draDriver {
		return h, false
	}
	slices := 0
	if _, uuid, found := strings.Cut(a.DeviceID, "="); found && s.byUUID[uuid] != nil {
		h.d = s.byUUID[uuid]
	} else {
		m := draDeviceName.FindStringSubmatch(a.DRA.Device)
		if m == nil || s.byMinor[m[1]] == nil {
			return h, false
		}
		h.d = s.byMinor[m[1]]
		if m[2] != "" {
			slices, _ = strconv.Atoi(m[2])
			h.ofParent = true
		}
	}
	h.share = -1
	if s.claims != nil {
		if v, found := s.claims.ClaimShare(a.DRA.ClaimNamespace, a.DRA.ClaimName, a.DRA.Device, a.DRA.ShareID); found {
			h.share = v
		}
	}
	if h.share < 0 && a.DRA.ShareID == "" {
		h.share = 1 // allocated whole
	}
	if h.ofParent && h.share >= 0 {
		h.share *= float64(slices) / migComputeSlices
	}
	return h, true
}
