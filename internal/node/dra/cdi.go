// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpuplane/gpuplane/internal/atomicfile"

	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
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
	// Own are the container edits of the toolkit spec's device for this
	// one under an index name (toolkitIndexed: its /dev/dri nodes and
	// their hooks), merged into the device's; nil: none.
	Own *cdispec.ContainerEdits
	// Common are the container edits every device of the node's NVIDIA
	// container toolkit spec gets (driver libraries, hooks, control
	// nodes), merged into the device's; nil: none.
	Common *cdispec.ContainerEdits
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
// nodes nvidia-ctk's spec gives the same device, with d.Common merged in
// (the toolkit spec's libraries and hooks); without it the spec mounts
// no driver library and runs no hook (docs/dra.md).
func cdiSpec(d cdiDevice) *cdispec.Spec {
	dev := func(p string) *cdispec.DeviceNode { return &cdispec.DeviceNode{Path: p} }
	nodes := []*cdispec.DeviceNode{dev(fmt.Sprintf("/dev/nvidia%d", d.Minor))}
	for _, p := range d.CapNodes {
		nodes = append(nodes, dev(p))
	}
	nodes = append(nodes, dev("/dev/nvidiactl"), dev("/dev/nvidia-uvm"), dev("/dev/nvidia-uvm-tools"))
	edits := cdispec.ContainerEdits{DeviceNodes: nodes, Env: []string{"NVIDIA_VISIBLE_DEVICES=" + d.UUID}}
	mergeEdits(&edits, d.Own)
	mergeEdits(&edits, d.Common)
	s := &cdispec.Spec{Kind: cdiKind, Devices: []cdispec.Device{{Name: d.UUID, ContainerEdits: edits}}}
	v, err := cdispec.MinimumRequiredVersion(s)
	if err != nil {
		v = cdispec.CurrentVersion
	}
	s.Version = v
	return s
}

// mergeEdits adds c's device nodes that e lacks (by path), its
// environment but NVIDIA_VISIBLE_DEVICES, its mounts and hooks to e; a
// nil c adds nothing.
func mergeEdits(e *cdispec.ContainerEdits, c *cdispec.ContainerEdits) {
	if c == nil {
		return
	}
	for _, n := range c.DeviceNodes {
		if !slices.ContainsFunc(e.DeviceNodes, func(o *cdispec.DeviceNode) bool { return o.Path == n.Path }) {
			e.DeviceNodes = append(e.DeviceNodes, n)
		}
	}
	for _, v := range c.Env {
		if !strings.HasPrefix(v, "NVIDIA_VISIBLE_DEVICES=") {
			e.Env = append(e.Env, v)
		}
	}
	e.Mounts = append(e.Mounts, c.Mounts...)
	e.Hooks = append(e.Hooks, c.Hooks...)
}

// readToolkitSpec reads NVIDIA's container toolkit's CDI spec of the
// node's GPUs (nvidia-ctk cdi generate, e.g. /var/run/cdi/nvidia.yaml)
// with the CDI library the runtimes use. No path or no file: nil, no
// error (the toolkit may not have written it yet). A spec of another
// kind than nvidia.com/gpu is an error.
func readToolkitSpec(path string) (*cdiapi.Spec, error) {
	if path == "" {
		return nil, nil
	}
	s, err := cdiapi.ReadSpec(path, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("toolkit CDI spec: %w", err)
	}
	if s.Kind != cdiKind {
		return nil, fmt.Errorf("toolkit CDI spec %s: kind %s, want %s", path, s.Kind, cdiKind)
	}
	return s, nil
}

// toolkitIndexed returns the device of the toolkit's spec ts that is d
// under another name than its UUID, with its container edits; "" and nil
// for none: the one device but "all" whose GPU and capability nodes are
// exactly d's, the GPU node /dev/nvidia<minor> and d's MIG capability
// nodes, none for a whole GPU (the toolkit's default index names "0" and
// "0:1", whose devices also hold the GPU's /dev/dri nodes). Nodes two
// devices hold match none.
func toolkitIndexed(ts *cdiapi.Spec, d cdiDevice) (string, *cdispec.ContainerEdits) {
	want := append([]string{fmt.Sprintf("/dev/nvidia%d", d.Minor)}, d.CapNodes...)
	slices.Sort(want)
	var found *cdispec.Device
	for i, dev := range ts.Devices {
		if dev.Name == "all" || !slices.Equal(gpuNodes(dev.ContainerEdits), want) {
			continue
		}
		if found != nil {
			return "", nil
		}
		found = &ts.Devices[i]
	}
	if found == nil {
		return "", nil
	}
	return found.Name, &found.ContainerEdits
}

// gpuNodes returns the GPU nodes (/dev/nvidia<N>) and MIG capability
// nodes of e, sorted.
func gpuNodes(e cdispec.ContainerEdits) []string {
	var out []string
	for _, n := range e.DeviceNodes {
		minor, isGPU := strings.CutPrefix(n.Path, "/dev/nvidia")
		isGPU = isGPU && minor != "" && strings.Trim(minor, "0123456789") == ""
		if isGPU || strings.HasPrefix(n.Path, migCapDir+"/") {
			out = append(out, n.Path)
		}
	}
	slices.Sort(out)
	return out
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
	return atomicfile.Write(cdiSpecPath(dir, d.UUID), data, 0o644)
}

// removeCDISpec removes the spec of the device uuid from dir; a missing
// file is no error.
func removeCDISpec(dir, uuid string) error {
	if err := os.Remove(cdiSpecPath(dir, uuid)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
