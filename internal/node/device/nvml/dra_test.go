// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package nvml

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

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
		{Request: "r0", Driver: dra.DriverName, Pool: "node-a", Device: dev},
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
