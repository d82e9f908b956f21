// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package v1

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/resource"
)

// Sharing strategies, as NVIDIA's plugin and gpu-feature-discovery name
// them (api/config/v1/sharing.go; the nvidia.com/gpu.sharing-strategy
// label).
const (
	SharingNone        = "none"
	SharingTimeSlicing = "time-slicing"
	SharingMPS         = "mps"
)

// DefaultMPSRoot is the host directory of the MPS control daemons' pipe,
// log and shm directories when flags.mpsRoot is not set: NVIDIA's chart's
// (k8s-device-plugin deployments/helm, mps.root).
const DefaultMPSRoot = "/run/nvidia/mps"

// MaxMPSReplicas is the most replicas of one GPU under MPS: each replica's
// client gets 100/replicas percent of the SMs
// (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), which must be at least 1.
const MaxMPSReplicas = 100

// MPS is NVIDIA's sharing.mps (device plugin 0.15 and later): each GPU of
// a resource is shared by Replicas clients of one MPS server, each client
// limited to 100/Replicas percent of the SMs and 1/Replicas of the
// memory. Only whole GPUs (nvidia.com/gpu) are shared, as in NVIDIA's
// plugin.
type MPS struct {
	// RenameByDefault renames each shared resource to <name>.shared.
	RenameByDefault bool `json:"renameByDefault,omitempty"`
	// FailRequestsGreaterThanOne refuses Allocate requests for more than
	// one replica; nil (absent) means true, NVIDIA's default for MPS
	// (api/config/v1/config.go, "the historical MPS behavior").
	FailRequestsGreaterThanOne *bool `json:"failRequestsGreaterThanOne,omitempty"`
	// Resources lists the shared resources.
	Resources []SharedResource `json:"resources,omitempty"`
}

// SharingStrategy returns the active sharing strategy: SharingMPS when
// sharing.mps is set, SharingTimeSlicing when sharing.timeSlicing is,
// else SharingNone.
func (c *Config) SharingStrategy() string {
	switch {
	case c.Sharing.MPS != nil:
		return SharingMPS
	case len(c.Sharing.TimeSlicing.Resources) > 0:
		return SharingTimeSlicing
	}
	return SharingNone
}

// SharedResources returns the active strategy's resources and the
// section's path (sharing.mps or sharing.timeSlicing).
func (c *Config) SharedResources() ([]SharedResource, string) {
	if c.Sharing.MPS != nil {
		return c.Sharing.MPS.Resources, "sharing.mps"
	}
	return c.Sharing.TimeSlicing.Resources, "sharing.timeSlicing"
}

// RenameByDefault reports the active strategy's renameByDefault.
func (c *Config) RenameByDefault() bool {
	if c.Sharing.MPS != nil {
		return c.Sharing.MPS.RenameByDefault
	}
	return c.Sharing.TimeSlicing.RenameByDefault
}

// FailRequestsGreaterThanOne reports the active strategy's
// failRequestsGreaterThanOne (MPS: true unless set false).
func (c *Config) FailRequestsGreaterThanOne() bool {
	if m := c.Sharing.MPS; m != nil {
		return m.FailRequestsGreaterThanOne == nil || *m.FailRequestsGreaterThanOne
	}
	return c.Sharing.TimeSlicing.FailRequestsGreaterThanOne
}

// MPSRoot is flags.mpsRoot, else DefaultMPSRoot.
func (c *Config) MPSRoot() string {
	if c.Flags.MPSRoot != "" {
		return c.Flags.MPSRoot
	}
	return DefaultMPSRoot
}

// completeMPS validates sharing.mps as NVIDIA's plugin does, refusing at
// start what NVIDIA's refuses at its start (cmd/nvidia-device-plugin
// main.go, internal/plugin/mps.go): MIG devices and migStrategy mixed.
// Beyond NVIDIA's, it refuses sharing.mps with sharing.timeSlicing (NVIDIA
// silently serves MPS alone) or with gpuplane.milliGPU, and more than
// MaxMPSReplicas replicas.
func (c *Config) completeMPS() error {
	m := c.Sharing.MPS
	if m == nil {
		return nil
	}
	if len(m.Resources) == 0 {
		return fmt.Errorf("sharing.mps.resources: no resources specified")
	}
	if len(c.Sharing.TimeSlicing.Resources) > 0 {
		return fmt.Errorf("sharing.mps: cannot be combined with sharing.timeSlicing: one sharing strategy at a time (NVIDIA's plugin would serve sharing.mps alone)")
	}
	if c.Flags.MIGStrategy == MIGStrategyMixed {
		return fmt.Errorf("sharing.mps: migStrategy mixed is not supported with MPS, as in NVIDIA's plugin")
	}
	if c.Gpuplane.MilliGPU {
		return fmt.Errorf("gpuplane.milliGPU: cannot be combined with sharing.mps: both would share the same GPUs under two counts")
	}
	for i, r := range m.Resources {
		f := fmt.Sprintf("sharing.mps.resources[%d]", i)
		if r.Name != resource.GPU {
			return fmt.Errorf("%s.name: %q; MPS shares whole GPUs only (nvidia.com/gpu), as NVIDIA's plugin: MIG devices cannot be shared with MPS", f, r.Name)
		}
		if i > 0 {
			return fmt.Errorf("%s.name: %q is listed twice", f, r.Name)
		}
		if r.Replicas < 1 || r.Replicas > MaxMPSReplicas {
			return fmt.Errorf("%s.replicas: %d is out of range (1..%d: each replica gets 100/replicas percent of the GPU's SMs, at least 1)", f, r.Replicas, MaxMPSReplicas)
		}
	}
	return nil
}
