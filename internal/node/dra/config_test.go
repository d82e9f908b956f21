// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

const (
	gpuTimeSlicing = `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Long"}}}`
	gpuMPS         = `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50,"defaultPinnedDeviceMemoryLimit":"10Gi"}}}`
	migMPS         = `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"MPS"}}`
)

// TestDecodeConfig: NVIDIA's strict decoding and validation of GpuConfig
// and MigDeviceConfig (api/nvidia.com/resource/v1beta1), each error
// naming the field.
func TestDecodeConfig(t *testing.T) {
	for _, tc := range []struct {
		raw, err string
	}{
		{gpuTimeSlicing, ""},
		{gpuMPS, ""},
		{migMPS, ""},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig"}`, ""},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}}`, ""},
		{``, "empty"},
		{`{"apiVersion":`, "not a resource.nvidia.com/v1beta1 configuration: unexpected end of JSON input"},
		{`{"apiVersion":"resource.nvidia.com/v1","kind":"GpuConfig"}`, `apiVersion "resource.nvidia.com/v1", want resource.nvidia.com/v1beta1`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"TpuConfig"}`, `kind "TpuConfig" is not supported (supported: GpuConfig, MigDeviceConfig)`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1"}`, `kind "" is not supported (supported: GpuConfig, MigDeviceConfig)`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfg":{}}}`, `unknown field "sharing.mpsConfg"`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","kind":"GpuConfig"}`, `duplicate field "kind"`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{}}}`, `unknown field "sharing.timeSlicingConfig" (kind MigDeviceConfig)`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"Exclusive"}}`, `sharing.strategy: unknown GPU sharing strategy "Exclusive" (supported: TimeSlicing, MPS)`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Huge"}}}`, `sharing.timeSlicingConfig.interval: unknown time-slice interval "Huge" (supported: Default, Short, Medium, Long)`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","mpsConfig":{}}}`, `sharing.mpsConfig: not allowed with strategy TimeSlicing`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","timeSlicingConfig":{}}}`, `sharing.timeSlicingConfig: not allowed with strategy MPS`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":101}}}`, `sharing.mpsConfig.defaultActiveThreadPercentage: 101 is not within 0..100`},
		{`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultPerDevicePinnedMemoryLimit":{"0":"-1Gi"}}}}`, `sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit[0]: -1Gi is negative`},
	} {
		dc, err := decodeConfig([]byte(tc.raw))
		if err == nil {
			err = dc.validate()
		}
		if got := errString(err); got != tc.err {
			t.Errorf("%s:\n got %q\nwant %q", tc.raw, got, tc.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// withConfig gives claim c's allocation the opaque configurations, as
// the scheduler copies them from the claim and its class.
func (k *kubelet) withConfig(c *resourceapi.ResourceClaim, configs ...resourceapi.DeviceAllocationConfiguration) *resourceapi.ResourceClaim {
	k.t.Helper()
	c.Status.Allocation.Devices.Config = configs
	c, err := k.client.ResourceV1().ResourceClaims("default").UpdateStatus(context.Background(), c, metav1.UpdateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return c
}

func opaque(source resourceapi.AllocationConfigSource, driver, raw string, requests ...string) resourceapi.DeviceAllocationConfiguration {
	return resourceapi.DeviceAllocationConfiguration{Source: source, Requests: requests, DeviceConfiguration: resourceapi.DeviceConfiguration{
		Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: driver, Parameters: runtime.RawExtension{Raw: []byte(raw)}},
	}}
}

// TestPrepareConfig: a claim whose configuration for gpu.nvidia.com is of
// an unknown kind, malformed, or of the wrong device type is refused,
// naming the claim and the field, and nothing is prepared (no MIG device
// created, the checkpoint unchanged); another driver's configuration is
// skipped; known ones are accepted and recorded, the claim's over the
// class's, a request's over one for every request.
func TestPrepareConfig(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	fakeMPS(t)
	k.start(b)
	cpPath := filepath.Join(k.dirs.PluginDir, checkpointFile)
	// A claim prepared before: the checkpoint has content to keep.
	if _, errStr := k.prepare(k.claim("before", "gpu-0-mig-1g10gb-19-6")); errStr != "" {
		t.Fatal(errStr)
	}
	before, err := os.ReadFile(cpPath)
	if err != nil {
		t.Fatal(err)
	}
	mig := "gpu-0-mig-1g10gb-19-0"
	for _, tc := range []struct {
		name    string
		configs []resourceapi.DeviceAllocationConfiguration
		err     string
	}{
		// Another driver's configuration is skipped; config[1] is ours.
		{"unknown-kind", []resourceapi.DeviceAllocationConfiguration{
			opaque(resourceapi.AllocationConfigSourceClaim, "other.example.com", `{"kind":"NotOurs","x":1}`),
			opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"VfioDeviceConfig"}`)},
			`claim default/unknown-kind: status.allocation.devices.config[1].opaque.parameters: kind "VfioDeviceConfig" is not supported (supported: GpuConfig, MigDeviceConfig)`},
		{"malformed", []resourceapi.DeviceAllocationConfiguration{
			opaque(resourceapi.AllocationConfigSourceClass, apidra.DriverName, `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"MPS","mpsConfig":{"multiUser":"yes"}}}`)},
			`claim default/malformed: status.allocation.devices.config[0].opaque.parameters: not a resource.nvidia.com/v1beta1 configuration: json: cannot unmarshal string into Go struct field MPSConfig.sharing.mpsConfig.multiUser of type bool`},
		{"wrong-type", []resourceapi.DeviceAllocationConfiguration{opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, gpuMPS, "r0")},
			`claim default/wrong-type: status.allocation.devices.config[0]: cannot apply GpuConfig to device gpu-0-mig-1g10gb-19-0 of request r0 (a MIG device)`},
		{"invalid", []resourceapi.DeviceAllocationConfiguration{opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":-1}}}`)},
			`claim default/invalid: status.allocation.devices.config[0].opaque.parameters: sharing.mpsConfig.defaultActiveThreadPercentage: -1 is not within 0..100`},
	} {
		c := k.withConfig(k.claim(tc.name, mig), tc.configs...)
		if _, errStr := k.prepare(c); errStr != tc.err {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, errStr, tc.err)
		}
		if live := liveMIG(t, b, n.GPUs[0].UUID); len(live) != 1 || live[0] != "1g.10gb@6" {
			t.Errorf("%s: MIG devices created: %v", tc.name, live)
		}
		if after, _ := os.ReadFile(cpPath); !bytes.Equal(before, after) {
			t.Errorf("%s: checkpoint changed:\n%s\nwas\n%s", tc.name, after, before)
		}
	}

	// Accepted: the class says time-slicing for every GPU; the claim says
	// MPS for request r1 (gpu-1) and MPS for MIG devices. gpu-1 gets the
	// claim's r1 config, the MIG device the claim's MigDeviceConfig.
	c := k.withConfig(k.claim("ok", mig, "gpu-1"),
		opaque(resourceapi.AllocationConfigSourceClass, apidra.DriverName, gpuTimeSlicing),
		opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, gpuMPS, "r1"),
		opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, migMPS))
	if _, errStr := k.prepare(c); errStr != "" {
		t.Fatal(errStr)
	}
	cp, err := loadCheckpoint(cpPath)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, pd := range cp.Claims[c.UID].Devices {
		if pd.Config != nil && pd.Config.Sharing != nil {
			got[pd.Device] = pd.Config.Kind + "/" + pd.Config.Sharing.Strategy
		}
	}
	if got[mig] != "MigDeviceConfig/MPS" || got["gpu-1"] != "GpuConfig/MPS" || len(got) != 2 {
		t.Errorf("recorded configs %v, want %s: MigDeviceConfig/MPS, gpu-1: GpuConfig/MPS", got, mig)
	}
	// Without the claim's r1 config the class's applies.
	c2 := k.withConfig(k.claim("class", "gpu-1"), opaque(resourceapi.AllocationConfigSourceClass, apidra.DriverName, gpuTimeSlicing))
	k.unprepare(c)
	if _, errStr := k.prepare(c2); errStr != "" {
		t.Fatal(errStr)
	}
	cp, _ = loadCheckpoint(cpPath)
	if pd := cp.Claims[c2.UID].Devices[0]; pd.Config == nil || pd.Config.Sharing.Strategy != TimeSlicingStrategy || *pd.Config.Sharing.TimeSlicingConfig.Interval != "Long" {
		t.Errorf("recorded config %+v, want the class's TimeSlicing, interval Long", pd.Config)
	}
}

// TestNamesRequest: which results a configuration's requests name, by
// resource/v1's rule (k8s.io/api v0.37.2 types.go,
// DeviceClaimConfiguration.Requests: "References to subrequests must
// include the name of the main request and may include the subrequest
// using the format <main request>[/<subrequest>]. If just the main
// request is given, the configuration applies to all subrequests.").
func TestNamesRequest(t *testing.T) {
	for _, c := range []struct {
		requests []string
		request  string
		want     bool
	}{
		{[]string{"gpu"}, "gpu", true},
		{[]string{"gpu"}, "gpu/mig-1g", true},
		{[]string{"gpu/mig-1g"}, "gpu/mig-1g", true},
		{[]string{"gpu/mig-1g"}, "gpu/whole", false},
		{[]string{"gpu/mig-1g"}, "gpu", false},
		{[]string{"gpu"}, "gpu2", false},
		{[]string{"gpu"}, "gpus/x", false},
		{nil, "gpu", false},
	} {
		if got := namesRequest(c.requests, c.request); got != c.want {
			t.Errorf("requests %q, result %q: %v, want %v", c.requests, c.request, got, c.want)
		}
	}
}
