// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsjson "sigs.k8s.io/json"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// The opaque device configuration of driver gpu.nvidia.com, as NVIDIA's
// driver decodes it (sigs.k8s.io/dra-driver-nvidia-gpu,
// api/nvidia.com/resource/v1beta1: api.go, gpuconfig.go, migconfig.go,
// sharing.go, validate.go; cmd/gpu-kubelet-plugin/device_state.go:
// GetOpaqueDeviceConfigs, getConfigResultsMap): strict JSON of apiVersion
// resource.nvidia.com/v1beta1, kind GpuConfig (whole GPUs) or
// MigDeviceConfig (MIG devices).
const (
	ConfigAPIVersion     = "resource.nvidia.com/v1beta1"
	GpuConfigKind        = "GpuConfig"
	MigDeviceConfigKind  = "MigDeviceConfig"
	TimeSlicingStrategy  = "TimeSlicing"
	MPSStrategy          = "MPS"
	defaultTimeSlice     = "Default"
	maxThreadPercentage  = 100
	configParametersPath = "opaque.parameters"
)

// timeSlices are the time-slice intervals NVIDIA's API knows.
var timeSlices = []string{defaultTimeSlice, "Short", "Medium", "Long"}

// DeviceConfig is an opaque configuration of a GPU or MIG device: NVIDIA's
// GpuConfig and MigDeviceConfig (a MigDeviceConfig has no
// timeSlicingConfig).
type DeviceConfig struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Sharing    *Sharing `json:"sharing,omitempty"`
}

// Sharing is a device's sharing strategy and its settings.
type Sharing struct {
	// Strategy is TimeSlicing or MPS.
	Strategy          string             `json:"strategy"`
	TimeSlicingConfig *TimeSlicingConfig `json:"timeSlicingConfig,omitempty"`
	MPSConfig         *MPSConfig         `json:"mpsConfig,omitempty"`
}

// TimeSlicingConfig is the time slice of a time-sliced GPU.
type TimeSlicingConfig struct {
	// Interval is Default, Short, Medium or Long.
	Interval *string `json:"interval,omitempty"`
}

// MPSConfig is the settings of the MPS control daemon of a device.
type MPSConfig struct {
	// DefaultActiveThreadPercentage is the share of the SMs each client
	// may use, in percent (0..100).
	DefaultActiveThreadPercentage *int `json:"defaultActiveThreadPercentage,omitempty"`
	// DefaultPinnedDeviceMemoryLimit and DefaultPerDevicePinnedMemoryLimit
	// (by device UUID or index) limit each client's device memory, as
	// Kubernetes quantities.
	DefaultPinnedDeviceMemoryLimit    *resource.Quantity           `json:"defaultPinnedDeviceMemoryLimit,omitempty"`
	DefaultPerDevicePinnedMemoryLimit map[string]resource.Quantity `json:"defaultPerDevicePinnedMemoryLimit,omitempty"`
	MultiUser                         *bool                        `json:"multiUser,omitempty"`
}

// opaqueConfig is one decoded configuration of this driver and the
// requests it applies to (none: every request).
type opaqueConfig struct {
	requests []string
	config   *DeviceConfig
	field    string // e.g. status.allocation.devices.config[1]
}

// decodeConfigs decodes the claim's configurations of this driver, the
// class's before the claim's (lowest precedence first), as NVIDIA's
// GetOpaqueDeviceConfigs: another driver's are skipped, a malformed one or
// one of an unknown kind is an error naming its field.
func decodeConfigs(configs []resourceapi.DeviceAllocationConfiguration) ([]opaqueConfig, error) {
	var class, claim []opaqueConfig
	for i, c := range configs {
		field := fmt.Sprintf("status.allocation.devices.config[%d]", i)
		if c.Opaque == nil {
			return nil, fmt.Errorf("%s: only opaque parameters are supported by driver %s", field, apidra.DriverName)
		}
		if c.Opaque.Driver != apidra.DriverName {
			continue
		}
		dc, err := decodeConfig(c.Opaque.Parameters.Raw)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", field, configParametersPath, err)
		}
		oc := opaqueConfig{requests: c.Requests, config: dc, field: field}
		switch c.Source {
		case resourceapi.AllocationConfigSourceClass:
			class = append(class, oc)
		case resourceapi.AllocationConfigSourceClaim:
			claim = append(claim, oc)
		default:
			return nil, fmt.Errorf("%s.source: %q is neither %s nor %s", field, c.Source, resourceapi.AllocationConfigSourceClass, resourceapi.AllocationConfigSourceClaim)
		}
	}
	return append(class, claim...), nil
}

// decodeConfig decodes one configuration strictly: no unknown or duplicate
// field, the apiVersion and a known kind.
func decodeConfig(raw []byte) (*DeviceConfig, error) {
	if len(raw) == 0 {
		return nil, errors.New("empty")
	}
	var dc DeviceConfig
	strict, err := sigsjson.UnmarshalStrict(raw, &dc)
	if err != nil {
		return nil, fmt.Errorf("not a %s configuration: %w", ConfigAPIVersion, err)
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	switch {
	case dc.APIVersion != ConfigAPIVersion:
		return nil, fmt.Errorf("apiVersion %q, want %s", dc.APIVersion, ConfigAPIVersion)
	case dc.Kind != GpuConfigKind && dc.Kind != MigDeviceConfigKind:
		return nil, fmt.Errorf("kind %q is not supported (supported: %s, %s)", dc.Kind, GpuConfigKind, MigDeviceConfigKind)
	case dc.Kind == MigDeviceConfigKind && dc.Sharing != nil && dc.Sharing.TimeSlicingConfig != nil:
		// NVIDIA's MigDeviceSharing has no timeSlicingConfig: its strict
		// decoder refuses the field.
		return nil, fmt.Errorf("unknown field \"sharing.timeSlicingConfig\" (kind %s)", MigDeviceConfigKind)
	}
	return &dc, nil
}

// validate checks a configuration, with its implied defaults (NVIDIA's
// Normalize and Validate): a known strategy, a known time-slice interval
// (default Default), an active thread percentage within 0..100, memory
// limits not negative, and no settings of the other strategy.
func (dc *DeviceConfig) validate() error {
	s := dc.Sharing
	if s == nil {
		return nil
	}
	switch s.Strategy {
	case TimeSlicingStrategy:
		if s.MPSConfig != nil {
			return fmt.Errorf("sharing.mpsConfig: not allowed with strategy %s", TimeSlicingStrategy)
		}
		if s.TimeSlicingConfig != nil && s.TimeSlicingConfig.Interval != nil && !slices.Contains(timeSlices, *s.TimeSlicingConfig.Interval) {
			return fmt.Errorf("sharing.timeSlicingConfig.interval: unknown time-slice interval %q (supported: %s)", *s.TimeSlicingConfig.Interval, strings.Join(timeSlices, ", "))
		}
	case MPSStrategy:
		if s.TimeSlicingConfig != nil {
			return fmt.Errorf("sharing.timeSlicingConfig: not allowed with strategy %s", MPSStrategy)
		}
		return s.MPSConfig.validate()
	default:
		return fmt.Errorf("sharing.strategy: unknown GPU sharing strategy %q (supported: %s, %s)", s.Strategy, TimeSlicingStrategy, MPSStrategy)
	}
	return nil
}

func (m *MPSConfig) validate() error {
	if m == nil {
		return nil
	}
	if p := m.DefaultActiveThreadPercentage; p != nil && (*p < 0 || *p > maxThreadPercentage) {
		return fmt.Errorf("sharing.mpsConfig.defaultActiveThreadPercentage: %d is not within 0..%d", *p, maxThreadPercentage)
	}
	if q := m.DefaultPinnedDeviceMemoryLimit; q != nil && q.Sign() < 0 {
		return fmt.Errorf("sharing.mpsConfig.defaultPinnedDeviceMemoryLimit: %s is negative", q)
	}
	for dev, q := range m.DefaultPerDevicePinnedMemoryLimit {
		if q.Sign() < 0 {
			return fmt.Errorf("sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit[%s]: %s is negative", dev, &q)
		}
	}
	return nil
}

// configsFor returns the configuration that applies to each allocated
// device of this driver, by device name (none: the device's defaults,
// no sharing), as NVIDIA's getConfigResultsMap: the last configuration
// naming the device's request, or else the last naming no request whose
// kind matches the device (GpuConfig a whole GPU, MigDeviceConfig a MIG
// device). A configuration naming the request of a device of the other
// type, or one that does not validate, is an error naming its field.
func (d *Driver) configsFor(c *resourceapi.ResourceClaim) (map[string]*DeviceConfig, error) {
	configs, err := decodeConfigs(c.Status.Allocation.Devices.Config)
	if err != nil {
		return nil, err
	}
	out := map[string]*DeviceConfig{}
	for _, r := range c.Status.Allocation.Devices.Results {
		e, ok := d.res.Entries[r.Device]
		if r.Driver != apidra.DriverName || !ok {
			continue // another driver's, or an unknown device (refused later)
		}
		kind := GpuConfigKind
		if e.MIG != nil {
			kind = MigDeviceConfigKind
		}
		for _, oc := range slices.Backward(configs) {
			named := namesRequest(oc.requests, r.Request)
			if !named && (len(oc.requests) > 0 || oc.config.Kind != kind) {
				continue
			}
			if oc.config.Kind != kind {
				return nil, fmt.Errorf("%s: cannot apply %s to device %s of request %s (a %s)", oc.field, oc.config.Kind, r.Device, r.Request, deviceType(e))
			}
			if err := oc.config.validate(); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", oc.field, configParametersPath, err)
			}
			out[r.Device] = oc.config
			break
		}
	}
	return out, nil
}

// namesRequest reports whether a configuration's requests name the
// result's request: its name, or for a firstAvailable result
// ("<request>/<subrequest>") its main request's name alone, which "applies
// to all subrequests" (k8s.io/api v0.37.2 resource/v1 types.go,
// DeviceClaimConfiguration.Requests). NVIDIA's driver compares the names
// only (sigs.k8s.io/dra-driver-nvidia-gpu commit 95932046,
// cmd/gpu-kubelet-plugin/device_state.go getConfigResultsMap), so there a
// configuration naming "gpu" misses result "gpu/mig-1g".
func namesRequest(requests []string, request string) bool {
	main, _, _ := strings.Cut(request, "/")
	return slices.Contains(requests, request) || slices.Contains(requests, main)
}

func deviceType(e Entry) string {
	if e.MIG != nil {
		return "MIG device"
	}
	return "GPU"
}
