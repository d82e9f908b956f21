// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package nvml

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/dra"
)

// TestDRAOverNVML: the DRA plugin over the nvml backend publishes the MIG
// placements of a MIG-enabled GPU without instances (GPU 2, minor 2, an
// A100-40GB: 3g.20gb is NVML's profile ID 9) and prepares one by creating
// it through NVML: the CDI device is the new MIG device's UUID; unprepare
// destroys it.
func TestDRAOverNVML(t *testing.T) {
	m := newMachine(t)
	d2 := m.Devices[2].(*server.Device)
	d2.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	failCI := false
	nvmlRules(d2, &failCI)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	d, err := dra.New(ctx, b, dra.Config{NodeName: "node-a", PluginDir: filepath.Join(dir, "plugin"), PCIeRoot: func(string) (string, error) { return "", os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	const dev = "gpu-2-mig-3g20gb-9-4"
	found := false
	for _, s := range d.DriverResources().Pools["node-a"].Slices {
		for _, x := range s.Devices {
			found = found || x.Name == dev
		}
	}
	if !found {
		t.Fatalf("device %s not published", dev)
	}
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c", UID: "uid-c"}}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "r0", Driver: apidra.DriverName, Pool: "node-a", Device: dev},
	}}}
	res, err := d.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{c})
	if err != nil || res[c.UID].Err != nil {
		t.Fatalf("prepare: %v %v", err, res[c.UID].Err)
	}
	if ids := res[c.UID].Devices[0].CDIDeviceIDs; len(ids) != 1 || ids[0] != "nvidia.com/gpu=MIG-00000002-0-0" {
		t.Errorf("CDI devices %v, want nvidia.com/gpu=MIG-00000002-0-0", ids)
	}
	if got := liveMIG(t, b, d2.UUID); got != "MIG-00000002-0-0 3g.20gb gi0 ci0 19968MiB 42SM 3g.20gb@4+4" {
		t.Errorf("live after prepare: %s", got)
	}
	un, err := d.UnprepareResourceClaims(ctx, []kubeletplugin.NamespacedObject{{UID: c.UID}})
	if err != nil || un[c.UID] != nil {
		t.Fatalf("unprepare: %v %v", err, un[c.UID])
	}
	if len(d2.GpuInstances) != 0 {
		t.Errorf("%d GPU instances left after unprepare", len(d2.GpuInstances))
	}
}

// MIGOffer reads what the GPU lists: on GPU 2 (an A100-40GB in MIG mode)
// go-nvml's A100 placements (mock/gpus/a100.go, NVIDIA's MIG user guide's
// A100 table), which are the internal/gpu table's, so the plugin
// publishes all 25 of its placements. When the GPU lists the 3-slice
// profile at slot 0 only, the placement at slot 4 is not published (24).
// A GPU without MIG mode offers nothing.
func TestMIGOffer(t *testing.T) {
	m := newMachine(t)
	d2 := m.Devices[2].(*server.Device)
	d2.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	off, err := b.MIGOffer(ctx, d2.UUID)
	if err != nil {
		t.Fatal(err)
	}
	want := device.MIGOffer{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: {0, 1, 2, 3, 4, 5, 6}, nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: {0, 1, 2, 3, 4, 5, 6},
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: {0, 2, 4, 6}, nvml.GPU_INSTANCE_PROFILE_2_SLICE: {0, 2, 4},
		nvml.GPU_INSTANCE_PROFILE_3_SLICE: {0, 4}, nvml.GPU_INSTANCE_PROFILE_4_SLICE: {0}, nvml.GPU_INSTANCE_PROFILE_7_SLICE: {0},
	}
	if !reflect.DeepEqual(off, want) {
		t.Errorf("offer %v, want %v", off, want)
	}
	if off, err := b.MIGOffer(ctx, m.Devices[3].(*server.Device).UUID); off != nil || err != nil {
		t.Errorf("GPU 3, MIG mode off: %v %v", off, err)
	}

	gpu2 := func() []string {
		t.Helper()
		d, err := dra.New(ctx, b, dra.Config{NodeName: "node-a", PluginDir: t.TempDir(), PCIeRoot: func(string) (string, error) { return "", os.ErrNotExist }})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range d.DriverResources().Pools["node-a"].Slices {
			for _, x := range s.Devices {
				if strings.HasPrefix(x.Name, "gpu-2-") {
					out = append(out, x.Name)
				}
			}
		}
		return out
	}
	if got := gpu2(); len(got) != 25 {
		t.Errorf("%d GPU 2 devices published, want 25", len(got))
	}
	all := d2.GetGpuInstancePossiblePlacementsFunc
	d2.GetGpuInstancePossiblePlacementsFunc = func(info *nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstancePlacement, nvml.Return) {
		if info.Id == nvml.GPU_INSTANCE_PROFILE_3_SLICE {
			return []nvml.GpuInstancePlacement{{Start: 0, Size: 4}}, nvml.SUCCESS
		}
		return all(info)
	}
	got := gpu2()
	if len(got) != 24 || slices.Contains(got, "gpu-2-mig-3g20gb-9-4") || !slices.Contains(got, "gpu-2-mig-3g20gb-9-0") {
		t.Errorf("GPU 2 devices with 3g.20gb offered at 0 only: %d %v", len(got), got)
	}
}
