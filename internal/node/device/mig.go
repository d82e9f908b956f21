// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package device

import (
	"fmt"
	"strings"

	nvdev "github.com/NVIDIA/go-nvlib/pkg/nvlib/device"
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// CIProfiles maps compute slices to NVML's compute instance profile of a
// compute instance of that many slices (nvml.h
// NVML_COMPUTE_INSTANCE_PROFILE_*): NVML's compute instance profile table,
// the one the NVML backend, the mock and the DRA plugin name MIG devices
// and create compute instances with. CIProfiles[g] is the compute instance
// that spans a GPU instance of g compute slices.
var CIProfiles = map[int]int{
	1: nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE,
	2: nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE,
	3: nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE,
	4: nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE,
	6: nvml.COMPUTE_INSTANCE_PROFILE_6_SLICE,
	7: nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE,
	8: nvml.COMPUTE_INSTANCE_PROFILE_8_SLICE,
}

// MIGProfileName names a MIG device by NVIDIA's rule, go-nvlib's
// (pkg/nvlib/device/mig_profile.go, NewMigProfile and String, v0.13.0):
// "<g>g.<gb>gb" when the compute instance spans its GPU instance, else
// "<c>c.<g>g.<gb>gb", with "+me" for the media-extension GPU instance
// profile. gb is the instance's memory as a fraction of the GPU's, rounded
// up to an eighth, times the GPU's memory in GB rounded up, rounded.
// giProfile and ciProfile are NVML's profile constants
// (nvml.GPU_INSTANCE_PROFILE_*, nvml.COMPUTE_INSTANCE_PROFILE_*);
// memoryMiB is the MIG device's memory and gpuMemoryMiB its GPU's total,
// both in MiB, as NVML reports them (nvmlDeviceGetAttributes memorySizeMB,
// nvmlDeviceGetMemoryInfo total). An H100 NVL (95830 MiB) 1-slice instance
// of 11008 MiB is "1g.12gb".
func MIGProfileName(giProfile, ciProfile int, memoryMiB, gpuMemoryMiB int64) (string, error) {
	if memoryMiB <= 0 || gpuMemoryMiB <= 0 {
		return "", fmt.Errorf("MIG profile: memory %d MiB of a %d MiB GPU: both must be positive", memoryMiB, gpuMemoryMiB)
	}
	// NewMigProfile uses no NVML call: nil is a valid library here.
	p, err := nvdev.New(nil).NewMigProfile(giProfile, ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, uint64(memoryMiB), uint64(gpuMemoryMiB)<<20)
	if err != nil {
		return "", fmt.Errorf("MIG profile: %w", err)
	}
	return p.String(), nil
}

// MIGResourceProfile returns the MIG profile as it appears in resource
// names and label keys (nvidia.com/mig-<it>): "+" becomes ".", so
// "1g.10gb+me" is "1g.10gb.me", as NVIDIA's device plugin names it
// (k8s-device-plugin internal/rm/rm.go AddDefaultResourcesToConfig and
// internal/resource/nvml-mig-device.go GetName); the kubelet refuses "+"
// in a resource name. The profile is read by apidra.ParseMIGProfile; a
// name it does not read is an error. A compute instance smaller than its GPU instance
// ("1c.7g.40gb") is an error: NVIDIA's plugin makes resources only for
// profiles whose compute instance spans the GPU instance (C == G, same
// function) and refuses the others ("does not match any resource
// patterns", internal/rm/device_map.go). The name is returned with the
// error too: under the single strategy NVIDIA's plugin serves such devices
// as nvidia.com/gpu and gpu-feature-discovery labels the product with it.
func MIGResourceProfile(profile string) (string, error) {
	name := strings.ReplaceAll(profile, "+", ".")
	if p, err := apidra.ParseMIGProfile(profile); err != nil {
		return name, err
	} else if p.ComputeInstanceSlices != 0 {
		return name, fmt.Errorf("MIG profile %s is a compute instance smaller than its GPU instance; only MIG devices whose compute instance spans the whole GPU instance get a resource, as in NVIDIA's device plugin", profile)
	}
	return name, nil
}

// CheckSingleMIG says whether node n can be served under the single MIG
// strategy: nil when no GPU has MIG enabled, or when every GPU has MIG
// enabled with at least one MIG device and all MIG devices have one
// profile. Otherwise the error names the reason and a GPU, in the order
// gpu-feature-discovery checks them (k8s-device-plugin
// internal/lm/mig-strategy.go newMigStrategySingleLabeler): a MIG-enabled
// GPU without MIG devices, GPUs with MIG enabled and disabled, more than
// one MIG profile.
func CheckSingleMIG(n Node) error {
	// A GPU lost at discovery with its MIG mode unknown (NVML answers
	// nothing for it) does not decide the strategy.
	lost := map[string]bool{}
	for _, ev := range n.Faults {
		if ev.Kind == HealthLost {
			lost[ev.UUID] = true
		}
	}
	var on, off []int
	for i, g := range n.GPUs {
		if lost[g.UUID] && !g.MIGEnabled {
			continue
		}
		if g.MIGEnabled {
			on = append(on, i)
		} else {
			off = append(off, i)
		}
	}
	if len(on) == 0 {
		return nil
	}
	for _, i := range on {
		if len(n.GPUs[i].MIG) == 0 {
			return fmt.Errorf("GPU %d (%s) has MIG enabled but no MIG devices", i, n.GPUs[i].UUID)
		}
	}
	if len(off) > 0 {
		return fmt.Errorf("GPU %d (%s) has MIG disabled while GPU %d has it enabled", off[0], n.GPUs[off[0]].UUID, on[0])
	}
	first := n.GPUs[on[0]].MIG[0].Profile
	for _, i := range on {
		for _, m := range n.GPUs[i].MIG {
			if m.Profile != first {
				return fmt.Errorf("more than one MIG profile: GPU %d (%s) has %s besides %s", i, n.GPUs[i].UUID, m.Profile, first)
			}
		}
	}
	return nil
}
