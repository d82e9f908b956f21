// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpucdi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/nvidia-container-toolkit/pkg/nvcdi"
	transformroot "github.com/NVIDIA/nvidia-container-toolkit/pkg/nvcdi/transform/root"
	cdispec "tags.cncf.io/container-device-interface/specs-go"
)

// Defaults of DriverConfig, NVIDIA's (nvidia-container-toolkit
// pkg/nvcdi/options.go populateOptions).
const (
	DefaultDriverRoot = "/"
	DefaultHookPath   = "/usr/bin/nvidia-cdi-hook"
)

// DriverConfig says where the NVIDIA driver's files are.
type DriverConfig struct {
	// Root is the driver root: the directory under which the driver's
	// libraries (<Root>/usr/lib/x86_64-linux-gnu/libcuda.so.<version>,
	// found through <Root>/etc/ld.so.cache or the usual library
	// directories), binaries and firmware are, NVIDIA's
	// --nvidia-driver-root (default DefaultDriverRoot). The spec's host
	// paths are under it, so the agent must see it at the host's path
	// (e.g. /run/nvidia/driver for NVIDIA's GPU operator's driver).
	Root string
	// Version is the kernel driver's version, e.g. "580.159.04"
	// (device.Node.DriverVersion, from NVML): the libraries mounted are
	// those named lib*.so.<Version>. Empty: nvcdi takes it from the name
	// of <Root>'s libcuda.so.<version> or libnvidia-ml.so.<version>.
	Version string
	// HookPath is nvidia-cdi-hook's path on the host, the program the
	// runtime runs for the spec's hooks (default DefaultHookPath, where
	// NVIDIA's container toolkit installs it).
	HookPath string
	// HostRoot is Root's path on the host when the agent sees the driver
	// elsewhere (in a container that mounts the host's / at
	// /driver-root): the edits' host paths under Root are rewritten to
	// it, device nodes under DevRoot(Root) to HostDevRoot, with nvcdi's
	// own transform (pkg/nvcdi/transform/root, as NVIDIA's DRA driver and
	// device plugin do). Empty: Root.
	HostRoot string
}

// HostDevRoot is the host's path of the device nodes' root,
// DevRoot(c.Root) seen from the host: HostRoot (else Root) when Root
// holds a dev directory, else "/".
func (c DriverConfig) HostDevRoot() string {
	host := c.HostRoot
	if host == "" {
		host = c.Root
	}
	if c.Root != "" && DevRoot(c.Root) == c.Root {
		return host
	}
	return "/"
}

// DevRoot returns the root of the device nodes of driver root root: root
// when it holds a dev directory (a containerized driver's, such as the
// GPU operator's /run/nvidia/driver/dev), else "/", as NVIDIA's DRA
// driver and device plugin decide (k8s-dra-driver-gpu
// cmd/gpu-kubelet-plugin root.go getDevRoot); "/" for "".
func DevRoot(root string) string {
	if root == "" {
		return "/"
	}
	if fi, err := os.Stat(filepath.Join(root, "dev")); err == nil && fi.IsDir() {
		return root
	}
	return "/"
}

// DriverEdits returns the container edits every NVIDIA device's spec
// needs, as nvcdi (nvidia-container-toolkit v1.20.2, mode nvml)
// GetCommonEdits makes them for NVIDIA's DRA driver
// (k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/cdi.go) and nvidia-ctk cdi
// generate: the driver's libraries of c.Version, with the
// create-symlinks hook for their .so links (libcuda.so.1,
// libcuda.so), the update-ldcache hook, the disable-device-node-
// modification and enable-cuda-compat hooks and NVIDIA_CTK_LIBCUDA_DIR;
// its binaries (nvidia-smi, nvidia-cuda-mps-control, ...), IPC sockets
// (nvidia-persistenced's, fabric manager's, MPS's) and GSP firmware where
// present; the control device nodes (/dev/nvidiactl, /dev/nvidia-uvm,
// /dev/nvidia-uvm-tools, /dev/nvidia-modeset) that are character
// devices under DevRoot(c.Root). Per-device nodes are not in it: Spec
// adds them from gpuplane's device list.
//
// nvcdi asks NVML only for the driver version here; it is given
// c.Version through a view of NVML that answers nothing else, so it never
// loads libnvidia-ml itself and runs against a fake driver tree in tests.
// Errors: no libcuda.so.<version> or libnvidia-ml.so.<version> under
// c.Root (no driver there), or nvcdi's own.
func DriverEdits(c DriverConfig) (*cdispec.ContainerEdits, error) {
	if c.Root == "" {
		c.Root = DefaultDriverRoot
	}
	if c.HookPath == "" {
		c.HookPath = DefaultHookPath
	}
	lib, err := nvcdi.New(
		nvcdi.WithMode(nvcdi.ModeNvml),
		nvcdi.WithDriverRoot(c.Root),
		nvcdi.WithDevRoot(DevRoot(c.Root)),
		nvcdi.WithNvmlLib(versionNVML{version: c.Version}),
		nvcdi.WithNVIDIACDIHookPath(c.HookPath),
		nvcdi.WithFeatureFlags(nvcdi.FeatureDisableNvsandboxUtils),
		nvcdi.WithLogger(discard{}),
	)
	if err != nil {
		return nil, fmt.Errorf("nvcdi: %w", err)
	}
	e, err := lib.GetCommonEdits()
	if err != nil {
		return nil, fmt.Errorf("the NVIDIA driver's files under %s: %w", c.Root, err)
	}
	if e == nil || e.ContainerEdits == nil {
		return nil, errors.New("nvcdi gave no edits")
	}
	if c.HostRoot == "" || c.HostRoot == c.Root {
		return e.ContainerEdits, nil
	}
	s := &cdispec.Spec{Kind: Kind, ContainerEdits: *e.ContainerEdits}
	t := transformroot.NewDriverTransformer(
		transformroot.WithDriverRoot(c.Root), transformroot.WithTargetDriverRoot(c.HostRoot),
		transformroot.WithDevRoot(DevRoot(c.Root)), transformroot.WithTargetDevRoot(c.HostDevRoot()),
	)
	if err := t.Transform(s); err != nil {
		return nil, fmt.Errorf("driver root %s as %s on the host: %w", c.Root, c.HostRoot, err)
	}
	return &s.ContainerEdits, nil
}

// versionNVML is the NVML nvcdi is given: it initialises and answers the
// driver version (nvcdi's root.Driver versioner, lib.go
// nvmllibAsVersioner); an empty version is NOT_SUPPORTED, and nvcdi
// falls back to the libraries' names. Any other call panics on the nil
// embedded interface: GetCommonEdits makes none.
type versionNVML struct {
	nvml.Interface
	version string
}

func (versionNVML) Init() nvml.Return     { return nvml.SUCCESS }
func (versionNVML) Shutdown() nvml.Return { return nvml.SUCCESS }
func (v versionNVML) SystemGetDriverVersion() (string, nvml.Return) {
	if v.version == "" {
		return "", nvml.ERROR_NOT_SUPPORTED
	}
	return v.version, nvml.SUCCESS
}

// discard drops nvcdi's log lines (optional files it did not find, by
// the dozen), as NVIDIA's DRA driver does (a logrus logger writing to
// io.Discard); DriverEdits returns its errors.
type discard struct{}

func (discard) Debugf(string, ...any)   {}
func (discard) Errorf(string, ...any)   {}
func (discard) Infof(string, ...any)    {}
func (discard) Warningf(string, ...any) {}
func (discard) Tracef(string, ...any)   {}
