// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpucdi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpuplane/gpuplane/internal/node/gpucdi"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi/gpucditest"
)

const (
	version  = "580.159.04" // the H200's driver of issue 35
	hookPath = "/opt/nvidia/toolkit/nvidia-cdi-hook"
	libDir   = gpucditest.LibDir
)

// hookArgs returns the arguments of e's hooks named name (the argument
// after nvidia-cdi-hook's name), each hook's joined by spaces.
func hookArgs(t *testing.T, e *cdispec.ContainerEdits, name string) []string {
	t.Helper()
	var out []string
	for _, h := range e.Hooks {
		if h.Path != hookPath || h.HookName != "createContainer" {
			t.Errorf("hook %+v: want %s run at createContainer", h, hookPath)
		}
		if len(h.Args) >= 2 && h.Args[0] == "nvidia-cdi-hook" && h.Args[1] == name {
			out = append(out, strings.Join(h.Args[2:], " "))
		}
	}
	return out
}

// TestDriverEdits checks nvcdi's common edits on a fake driver tree
// against what nvidia-container-toolkit v1.20.2's discoverers find there
// (pkg/nvcdi/driver-nvml.go, internal/discover/{symlinks,ldconfig,
// compat_libs,ipc}.go): the libraries of the version at their host paths
// under the root, mounted at the same path without it; the binaries, the
// persistenced socket (read-write) and the GSP firmware; NVIDIA's void
// mount; the SONAME link
// libcuda.so.1 -> libcuda.so.<version> made by the create-symlinks hook
// (the fake tree has no libcuda.so link, so no second link); ldconfig
// over the library directory; no device node, since the fake ones are
// regular files.
// loadCache reads the specs in dir with the CDI library's cache, as
// containerd does, and fails the test on any spec error.
func loadCache(t *testing.T, dir string) *cdiapi.Cache {
	t.Helper()
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(dir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if errs := cache.GetErrors(); len(errs) != 0 {
		t.Fatalf("CDI cache errors: %v", errs)
	}
	return cache
}

func TestDriverEdits(t *testing.T) {
	d := gpucditest.New(t, version)
	e, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: d.Root, Version: version, HookPath: hookPath})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, so := range gpucditest.Libraries {
		want[libDir+"/"+strings.TrimSuffix(so, ".1")+"."+version] = true
	}
	for _, b := range gpucditest.Binaries {
		want["/usr/bin/"+b] = true
	}
	const socket, void = "/run/nvidia-persistenced/socket", "/var/run/nvidia-container-devices/void"
	want[socket] = true
	want["/lib/firmware/nvidia/"+version+"/gsp_ga10x.bin"] = true
	want[void] = true // /dev/null: NVIDIA's runtime in volume-mounts mode injects nothing more (pkg/nvcdi/wrapper.go)
	got := map[string]bool{}
	for _, m := range e.Mounts {
		got[m.ContainerPath] = true
		host := filepath.Join(d.Root, m.ContainerPath)
		if m.ContainerPath == void {
			host = "/dev/null"
		}
		if m.HostPath != host {
			t.Errorf("mount %s: host path %s, want %s", m.ContainerPath, m.HostPath, host)
		}
		// A socket is written to; the rest is read-only.
		if slices.Contains(m.Options, "ro") == (m.ContainerPath == socket) {
			t.Errorf("mount %s: options %v", m.ContainerPath, m.Options)
		}
	}
	for p := range want {
		if !got[p] {
			t.Errorf("no mount of %s; mounts: %v", p, got)
		}
	}
	for p := range got {
		if !want[p] {
			t.Errorf("unexpected mount %s", p)
		}
	}
	if len(e.DeviceNodes) != 0 {
		t.Errorf("device nodes %v: the fake nodes are regular files, nvcdi takes none", e.DeviceNodes)
	}
	checks := []struct{ hook, want string }{
		{"create-symlinks", "--link libcuda.so." + version + "::" + libDir + "/libcuda.so.1"},
		{"update-ldcache", "--folder " + libDir},
		{"disable-device-node-modification", ""},
		{"enable-cuda-compat", "--host-driver-version=" + version},
	}
	for _, c := range checks {
		args := hookArgs(t, e, c.hook)
		if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, c.want) }) {
			t.Errorf("hook %s: args %q, want one with %q", c.hook, args, c.want)
		}
	}
	if !slices.Contains(e.Env, "NVIDIA_CTK_LIBCUDA_DIR="+libDir) {
		t.Errorf("env %v: want NVIDIA_CTK_LIBCUDA_DIR=%s", e.Env, libDir)
	}
}

// TestDriverEditsVersion checks the driver version: from the libraries'
// names when none is given, and an error for a version whose libraries
// are not there (a driver upgraded under a running agent).
func TestDriverEditsVersion(t *testing.T) {
	d := gpucditest.New(t, version)
	e, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: d.Root, HookPath: hookPath})
	if err != nil {
		t.Fatal(err)
	}
	if args := hookArgs(t, e, "enable-cuda-compat"); len(args) != 1 || args[0] != "--host-driver-version="+version {
		t.Errorf("inferred version: enable-cuda-compat %q, want --host-driver-version=%s", args, version)
	}
	if _, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: d.Root, Version: "999.1.2"}); err == nil {
		t.Error("version 999.1.2 with no libraries of it: no error")
	}
	if _, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: t.TempDir()}); err == nil {
		t.Error("an empty driver root: no error")
	}
}

// TestSpecs writes the specs of a whole GPU, a MIG device and a GPU a
// share is given on the fake driver and reads them back through the CDI
// library's cache, as containerd and CRI-O do: every spec valid, no
// conflict, each device with its own nodes (host paths under the fake
// dev root), the driver's mounts and hooks, and NVIDIA_VISIBLE_DEVICES=void.
func TestSpecs(t *testing.T) {
	d := gpucditest.New(t, version)
	common, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: d.Root, Version: version, HookPath: hookPath})
	if err != nil {
		t.Fatal(err)
	}
	if got := gpucdi.DevRoot(d.Root); got != d.Root {
		t.Fatalf("DevRoot(%s) = %s: the fake tree has a dev directory", d.Root, got)
	}
	if got := gpucdi.DevRoot(t.TempDir()); got != "/" {
		t.Fatalf("DevRoot of a tree without dev = %s, want /", got)
	}
	dir := t.TempDir()
	devs := []gpucdi.Device{
		{UUID: "GPU-0a1b", Minor: 0},
		{UUID: "MIG-2c3d", Minor: 1, CapNodes: []string{"/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap2"}},
		{UUID: "GPU-4e5f", Minor: 1}, // the GPU a share's claim gets
	}
	for _, dev := range devs {
		dev.DevRoot, dev.Common = gpucdi.DevRoot(d.Root), common
		if err := gpucdi.WriteSpec(dir, dev); err != nil {
			t.Fatal(err)
		}
	}
	cache := loadCache(t, dir)
	for _, dev := range devs {
		cd := cache.GetDevice(gpucdi.DeviceID(dev.UUID))
		if cd == nil {
			t.Fatalf("%s: not in the CDI cache", gpucdi.DeviceID(dev.UUID))
		}
		e := cd.ContainerEdits
		wantNodes := append([]string{fmt.Sprintf("/dev/nvidia%d", dev.Minor)}, dev.CapNodes...)
		wantNodes = append(wantNodes, "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
		var gotNodes []string
		for _, n := range e.DeviceNodes {
			gotNodes = append(gotNodes, n.Path)
			if n.HostPath != filepath.Join(d.Root, n.Path) {
				t.Errorf("%s: node %s host path %s, want under %s", dev.UUID, n.Path, n.HostPath, d.Root)
			}
			if _, err := os.Stat(n.HostPath); err != nil {
				t.Errorf("%s: node %s: %v", dev.UUID, n.Path, err)
			}
		}
		if !slices.Equal(gotNodes, wantNodes) {
			t.Errorf("%s: nodes %v, want %v", dev.UUID, gotNodes, wantNodes)
		}
		if !slices.Contains(e.Env, "NVIDIA_VISIBLE_DEVICES=void") {
			t.Errorf("%s: env %v, want NVIDIA_VISIBLE_DEVICES=void", dev.UUID, e.Env)
		}
		if !slices.ContainsFunc(e.Mounts, func(m *cdispec.Mount) bool { return m.HostPath == d.Lib("libcuda.so.1") }) {
			t.Errorf("%s: no mount of %s", dev.UUID, d.Lib("libcuda.so.1"))
		}
		if len(hookArgs(t, &e, "create-symlinks")) == 0 || len(hookArgs(t, &e, "update-ldcache")) == 0 {
			t.Errorf("%s: hooks %v: want create-symlinks and update-ldcache", dev.UUID, e.Hooks)
		}
	}
}

// TestDriverEditsHostRoot: an agent in a container that sees the host's
// driver root /run/nvidia/driver at the fake tree's path gets edits
// naming the host's paths (nvcdi's transform/root, as NVIDIA's DRA
// driver): each mount's host path under /run/nvidia/driver, the void
// mount's /dev/null and the hook program's path untouched; the device
// nodes' root is the host's too, the fake tree having a dev directory.
func TestDriverEditsHostRoot(t *testing.T) {
	const host = "/run/nvidia/driver"
	d := gpucditest.New(t, version)
	c := gpucdi.DriverConfig{Root: d.Root, HostRoot: host, Version: version, HookPath: hookPath}
	e, err := gpucdi.DriverEdits(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range e.Mounts {
		want := host + m.ContainerPath
		if m.HostPath == "/dev/null" {
			want = "/dev/null"
		}
		if m.HostPath != want {
			t.Errorf("mount %s: host path %s, want %s", m.ContainerPath, m.HostPath, want)
		}
	}
	if len(e.Mounts) == 0 || len(hookArgs(t, e, "update-ldcache")) != 1 {
		t.Errorf("mounts %v, hooks %v", e.Mounts, e.Hooks)
	}
	if got := c.HostDevRoot(); got != host {
		t.Errorf("HostDevRoot %s, want %s", got, host)
	}
	if got := (gpucdi.DriverConfig{Root: t.TempDir(), HostRoot: "/"}).HostDevRoot(); got != "/" {
		t.Errorf("HostDevRoot of a root without dev: %s, want /", got)
	}
}

// TestSpecsTwoDevices: the specs of two GPUs on a node whose driver has
// made /dev/nvidiactl and /dev/nvidia-uvm but not /dev/nvidia-uvm-tools
// (the agent sees the dev root at local, the host at /run/nvidia/driver),
// no driver edits. Worked out by hand: GPU-aaaa (minor 2) gets
// /dev/nvidia2, /dev/nvidiactl, /dev/nvidia-uvm; GPU-bbbb (minor 7)
// /dev/nvidia7 and the same two; each node's host path is
// /run/nvidia/driver + its path; each spec's env is exactly
// NVIDIA_VISIBLE_DEVICES=void, so a container given both sees one value
// (a per-device UUID would give it two, the last one winning).
func TestSpecsTwoDevices(t *testing.T) {
	local := t.TempDir()
	for _, p := range []string{"/dev/nvidiactl", "/dev/nvidia-uvm"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(local, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(local, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	const host = "/run/nvidia/driver"
	for _, d := range []gpucdi.Device{{UUID: "GPU-aaaa", Minor: 2}, {UUID: "GPU-bbbb", Minor: 7}} {
		d.DevRoot, d.LocalDevRoot = host, local
		if err := gpucdi.WriteSpec(dir, d); err != nil {
			t.Fatal(err)
		}
	}
	cache := loadCache(t, dir)
	want := map[string][]string{
		"GPU-aaaa": {"/dev/nvidia2", "/dev/nvidiactl", "/dev/nvidia-uvm"},
		"GPU-bbbb": {"/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm"},
	}
	var env []string
	for uuid, nodes := range want {
		cd := cache.GetDevice(gpucdi.DeviceID(uuid))
		if cd == nil {
			t.Fatalf("%s: not in the CDI cache", gpucdi.DeviceID(uuid))
		}
		var got []string
		for _, n := range cd.ContainerEdits.DeviceNodes {
			got = append(got, n.Path)
			if n.HostPath != host+n.Path {
				t.Errorf("%s: node %s host path %s, want %s", uuid, n.Path, n.HostPath, host+n.Path)
			}
		}
		if !slices.Equal(got, nodes) {
			t.Errorf("%s: nodes %v, want %v", uuid, got, nodes)
		}
		env = append(env, cd.ContainerEdits.Env...)
	}
	if w := []string{"NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_VISIBLE_DEVICES=void"}; !slices.Equal(env, w) {
		t.Errorf("env of the two specs %v, want %v", env, w)
	}
}
