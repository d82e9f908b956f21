// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"strconv"
	"strings"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// The DRA driver whose devices are GPUs is NVIDIA's
// (sigs.k8s.io/dra-driver-nvidia-gpu) and gpuplane's (internal/node/dra),
// which publish the same device names: apidra.DriverName,
// apidra.ParseDeviceName.

// ClaimShares tells how much of a DRA device a claim consumes. The kubelet's
// pod-resources API names the claim and device but not the capacity consumed
// (that is in the ResourceClaim's status, which the DRA driver recorded when
// it prepared the claim); *dra.Driver is one.
type ClaimShares interface {
	// ClaimShare returns the fraction, in [0, 1], of DRA device device the
	// claim namespace/name holds through share shareID ("" when allocated
	// whole): milliGPU/1000 of its consumed capacity, 1 for a device
	// allocated whole, 0 for admin access (KEP-5018: it holds nothing, and
	// its pod is no holder of the device). ok is false when the claim or
	// device is unknown.
	ClaimShare(namespace, name, device, shareID string) (share float64, ok bool)
}

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
// device (ok false for admin access, which holds none): the device of its CDI device's UUID (nvidia.com/gpu=<UUID>, as
// gpuplane's driver names them), else by the device name's minor number (a
// MIG placement counts on its GPU by its compute slices). ok is false when
// it is no GPU of this node.
func (s *state) resolveDRA(a podresources.Allocation) (h draHolding, ok bool) {
	if a.DRA.Driver != apidra.DriverName {
		return h, false
	}
	slices := 0
	if _, uuid, found := strings.Cut(a.DeviceID, "="); found && s.byUUID[uuid] != nil {
		h.d = s.byUUID[uuid]
	} else {
		n, err := apidra.ParseDeviceName(a.DRA.Device)
		if err != nil || s.byMinor[strconv.Itoa(n.Minor)] == nil {
			return h, false
		}
		h.d = s.byMinor[strconv.Itoa(n.Minor)]
		if n.MIG() {
			slices = apidra.MIGSlices(n.Profile)
			h.ofParent = true
		}
	}
	h.share = -1
	if s.claims != nil {
		if v, found := s.claims.ClaimShare(a.DRA.ClaimNamespace, a.DRA.ClaimName, a.DRA.Device, a.DRA.ShareID); found {
			if v == 0 {
				return h, false // admin access: holds nothing
			}
			h.share = v
		}
	}
	if h.share < 0 && a.DRA.ShareID == "" {
		h.share = 1 // allocated whole
	}
	if h.ofParent && h.share >= 0 {
		h.share *= float64(slices) / apidra.MIGComputeSlices
	}
	return h, true
}
