// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/atomicfile"
)

// A container of a shared GPU (--dra-shares) learns its share as on the
// device-plugin path, from GPUPLANE_GPU_SHARE, through one more CDI device
// of the claim's own, kind gpuplane.io/claim, named <claim UID>-<device>
// (as NVIDIA's driver gives each claim a transient spec,
// k8s.gpu.nvidia.com/claim=<claim UID>-<device>). It holds environment
// only: the GPU itself comes from nvidia.com/gpu=<UUID>.
const claimCDIKind = "gpuplane.io/claim"

// claimCDIName is the CDI device name of a claim's device.
func claimCDIName(uid types.UID, device string) string { return string(uid) + "-" + device }

// claimCDISpecPath is the spec file of a claim's device in dir.
func claimCDISpecPath(dir string, uid types.UID, device string) string {
	return filepath.Join(dir, "gpuplane_claim_"+claimCDIName(uid, device)+".json")
}

// shareEnv is the environment of a container given pd, a share of a GPU
// of gpuMem bytes and gpuShares shares (0: none published):
// GPUPLANE_GPU_SHARE, the milli-GPU it holds (heldMilli: its consumed
// milliGPU, or its memory's or its shares' part when larger, as for a
// memory share or NVIDIA's integer shares); and under an MPS configuration (GpuConfig sharing
// strategy MPS) the limits of CUDA's MPS client from the share,
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (the held milli-GPU/10, rounded up) and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (<GPU UUID>=<MiB>M, its
// consumed memory), as NVIDIA's MPS documentation names them ("Per-client
// limits", CUDA MPS guide section 4). They bind under the GPU's MPS
// control daemon, which prepare starts for a share under MPS (mps.go).
// nil when pd consumes no milliGPU (not a share).
func shareEnv(pd PreparedDevice, gpuMem, gpuShares int64) []string {
	if _, ok := pd.ConsumedCapacity[apidra.CapacityMilliGPU]; !ok {
		return nil
	}
	milli := heldMilli(pd, gpuMem, gpuShares)
	env := []string{configv1.EnvGPUShare + "=" + strconv.FormatInt(milli, 10)}
	if pd.Config == nil || pd.Config.Sharing == nil || pd.Config.Sharing.Strategy != MPSStrategy {
		return env
	}
	env = append(env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="+strconv.FormatInt((milli+9)/10, 10))
	if m, ok := pd.ConsumedCapacity[apidra.CapacityMemory]; ok {
		env = append(env, fmt.Sprintf("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=%s=%dM", pd.GPUUUID, m.Value()>>20))
	}
	return env
}

// writeClaimCDISpec writes the claim's spec of pd into dir when pd is a
// share or is served by an MPS daemon (mps, its edits), and returns its
// CDI device ID ("" when pd is neither).
func writeClaimCDISpec(dir string, uid types.UID, pd PreparedDevice, gpuMem, gpuShares int64, mps *cdispec.ContainerEdits) (string, error) {
	edits := cdispec.ContainerEdits{Env: shareEnv(pd, gpuMem, gpuShares)}
	if mps != nil {
		edits.Env = append(edits.Env, mps.Env...)
		edits.Mounts = mps.Mounts
	}
	if edits.Env == nil {
		return "", nil
	}
	name := claimCDIName(uid, pd.Device)
	s := &cdispec.Spec{Kind: claimCDIKind, Devices: []cdispec.Device{{Name: name, ContainerEdits: edits}}}
	v, err := cdispec.MinimumRequiredVersion(s)
	if err != nil {
		v = cdispec.CurrentVersion
	}
	s.Version = v
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("CDI directory: %w", err)
	}
	if err := atomicfile.Write(claimCDISpecPath(dir, uid, pd.Device), data, 0o644); err != nil {
		return "", err
	}
	return claimCDIKind + "=" + name, nil
}

// removeClaimCDISpec removes the claim's spec of device from dir; a
// missing file is no error.
func removeClaimCDISpec(dir string, uid types.UID, device string) error {
	if err := os.Remove(claimCDISpecPath(dir, uid, device)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// claimCDIDir is where the claims' specs go: --cdi-dir, else the
// runtimes' transient directory.
func (d *Driver) claimCDIDir() string {
	if d.cfg.CDIDir != "" {
		return d.cfg.CDIDir
	}
	return DefaultCDIDir
}
