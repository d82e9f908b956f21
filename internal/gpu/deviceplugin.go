// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"strconv"
	"strings"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
)

// DevicePluginSetup is how NVIDIA's device plugin serves a node's GPUs,
// as the node's gpu-feature-discovery labels say it: the rules the
// simulator's snapshot reader applies (and gpuplane-scheduler may share)
// to learn what one device of nvidia.com/gpu (or nvidia.com/gpu.shared)
// is on that node. Sources, github.com/NVIDIA/k8s-device-plugin:
// api/config/v1/sharing.go and replicas.go (timeSlicing and mps,
// renameByDefault, failRequestsGreaterThanOne), api/config/v1/config.go
// (sharing.mps.failRequestsGreaterThanOne true unless the config sets it
// false), internal/rm
// (each GPU served as Replicas devices "<uuid>::<i>"), internal/lm/resource.go
// (the product, count, replicas and sharing-strategy labels, "-SHARED"
// when shared and not renamed) and internal/lm/mig-strategy.go (single:
// the MIG devices as nvidia.com/gpu, product "<gpu>-MIG-<profile>", or
// "<gpu>-MIG-INVALID" when the GPUs are not all in one profile).
type DevicePluginSetup struct {
	// Sharing is "time-slicing" or "mps" when each GPU is served as
	// Replicas devices (Replicas > 1), "" otherwise.
	Sharing string
	// Replicas is nvidia.com/gpu.replicas, at least 1.
	Replicas int
	// MIGStrategy is nvidia.com/mig.strategy ("" when absent).
	MIGStrategy string
	// Product is the GPU's product, nvidia.com/gpu.product without the
	// "-SHARED" and "-MIG-<profile>" suffixes; MIGProfile the profile of
	// each nvidia.com/gpu device under the single strategy ("" for none).
	Product, MIGProfile string
	// MIGInvalid: the product ends in "-MIG-INVALID" (single strategy,
	// MIG-enabled GPUs in no one profile): the plugin serves no valid
	// nvidia.com/gpu devices of them.
	MIGInvalid bool
}

// ReadDevicePluginSetup reads a node's setup from its labels. A
// nvidia.com/gpu.replicas label that is no count of at least 1 is read as
// 1 (the caller checks it); a sharing strategy label other than "mps"
// with Replicas > 1 is time-slicing, the plugin's default.
func ReadDevicePluginSetup(labels map[string]string) DevicePluginSetup {
	s := DevicePluginSetup{Replicas: 1, MIGStrategy: labels[resource.LabelMIGStrategy]}
	if r, err := strconv.Atoi(labels[resource.LabelGPUReplicas]); err == nil && r > 1 {
		s.Replicas = r
		s.Sharing = "time-slicing"
		if labels[resource.LabelGPUSharingStrategy] == "mps" {
			s.Sharing = "mps"
		}
	}
	product := strings.TrimSuffix(labels[resource.LabelGPUProduct], "-SHARED")
	s.Product = product
	if i := strings.LastIndex(product, "-MIG-"); i > 0 {
		profile := product[i+len("-MIG-"):]
		switch _, err := apidra.ParseMIGProfile(profile); {
		case profile == "INVALID":
			s.Product, s.MIGInvalid = product[:i], true
		case err == nil:
			s.Product, s.MIGProfile = product[:i], profile
		}
	}
	return s
}

// ReplicaMilli is the milli-GPU one device is under time-slicing or MPS:
// 1000 / Replicas, rounded down, at least 1; 1000 without sharing.
func (s DevicePluginSetup) ReplicaMilli() int64 {
	return max(1, 1000/int64(s.Replicas))
}

// FailsRequestsOverOne reports whether the plugin fails a container's
// request for more than one device (internal/rm/rm.go ValidateRequest),
// by the plugin's defaults, since no label shows failRequestsGreaterThanOne:
// under MPS it defaults to true (api/config/v1/config.go), under
// time-slicing to unset, false.
func (s DevicePluginSetup) FailsRequestsOverOne() bool { return s.Sharing == "mps" }

// PluginDevices is what a node's devices of nvidia.com/gpu (or of
// nvidia.com/gpu.shared) are under a DevicePluginSetup: GPUs physical
// GPUs, each device ReplicaMilli milli-GPU of one (0: a device is a whole
// GPU), a replica (Replicas true: time-slicing or MPS) or one MIG instance
// of MIGProfile (the single strategy). The simulator's snapshot reader
// and gpuplane-scheduler both read a node by it, so that a pod of
// nvidia.com/gpu: k holds on such a node what the kubelet gives it: k
// replicas or k instances, never k GPUs.
type PluginDevices struct {
	GPUs         int64
	ReplicaMilli int64
	Replicas     bool
	MIGProfile   string
}

// Devices returns what the node's devices of nvidia.com/gpu are, for
// devices of them on GPUs of catalog model model:
//   - single MIG strategy, a profile the catalog lays out on model (all
//     GPUs in that profile, per instances each: mig-parted's
//     all-<profile> layouts): ceil(devices/per) GPUs, each device the
//     profile's share (MIGShareMilli);
//   - Replicas > 1 (time-slicing or MPS): devices/Replicas GPUs (the
//     plugin advertises each GPU Replicas times; the caller checks the
//     division), each device ReplicaMilli of one;
//   - otherwise one device per GPU.
//
// ok is false under the single strategy with a profile the catalog does
// not lay out on model (or "-MIG-INVALID"): the caller reads the devices
// as whole GPUs and says so.
func (s DevicePluginSetup) Devices(model string, devices int64) (d PluginDevices, ok bool) {
	switch {
	case s.MIGProfile != "":
		per, known := MIGFullCount(model, s.MIGProfile)
		if !known || per <= 0 {
			return PluginDevices{GPUs: devices}, false
		}
		return PluginDevices{
			GPUs:         (devices + int64(per) - 1) / int64(per),
			ReplicaMilli: MIGShareMilli(profileSlices(s.MIGProfile)),
			MIGProfile:   s.MIGProfile,
		}, true
	case s.MIGInvalid:
		return PluginDevices{GPUs: devices}, false
	case s.Replicas > 1:
		return PluginDevices{GPUs: devices / int64(s.Replicas), ReplicaMilli: s.ReplicaMilli(), Replicas: true}, true
	}
	return PluginDevices{GPUs: devices}, true
}

// profileSlices is the compute slices of a MIG profile name ("3g.40gb":
// 3), 0 for a name of more slices than a GPU has.
func profileSlices(profile string) int {
	if c := apidra.MIGSlices(profile); c <= apidra.MIGComputeSlices {
		return c
	}
	return 0
}
