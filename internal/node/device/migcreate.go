// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package device

import (
	"context"
	"errors"
)

// MIGPlacement is where a GPU instance sits on its GPU: its first memory
// slot (of 8) and the number of slots it occupies, NVML's
// nvmlGpuInstancePlacement_t.
type MIGPlacement struct {
	Start, Size int
}

// MIGInstance is a live MIG device with its GPU instance's profile and
// placement.
type MIGInstance struct {
	MIGDevice
	// GIProfile is the GPU instance profile name of the internal/gpu MIG
	// table, e.g. "1g.10gb" or "1g.10gb+me".
	GIProfile string
	// Placement is the GPU instance's placement.
	Placement MIGPlacement
	// NoComputeInstance marks a GPU instance without a compute instance
	// (left by a crash between the two creations, or made so by an
	// administrator): no MIG device, no UUID (MIGDevice holds its GPU
	// instance ID and memory), its placement taken all the same.
	NoComputeInstance bool
}

// MIGOffer is what a GPU itself offers for MIG: by GPU instance profile
// (NVML's constant, gpu.MIGProfile.GIProfileID), the first memory slots
// of the placements it can make; a profile the GPU has not is absent.
type MIGOffer map[int][]int

// MIGOfferer is implemented by MIG managers that can ask the GPU what it
// offers (nvml: nvmlDeviceGetGpuInstanceProfileInfo and
// nvmlDeviceGetGpuInstancePossiblePlacements), so that the DRA plugin
// publishes only the MIG table's placements the GPU can make.
type MIGOfferer interface {
	MIGOffer(ctx context.Context, gpuUUID string) (MIGOffer, error)
}

// MIGManager is implemented by backends that create and destroy MIG
// devices (a GPU instance with one compute instance spanning it) on
// MIG-enabled GPUs, as the DRA plugin does on demand (internal/node/dra).
// Methods are safe for concurrent use.
type MIGManager interface {
	// MIGInstances returns the GPU's live MIG devices, and its GPU
	// instances without a compute instance (NoComputeInstance).
	MIGInstances(ctx context.Context, gpuUUID string) ([]MIGInstance, error)
	// CreateMIG creates a GPU instance of the GI profile at the placement
	// starting at memory slot start, with one compute instance spanning
	// it. It fails, as NVML does, when the placement is not one of the
	// profile's or overlaps a live instance.
	CreateMIG(ctx context.Context, gpuUUID, giProfile string, start int) (MIGInstance, error)
	// DestroyMIG destroys the GPU instance giID and its compute instances
	// when its MIG device is migUUID, the device the caller created:
	// GPU instance IDs are reused once an instance is destroyed (a reboot,
	// an administrator), so an ID alone may name another's device. A GPU
	// instance whose MIG device has another UUID, or none (no compute
	// instance), is left as it is and the error wraps ErrNotOwned; no
	// GPU instance giID is an error wrapping ErrNotFound.
	DestroyMIG(ctx context.Context, gpuUUID string, giID int, migUUID string) error
}

// ErrNotFound is wrapped by MIGManager.DestroyMIG's error when the GPU
// instance does not exist (NVML_ERROR_NOT_FOUND), so that a caller undoing
// its own work can tell "already gone" from a failure.
var ErrNotFound = errors.New("not found")

// ErrNotOwned is wrapped by MIGManager.DestroyMIG's error when the GPU
// instance holds another MIG device than the one named (its ID was
// reused): nothing is destroyed.
var ErrNotOwned = errors.New("another MIG device")
