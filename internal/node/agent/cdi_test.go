// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi/gpucditest"
)

// TestDevicePluginCDI: on the device plugin under cdi-cri with --cdi-dir
// and a fake driver root of the profile's driver (550.54.15), the agent
// writes the spec of every device it may name: the dgx-a100-80gb-mig
// profile's 4 × 7 + 2 × 4 = 36 MIG devices and its 2 GPUs without MIG,
// 38, all valid in the CDI library's cache; each has its GPU's node
// (a MIG device its parent's) under the fake dev root and the fake
// libcuda mounted. Under envvar alone, or without --cdi-dir, none. The
// remove function it returns (run as the agent exits) leaves the
// directory as it found it: empty but for a file of someone else's.
func TestDevicePluginCDI(t *testing.T) {
	b, err := mock.Open("dgx-a100-80gb-mig", mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fake := gpucditest.New(t, n.DriverVersion)
	cfg := func(strategy string) *configv1.Config {
		c, err := configv1.ParseConfig("c.yaml", []byte("version: v1\nflags: {plugin: {deviceListStrategy: ["+strategy+"]}}"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	o := DefaultOptions()
	o.Backend, o.DriverRoot = "mock", fake.Root
	for _, c := range []struct {
		strategy, dir string
	}{{"envvar", t.TempDir()}, {"cdi-cri", ""}} {
		o.DRA.CDIDir = c.dir
		if _, err := writeDevicePluginCDI(o, cfg(c.strategy), n); err != nil {
			t.Fatal(err)
		}
		if got, _ := filepath.Glob(filepath.Join(c.dir, "*")); c.dir != "" && len(got) != 0 {
			t.Errorf("%s: specs %v", c.strategy, got)
		}
	}
	o.DRA.CDIDir = t.TempDir()
	// NVIDIA's toolkit's spec, which the agent must leave alone.
	other := filepath.Join(o.DRA.CDIDir, "nvidia.yaml")
	if err := os.WriteFile(other, []byte("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices: [{name: all, containerEdits: {deviceNodes: [{path: /dev/nvidiactl}]}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	remove, err := writeDevicePluginCDI(o, cfg("cdi-cri"), n)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := remove(); err != nil {
			t.Fatal(err)
		}
		if got, _ := filepath.Glob(filepath.Join(o.DRA.CDIDir, "*")); !slices.Equal(got, []string{other}) {
			t.Errorf("after remove: %v, want %s alone", got, other)
		}
	}()
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(o.DRA.CDIDir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if errs := cache.GetErrors(); len(errs) != 0 {
		t.Fatalf("CDI cache: %v", errs)
	}
	if got := len(cache.ListDevices()); got != 38+1 {
		t.Errorf("%d CDI devices, want 38 and the toolkit's all", got)
	}
	for i, g := range n.GPUs {
		uuids := []string{g.UUID}
		if g.MIGEnabled {
			uuids = uuids[:0]
			for _, m := range g.MIG {
				uuids = append(uuids, m.UUID)
			}
		}
		node := fmt.Sprintf("/dev/nvidia%d", i)
		for _, u := range uuids {
			d := cache.GetDevice(gpucdi.DeviceID(u))
			if d == nil {
				t.Fatalf("GPU %d: %s not in the cache", i, u)
			}
			e := d.ContainerEdits
			if e.DeviceNodes[0].Path != node || e.DeviceNodes[0].HostPath != filepath.Join(fake.Root, node) {
				t.Errorf("%s: first node %+v, want %s under %s", u, e.DeviceNodes[0], node, fake.Root)
			}
			if !slices.ContainsFunc(e.Mounts, func(m *cdispec.Mount) bool { return m.HostPath == fake.Lib("libcuda.so.1") }) {
				t.Errorf("%s: no mount of the fake libcuda", u)
			}
		}
	}
}

// TestDriverEditsRoot: a --driver-root given without the driver fails
// the start, naming the flag; the default root (/ on nvml) without it is
// no error (the specs then have the device nodes alone); the mock
// backend has no driver root unless one is given.
func TestDriverEditsRoot(t *testing.T) {
	o := DefaultOptions()
	o.DRA.CDIDir, o.DriverRoot = t.TempDir(), t.TempDir()
	if _, err := driverEdits(o, mockNodeVersion("550.54.15")); err == nil {
		t.Errorf("--driver-root %s without a driver: no error", o.DriverRoot)
	}
	o.DriverRoot = ""
	if _, err := driverEdits(o, mockNodeVersion("0.0.1")); err != nil {
		t.Errorf("default driver root: %v", err)
	}
	o.Backend = "mock"
	if e, err := driverEdits(o, mockNodeVersion("550.54.15")); e != nil || err != nil {
		t.Errorf("mock backend without --driver-root: %v, %v", e, err)
	}
}

func mockNodeVersion(v string) device.Node { return device.Node{DriverVersion: v} }

// TestContainerDriverRoot: --driver-root /run/nvidia/driver seen at
// --container-driver-root (the fake tree): the specs name the host's
// paths, the fake libcuda at /run/nvidia/driver<lib dir>, and the
// device nodes under /run/nvidia/driver/dev (the fake tree has a dev
// directory).
func TestContainerDriverRoot(t *testing.T) {
	const host = "/run/nvidia/driver"
	fake := gpucditest.New(t, "550.54.15")
	o := DefaultOptions()
	o.Backend, o.DriverRoot, o.ContainerDriverRoot, o.DRA.CDIDir = "mock", host, fake.Root, t.TempDir()
	e, err := driverEdits(o, mockNodeVersion("550.54.15"))
	if err != nil {
		t.Fatal(err)
	}
	lib := host + gpucditest.LibDir + "/libcuda.so.550.54.15"
	if !slices.ContainsFunc(e.Mounts, func(m *cdispec.Mount) bool { return m.HostPath == lib }) {
		t.Errorf("mounts %v: want %s", e.Mounts, lib)
	}
	if got := o.driverConfig("").HostDevRoot(); got != host {
		t.Errorf("device nodes' root %s, want %s", got, host)
	}
}
