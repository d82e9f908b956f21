// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	cdispec "tags.cncf.io/container-device-interface/specs-go"
)

// CDI device names: kind nvidia.com/gpu, device name the GPU's or MIG
// device's UUID, as NVIDIA's container toolkit names them (nvidia-ctk cdi
// generate, --device-name-strategy uuid; its default index strategy
// names the same devices "0" and "0:1").
const (
	cdiKind = "nvidia.com/gpu"
	// DefaultCDIDir is the CDI directory for transient specs, the
	// runtimes' (containerd, CRI-O) and NVIDIA's DRA driver's.
	DefaultCDIDir = "/var/run/cdi"
)

// CDIDeviceID is the qualified CDI device name of a GPU or MIG device.
func CDIDeviceID(uuid string) string { return cdiKind + "=" + uuid }

// cdiDevice is what a CDI spec gives a container for one device.
type cdiDevice struct {
	// UUID is the GPU's or MIG device's UUID, the CDI device name.
	UUID string
	// Minor is the GPU's device node minor (/dev/nvidia<Minor>), the
	// parent's for a MIG device.
	Minor int
	// CapNodes are a MIG device's capability device nodes
	// (/dev/nvidia-caps/nvidia-cap<N> of its GPU and compute instance,
	// migMinors.capNodes); none for a whole GPU.
	CapNodes []string
}

// cdiSpecPath is the spec file of one device in dir: one file per device,
// named after the kind and the device, so that a device prepared for two
// claims (a shared GPU) has one spec and unprepare removes it with its
// last claim.
func cdiSpecPath(dir, uuid string) string {
	return filepath.Join(dir, "gpuplane_"+strings.ReplaceAll(cdiKind, "/", "_")+"_"+uuid+".json")
}

// cdiSpec returns the spec of one device: its device node, a MIG
// device's capability nodes, and the control devices every CUDA process
// opens (/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools), the
// nodes nvidia-ctk's spec gives the same device. It does not mount the driver's libraries or run
// the toolkit's hooks: that is what nvidia-ctk's generated spec adds
// (docs/dra.md).
func cdiSpec(d cdiDevice) *cdispec.Spec {
	dev := func(p string) *cdispec.DeviceNode { return &cdispec.DeviceNode{Path: p} }
	nodes := []*cdispec.DeviceNode{dev(fmt.Sprintf("/dev/nvidia%d", d.Minor))}
	for _, p := range d.CapNodes {
		nodes = append(nodes, dev(p))
	}
	nodes = append(nodes, dev("/dev/nvidiactl"), dev("/dev/nvidia-uvm"), dev("/dev/nvidia-uvm-tools"))
	s := &cdispec.Spec{
		Kind: cdiKind,
		Devices: []cdispec.Device{{
			Name: d.UUID,
			ContainerEdits: cdispec.ContainerEdits{
				DeviceNodes: nodes,
				Env:         []string{"NVIDIA_VISIBLE_DEVICES=" + d.UUID},
			},
		}},
	}
	v, err := cdispec.MinimumRequiredVersion(s)
	if err != nil {
		v = cdispec.CurrentVersion
	}
	s.Version = v
	return s
}

// writeCDISpec writes the spec of d into dir, atomically.
func writeCDISpec(dir string, d cdiDevice) error {
	data, err := json.MarshalIndent(cdiSpec(d), "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("CDI directory: %w", err)
	}
	return writeAtomic(cdiSpecPath(dir, d.UUID), data, 0o644)
}

// removeCDISpec removes the spec of the device uuid from dir; a missing
// file is no error.
func removeCDISpec(dir, uuid string) error {
	if err := os.Remove(cdiSpecPath(dir, uuid)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// writeAtomic writes data to name through a temporary file in the same
// directory, synced and renamed over name, then syncs the directory: a
// crash leaves the old file or the new one, never a part.
func writeAtomic(name string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
