// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package gpucditest builds a fake NVIDIA driver tree for tests of CDI
// specs: the driver's files as nvcdi finds them, at the paths NVIDIA's
// installer puts them, with no GPU and no kernel module.
package gpucditest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// LibDir is where the fake driver's libraries are, relative to its root:
// the Debian/Ubuntu multiarch directory, one of nvcdi's library search
// paths (nvidia-container-toolkit pkg/lookup/library.go).
const LibDir = "/usr/lib/x86_64-linux-gnu"

// Libraries are the fake driver's libraries, by SONAME; each is built as
// lib<name>.so.<version> with that SONAME and a SONAME link beside it, as
// NVIDIA's installer leaves them (ldconfig makes the links).
var Libraries = []string{"libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1"}

// Binaries are the fake driver's programs in /usr/bin.
var Binaries = []string{"nvidia-smi", "nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}

// DevNodes are the fake device nodes in <root>/dev, regular files: nvcdi
// takes only character devices, so it finds none of them; gpucdi.Spec
// names them from the device list.
var DevNodes = []string{"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps/nvidia-cap1", "nvidia-caps/nvidia-cap2"}

// Driver holds the paths of a fake driver tree.
type Driver struct {
	// Root is the driver root, a temporary directory.
	Root string
	// Version is the driver version in the libraries' names.
	Version string
}

// Lib returns the host path of the library with SONAME soname:
// <Root><LibDir>/<name>.so.<Version>.
func (d Driver) Lib(soname string) string {
	return filepath.Join(d.Root, LibDir, soNameBase(soname)+"."+d.Version)
}

// soNameBase is "libcuda.so" for "libcuda.so.1".
func soNameBase(soname string) string {
	return soname[:len(soname)-len(filepath.Ext(soname))]
}

// cuda is the fake libcuda's source: cuInit(0) returns CUDA_SUCCESS (0),
// cuDriverGetVersion gives 13000 (CUDA 13.0), as the real one on a GPU.
const cuda = `int cuInit(unsigned int flags) { return flags == 0 ? 0 : 1; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
`

// New builds a fake driver of the given version in a temporary directory:
// Libraries (shared objects built with gcc, since nvcdi reads their
// SONAME from the ELF file; libcuda's exports cuInit), Binaries,
// nvidia-persistenced's socket (a regular file), a GSP firmware file
// (lib/firmware/nvidia/<version>/gsp_ga10x.bin) and DevNodes. Without gcc
// the test is skipped.
func New(t testing.TB, version string) Driver {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the fake driver's libraries are built with it")
	}
	d := Driver{Root: t.TempDir(), Version: version}
	src := filepath.Join(t.TempDir(), "lib.c")
	if err := os.WriteFile(src, []byte(cuda), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(d.Root, LibDir)
	mkdir(t, lib)
	for _, so := range Libraries {
		out := d.Lib(so)
		if b, err := exec.Command(gcc, "-shared", "-fPIC", "-Wl,-soname,"+so, "-o", out, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", so, err, b)
		}
		if err := os.Symlink(filepath.Base(out), filepath.Join(lib, so)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range Binaries {
		write(t, filepath.Join(d.Root, "usr/bin", b), "#!/bin/sh\n", 0o755)
	}
	write(t, filepath.Join(d.Root, "run/nvidia-persistenced/socket"), "", 0o644)
	write(t, filepath.Join(d.Root, "lib/firmware/nvidia", version, "gsp_ga10x.bin"), "", 0o644)
	for _, n := range DevNodes {
		write(t, filepath.Join(d.Root, "dev", n), "", 0o666)
	}
	return d
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, path, data string, mode os.FileMode) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// Character device numbers of the fake nodes CharDevices makes: the
// NVIDIA driver's major 195, /dev/nvidia<i> minor i, /dev/nvidiactl minor
// 255 (NVIDIA's open-gpu-kernel-modules kernel-open/common/inc/nv.h,
// NV_MAJOR_DEVICE_NUMBER, NV_CONTROL_DEVICE_MINOR); nvidia-uvm's major is
// dynamic (nvidia-modprobe reads it from /proc/devices), UVMMajor here,
// minors 0 and 1 for nvidia-uvm and nvidia-uvm-tools (kernel-open/
// nvidia-uvm/uvm.c, NVIDIA_UVM_PRIMARY_MINOR_NUMBER,
// NVIDIA_UVM_TOOLS_MINOR_NUMBER).
const (
	NvidiaMajor = 195
	UVMMajor    = 511
)

// CharDevices replaces the tree's device nodes by character devices
// (mknod, so root only; nothing behind them): /dev/nvidia<i> 195:i for
// i < n, /dev/nvidiactl 195:255, /dev/nvidia-uvm 511:0 and
// /dev/nvidia-uvm-tools 511:1, for a runtime that gives them to a
// container through CDI.
func (d Driver) CharDevices(t testing.TB, n int) {
	t.Helper()
	nodes := map[string]int{"nvidiactl": NvidiaMajor<<8 | 255, "nvidia-uvm": UVMMajor << 8, "nvidia-uvm-tools": UVMMajor<<8 | 1}
	for i := 0; i < n; i++ {
		nodes[fmt.Sprintf("nvidia%d", i)] = NvidiaMajor<<8 | i
	}
	for name, rdev := range nodes {
		p := filepath.Join(d.Root, "dev", name)
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		// The old dev_t encoding, exact for major < 4096, minor < 256.
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, rdev); err != nil {
			t.Fatal(err)
		}
	}
}

// Hook writes a fake nvidia-cdi-hook in the tree that appends its
// arguments to a log, a line a call, and exits 0; it returns the hook's
// path and the log's.
func (d Driver) Hook(t testing.TB) (hook, log string) {
	t.Helper()
	log = filepath.Join(d.Root, "hook.log")
	hook = filepath.Join(d.Root, "nvidia-cdi-hook")
	write(t, hook, "#!/bin/sh\necho \"$@\" >> "+log+"\n", 0o755)
	return hook, log
}
