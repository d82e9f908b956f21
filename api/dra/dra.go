// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package dra is the one home of the names gpuplane's DRA driver publishes
// and every reader of them reads back: the driver name and DeviceClass
// names, the device attributes, capacities and counters, the device-name
// grammar (MakeDeviceName, ParseDeviceName), the spelling of a MIG profile
// (ParseMIGProfile, SpellMIGProfile) and the reader of a claim's selector
// clause (ParseSelectorClause, MIGProfileSelector), and what a claim asks
// for as admission counts it (ClaimSpec, Asks). The node agent's DRA
// plugin (internal/node/dra) writes them; gpuplane-scheduler, the
// simulator's snapshot reader (internal/snapshot), the node agent's
// exporter and the quota plan read them. The names are NVIDIA's DRA
// driver's (sigs.k8s.io/dra-driver-nvidia-gpu, cmd/gpu-kubelet-plugin), so
// that claims and device classes written for it select gpuplane's devices
// unchanged. It imports the standard library only. See docs/dra.md.
package dra

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DriverName is the DRA driver name, NVIDIA's driver's.
const DriverName = "gpu.nvidia.com"

// DeviceClass names, as the chart installs them (deploy/helm/gpuplane
// templates/deviceclass.yaml) and NVIDIA's driver names them.
const (
	// GPUDeviceClass selects whole GPUs (and shares of them).
	GPUDeviceClass = DriverName
	// MIGDeviceClass selects MIG devices.
	MIGDeviceClass = "mig.nvidia.com"
)

// Attribute names, NVIDIA's driver's.
const (
	AttrType        = "type"
	AttrUUID        = "uuid"
	AttrParentUUID  = "parentUUID"
	AttrProfile     = "profile"
	AttrProductName = "productName"
)

// Device types, the AttrType attribute.
const (
	TypeGPU = "gpu"
	TypeMIG = "mig"
)

// Capacity names.
const (
	// CapacityMemory is the device's memory in bytes, NVIDIA's "memory".
	CapacityMemory = "memory"
	// CapacityMultiprocessors is a MIG device's SM count, NVIDIA's.
	CapacityMultiprocessors = "multiprocessors"
	// CapacityMilliGPU is a shared GPU's compute share, in thousandths
	// of the GPU (1..1000), gpuplane's (NVIDIA's driver has "shares",
	// a count it is told: CapacityShares).
	CapacityMilliGPU = "milliGPU"
	// CapacityShares is a shared GPU's count of equal shares, NVIDIA's
	// "shares" (its driver's --consumable-shares=N publishes N of them,
	// each claim taking 1 by default; sigs.k8s.io/dra-driver-nvidia-gpu
	// cmd/gpu-kubelet-plugin/consumable_shares.go). A claim holding s of
	// N holds s/N of the GPU (resource.SharedGPUMilliShares).
	CapacityShares = "shares"
)

// Counter names in a MIG-enabled GPU's counter set. The memory and
// multiprocessors counters are NVIDIA's (its capacities, as DNS labels),
// the memory slices too ("memory-slice-<i>", one per memory slot of
// MemorySlices, value 1); compute-slices (MIGComputeSlices) is gpuplane's:
// the MIG rule of 7 compute slices, which the others imply on the MIG
// table's GPUs but do not state.
const (
	CounterMemory          = "memory"
	CounterMultiprocessors = "multiprocessors"
	CounterComputeSlices   = "compute-slices"
	// MemorySlices is the number of memory slots of a MIG-capable GPU.
	MemorySlices = 8
	// MIGComputeSlices is the number of compute slices of a MIG-capable
	// GPU (A100, H100, H200: 7); a MIG instance of c slices has c/7 of
	// its GPU's compute.
	MIGComputeSlices = 7
)

// MemorySliceCounter names the counter of memory slot i.
func MemorySliceCounter(i int) string { return fmt.Sprintf("memory-slice-%d", i) }

// CounterSetName is NVIDIA's name of the counter set of the GPU of minor
// number minor: "gpu-<minor>-counter-set".
func CounterSetName(minor int) string { return fmt.Sprintf("gpu-%d-counter-set", minor) }

// DeviceName is what a device name says: the GPU's minor number and, for
// a MIG placement, its profile, NVML's GPU instance profile ID and its
// start slot.
type DeviceName struct {
	// Minor is the GPU's minor number (/dev/nvidia<minor>).
	Minor int
	// Profile is the MIG device's profile ("1g.10gb+me", the profile
	// attribute's spelling); "" for a whole GPU.
	Profile string
	// ProfileID is NVML's GPU instance profile ID as nvidia-smi mig
	// -lgip lists it (nvmlGpuInstanceProfileInfo_t.id, e.g. 19 for 1g).
	ProfileID int
	// Start is the placement's start memory slot.
	Start int
}

// MIG reports whether the name is a MIG placement's.
func (n DeviceName) MIG() bool { return n.Profile != "" }

// MakeDeviceName returns NVIDIA's device name: "gpu-<minor>" for a whole
// GPU, "gpu-<minor>-mig-<profile>-<profile ID>-<start>" for a MIG
// placement, its profile without dots and with "+" as "-"
// ("gpu-0-mig-1g10gb-me-20-0" for 1g.10gb+me).
func MakeDeviceName(n DeviceName) string {
	if !n.MIG() {
		return fmt.Sprintf("gpu-%d", n.Minor)
	}
	return fmt.Sprintf("gpu-%d-mig-%s-%d-%d", n.Minor, deviceProfile(n.Profile), n.ProfileID, n.Start)
}

// deviceProfile is a profile as device names spell it: "1g.10gb+me" is
// "1g10gb-me".
func deviceProfile(profile string) string {
	return strings.ReplaceAll(strings.ReplaceAll(profile, ".", ""), "+", "-")
}

var (
	wholeName = regexp.MustCompile(`^gpu-(0|[1-9][0-9]*)$`)
	migName   = regexp.MustCompile(`^gpu-(0|[1-9][0-9]*)-mig-([1-8])g([1-9][0-9]*)gb(-me)?-(0|[1-9][0-9]*)-([0-7])$`)
)

// ParseDeviceName reads a device name MakeDeviceName makes, with the
// profile back in its attribute's spelling ("gpu-0-mig-1g10gb-me-20-0":
// minor 0, profile 1g.10gb+me, profile ID 20, start 0). Only profiles
// whose compute instance spans the GPU instance are published, so only
// those parse.
func ParseDeviceName(name string) (DeviceName, error) {
	if m := wholeName.FindStringSubmatch(name); m != nil {
		minor, err := strconv.Atoi(m[1])
		if err != nil {
			return DeviceName{}, fmt.Errorf("device name %q: %w", name, err)
		}
		return DeviceName{Minor: minor}, nil
	}
	m := migName.FindStringSubmatch(name)
	if m == nil {
		return DeviceName{}, fmt.Errorf("device name %q is neither gpu-<minor> nor gpu-<minor>-mig-<profile>-<profile ID>-<start>", name)
	}
	var n DeviceName
	var err [4]error
	n.Minor, err[0] = strconv.Atoi(m[1])
	slices, _ := strconv.Atoi(m[2])
	gb, err1 := strconv.Atoi(m[3])
	err[1] = err1
	n.ProfileID, err[2] = strconv.Atoi(m[5])
	n.Start, err[3] = strconv.Atoi(m[6])
	for _, e := range err {
		if e != nil {
			return DeviceName{}, fmt.Errorf("device name %q: %w", name, e)
		}
	}
	n.Profile = SpellMIGProfile(MIGProfile{ComputeSlices: slices, MemoryGB: gb, MediaExtensions: m[4] != ""})
	return n, nil
}
