// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/gpuplane/gpuplane/internal/atomicfile"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager/checksum"
)

// Claim states in the checkpoint, NVIDIA's driver's: a claim is written
// PrepareStarted before any MIG device is created for it, and
// PrepareCompleted once all are, so that a plugin restarted in between
// finds, and adopts, what it created instead of creating it twice.
const (
	PrepareStarted   = "PrepareStarted"
	PrepareCompleted = "PrepareCompleted"
)

// checkpointVersion is the version of the checkpoint file's format: 2
// has a checksum; 1 (none) is still read.
const (
	checkpointVersion   = 2
	checkpointVersionV1 = 1
)

// Checkpoint is the plugin's record of the claims it prepared, kept in a
// JSON file so that unprepare, after a restart, knows what to undo.
type Checkpoint struct {
	Version int `json:"version"`
	// NodeBootID is the boot ID (Config.BootIDPath) of the boot the
	// checkpoint was written in, as NVIDIA's driver records it
	// (nodeBootID); empty in a checkpoint written before it was recorded.
	NodeBootID string                       `json:"nodeBootID,omitempty"`
	Claims     map[types.UID]*PreparedClaim `json:"claims"`
	// Checksum is the kubelet's checkpoint checksum
	// (k8s.io/kubernetes/pkg/kubelet/checkpointmanager/checksum, as
	// NVIDIA's driver's checkpoint has it) of the checkpoint's compact
	// JSON with Checksum 0.
	Checksum checksum.Checksum `json:"checksum,omitempty"`
}

// sum is the checksum of cp's content.
func (cp Checkpoint) sum() (checksum.Checksum, error) {
	cp.Checksum = 0
	data, err := json.Marshal(cp)
	if err != nil {
		return 0, err
	}
	return checksum.New(data), nil
}

// PreparedClaim is one claim's record.
type PreparedClaim struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	State     string `json:"state"`
	// PreBoot marks a claim prepared before the node's last reboot
	// (checkBoot): nothing it held is live. Its next prepare prepares it
	// anew; its unprepare destroys nothing and removes its CDI specs.
	PreBoot bool             `json:"preBoot,omitempty"`
	Devices []PreparedDevice `json:"devices"`
}

// PreparedDevice is one allocated device of a claim.
type PreparedDevice struct {
	// Requests are the claim's requests the device serves.
	Requests []string `json:"requests"`
	Pool     string   `json:"pool"`
	Device   string   `json:"device"`
	// ShareID is the allocation's share of a shared device.
	ShareID *types.UID `json:"shareID,omitempty"`
	// GPUUUID is the GPU's UUID, the parent's for a MIG device.
	GPUUUID string `json:"gpuUUID"`
	// MIG is the MIG device created for the claim; nil for a whole GPU
	// or a static MIG device.
	MIG *PreparedMIG `json:"mig,omitempty"`
	// StaticMIG is the UUID of the MIG device made outside DRA the claim
	// was given as it is (never created nor destroyed by the plugin), and
	// StaticInstance its GPU and compute instance IDs.
	StaticMIG      string       `json:"staticMIG,omitempty"`
	StaticInstance *MIGInstance `json:"staticInstance,omitempty"`
	// ConsumedCapacity is the allocation's consumed capacity of a shared
	// device (ResourceClaim status), e.g. milliGPU: the claim's share.
	ConsumedCapacity map[resourceapi.QualifiedName]resource.Quantity `json:"consumedCapacity,omitempty"`
	// Config is the opaque configuration that applies to the device (an
	// MPS one starts a daemon; a time-slice interval is not applied,
	// docs/dra.md); nil: none.
	Config *DeviceConfig `json:"config,omitempty"`
	// MPSDaemon is the ID of the MPS control daemon serving the device
	// (under an MPS configuration), its directory <plugin dir>/mps/<ID>.
	MPSDaemon string `json:"mpsDaemon,omitempty"`
	// AdminAccess is the allocation's adminAccess (KEP-5018): the device
	// is given beside the workloads that hold it and consumes nothing (no
	// share, no configuration, no MIG device made or destroyed: a MIG
	// placement's is recorded in StaticMIG), and never blocks nor is
	// blocked by another claim.
	AdminAccess bool `json:"adminAccess,omitempty"`
	// CDIDeviceIDs are what the kubelet was given.
	CDIDeviceIDs []string `json:"cdiDeviceIDs,omitempty"`
}

// cdiUUID is the UUID of the device's CDI device (nvidia.com/gpu=<UUID>):
// the MIG device's for a MIG device ("" while a created one has no UUID
// yet), else the GPU's.
func (pd PreparedDevice) cdiUUID() string {
	switch {
	case pd.StaticMIG != "":
		return pd.StaticMIG
	case pd.MIG != nil:
		return pd.MIG.UUID
	}
	return pd.GPUUUID
}

// PreparedMIG is a MIG device created for a claim: GPUInstanceID,
// ComputeInstanceID and UUID are set once it is created.
type PreparedMIG struct {
	GIProfile         string `json:"giProfile"`
	Start             int    `json:"start"`
	GPUInstanceID     int    `json:"gpuInstanceID,omitempty"`
	ComputeInstanceID int    `json:"computeInstanceID,omitempty"`
	UUID              string `json:"uuid,omitempty"`
}

// MIGInstance identifies a MIG device on its parent GPU.
type MIGInstance struct {
	GPUInstanceID     int `json:"gpuInstanceID"`
	ComputeInstanceID int `json:"computeInstanceID"`
}

// migInstance is the GPU and compute instance of a MIG device, created
// or static; false for a whole GPU or a MIG device not yet created.
func (pd PreparedDevice) migInstance() (MIGInstance, bool) {
	switch {
	case pd.StaticInstance != nil:
		return *pd.StaticInstance, true
	case pd.MIG != nil && pd.MIG.UUID != "":
		return MIGInstance{GPUInstanceID: pd.MIG.GPUInstanceID, ComputeInstanceID: pd.MIG.ComputeInstanceID}, true
	}
	return MIGInstance{}, false
}

// loadCheckpoint reads the checkpoint file; a missing file is an empty
// checkpoint. A file whose checksum does not match its content is
// refused: the plugin would otherwise forget or invent prepared claims
// and MIG devices.
func loadCheckpoint(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Checkpoint{Version: checkpointVersion, Claims: map[types.UID]*PreparedClaim{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var cp Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	switch cp.Version {
	case checkpointVersion:
		sum, err := cp.sum()
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
		if sum != cp.Checksum {
			return nil, fmt.Errorf("checkpoint %s is corrupt: checksum %d, its content's %d; move it away to start with no prepared claims (their MIG devices and MPS daemons are then not undone)", path, cp.Checksum, sum)
		}
	case checkpointVersionV1:
		cp.Version = checkpointVersion // written with a checksum next time
	default:
		return nil, fmt.Errorf("checkpoint %s: version %d, want %d or %d", path, cp.Version, checkpointVersionV1, checkpointVersion)
	}
	if cp.Claims == nil {
		cp.Claims = map[types.UID]*PreparedClaim{}
	}
	return &cp, nil
}

// save writes the checkpoint file atomically, with its checksum.
func (cp *Checkpoint) save(path string) error {
	sum, err := cp.sum()
	if err != nil {
		return err
	}
	cp.Checksum = sum
	data, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
