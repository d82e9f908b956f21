// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi/gpucditest"
)

// TestPrepareDriverSpec prepares, on a fake driver tree of the mock's
// driver version (535.104.05), a whole GPU and a MIG device made on
// demand in one claim, and a 300-milliGPU share of the whole GPU in
// another, with the driver's edits from nvcdi (gpucdi.DriverEdits): every
// CDI ID the kubelet is given resolves in the CDI library's cache (as
// containerd and CRI-O resolve it) to a device with its GPU node under
// the fake dev root, the fake libcuda.so.535.104.05 mounted and
// NVIDIA's create-symlinks and update-ldcache hooks; the share's claim
// device carries GPUPLANE_GPU_SHARE=300.
func TestPrepareDriverSpec(t *testing.T) {
	b, n := mockNode(t, twoA100)
	fake := gpucditest.New(t, n.DriverVersion)
	edits, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: fake.Root, Version: n.DriverVersion})
	if err != nil {
		t.Fatal(err)
	}
	k := newKubelet(t)
	k.dirs.Shares, k.dirs.DriverEdits, k.dirs.DevRoot = true, edits, gpucdi.DevRoot(fake.Root)
	k.start(b)
	k.slices(2)
	whole := k.claim("c", "gpu-1", "gpu-0-mig-1g10gb-19-2")
	ids, errStr := k.prepare(whole)
	if errStr != "" || len(ids) != 2 {
		t.Fatalf("prepare: %v %q", ids, errStr)
	}
	share := k.claim("s", "gpu-1")
	sid := types.UID("share-0")
	r := &share.Status.Allocation.Devices.Results[0]
	r.ShareID = &sid
	r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("300")}
	if _, err := k.client.ResourceV1().ResourceClaims("default").UpdateStatus(context.Background(), share, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	shareIDs, errStr := k.prepare(share)
	if errStr != "" || len(shareIDs) != 2 {
		t.Fatalf("prepare the share: %v %q", shareIDs, errStr)
	}
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(k.dirs.CDIDir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if errs := cache.GetErrors(); len(errs) != 0 {
		t.Fatalf("CDI cache: %v", errs)
	}
	wantNode := map[string]string{ids[0]: "/dev/nvidia1", ids[1]: "/dev/nvidia0", shareIDs[0]: "/dev/nvidia1"}
	for id, node := range wantNode {
		d := cache.GetDevice(id)
		if d == nil {
			t.Fatalf("%s: not in the CDI cache", id)
		}
		e := d.ContainerEdits
		if !slices.ContainsFunc(e.DeviceNodes, func(dn *cdispec.DeviceNode) bool {
			return dn.Path == node && dn.HostPath == filepath.Join(fake.Root, node)
		}) {
			t.Errorf("%s: nodes %v, want %s from the fake dev root", id, e.DeviceNodes, node)
		}
		if !slices.ContainsFunc(e.Mounts, func(m *cdispec.Mount) bool { return m.HostPath == fake.Lib("libcuda.so.1") }) {
			t.Errorf("%s: no mount of %s", id, fake.Lib("libcuda.so.1"))
		}
		var hooks []string
		for _, h := range e.Hooks {
			hooks = append(hooks, h.Args[1])
		}
		if !slices.Contains(hooks, "create-symlinks") || !slices.Contains(hooks, "update-ldcache") {
			t.Errorf("%s: hooks %v", id, hooks)
		}
	}
	if d := cache.GetDevice(shareIDs[1]); d == nil || strings.Join(d.ContainerEdits.Env, ",") != "GPUPLANE_GPU_SHARE=300" {
		t.Errorf("%s: %v, want GPUPLANE_GPU_SHARE=300", shareIDs[1], d)
	}
	k.unprepare(share)
	k.unprepare(whole)
}
