// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package gpucdi writes the CDI specs of the node's GPUs and MIG devices,
// one file per device, on both of the node agent's paths (the DRA plugin
// and the device plugin's cdi-cri and cdi-annotations strategies): the
// device's own nodes, worked out from gpuplane's device list, and the
// edits common to every NVIDIA device (the driver's libraries, binaries,
// IPC sockets, firmware, control device nodes and NVIDIA's hooks), made by
// NVIDIA's own generator, nvidia-container-toolkit's pkg/nvcdi
// (DriverEdits), or borrowed from the container toolkit's spec.
package gpucdi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// CDI device names: kind nvidia.com/gpu, device name the GPU's or MIG
// device's UUID, as NVIDIA's container toolkit names them (nvidia-ctk cdi
// generate, --device-name-strategy uuid; its default index strategy
// names the same devices "0" and "0:1").
const (
	Kind = "nvidia.com/gpu"
	// DefaultDir is the CDI directory for transient specs, the
	// runtimes' (containerd, CRI-O) and NVIDIA's DRA driver's.
	DefaultDir = "/var/run/cdi"
)

// DeviceID is the qualified CDI device name of a GPU or MIG device,
// nvidia.com/gpu=<UUID>.
func DeviceID(uuid string) string { return Kind + "=" + uuid }

// Device is what a CDI spec gives a container for one device.
type Device struct {
	// UUID is the GPU's or MIG device's UUID, the CDI device name.
	UUID string
	// Minor is the GPU's device node minor (/dev/nvidia<Minor>), the
	// parent's for a MIG device.
	Minor int
	// CapNodes are a MIG device's capability device nodes
	// (/dev/nvidia-caps/nvidia-cap<N> of its GPU and compute instance,
	// MIGMinors.CapNodes); none for a whole GPU.
	CapNodes []string
	// DevRoot is where the host's device nodes are (DevRoot of the
	// driver root): a node's host path is DevRoot + its path; "" or "/":
	// the same path.
	DevRoot string
	// LocalDevRoot is where the agent sees DevRoot (DevRoot of the driver
	// root as the agent sees it, e.g. /driver-root in a container): when
	// set, the spec lists only the ControlNodes present under it; empty:
	// all of ControlNodes.
	LocalDevRoot string
	// Own are the container edits of the toolkit spec's device for this
	// one under an index name (its /dev/dri nodes and their hooks),
	// merged into the device's; nil: none.
	Own *cdispec.ContainerEdits
	// Common are the container edits every NVIDIA device gets (driver
	// libraries, binaries, IPC sockets, hooks, control nodes), from
	// DriverEdits or the toolkit's spec, merged into the device's; nil:
	// none, and the spec mounts no driver file.
	Common *cdispec.ContainerEdits
}

// SpecPath is the spec file of one device in dir: one file per device,
// named after the kind and the device, so that a device prepared for two
// claims (a shared GPU) has one spec and unprepare removes it with its
// last claim.
func SpecPath(dir, uuid string) string {
	return filepath.Join(dir, "gpuplane_"+strings.ReplaceAll(Kind, "/", "_")+"_"+uuid+".json")
}

// ControlNodes are the control devices every CUDA process opens, which
// nvidia-ctk's spec gives every device (nvidia-container-toolkit v1.20.2
// pkg/nvcdi/common-nvml.go, controlDeviceNodeDiscoverer, which like
// PresentControlNodes keeps only the nodes that exist).
// /dev/nvidia-uvm and /dev/nvidia-uvm-tools exist only once nvidia-uvm is
// loaded (nvidia-modprobe -u makes them), and a spec naming a node that
// is not there makes the runtime refuse the container.
var ControlNodes = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}

// PresentControlNodes returns those of ControlNodes that exist under
// devRoot ("" or "/": the host's /dev), in ControlNodes' order.
func PresentControlNodes(devRoot string) []string {
	var out []string
	for _, p := range ControlNodes {
		if _, err := os.Stat(filepath.Join(devRoot, p)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// VisibleVoid is the spec's NVIDIA_VISIBLE_DEVICES, as nvidia-ctk's specs
// set it (nvidia-container-toolkit v1.20.2 pkg/nvcdi/wrapper.go,
// GetCommonEdits: "to prevent duplicate device injection from NVIDIA
// Container Runtime"): the devices are given by the spec's edits. A per-device UUID would be wrong for a container
// given two devices: each spec's value overrides the other's.
const VisibleVoid = "NVIDIA_VISIBLE_DEVICES=void"

// Spec returns the spec of one device: its device node, a MIG device's
// capability nodes, and the control nodes (ControlNodes; with
// d.LocalDevRoot only those present there), with d.Own and d.Common
// merged in; env NVIDIA_VISIBLE_DEVICES=void (VisibleVoid).
func Spec(d Device) *cdispec.Spec {
	dev := func(p string) *cdispec.DeviceNode {
		n := &cdispec.DeviceNode{Path: p}
		if d.DevRoot != "" && d.DevRoot != "/" {
			n.HostPath = filepath.Join(d.DevRoot, p)
		}
		return n
	}
	nodes := []*cdispec.DeviceNode{dev(fmt.Sprintf("/dev/nvidia%d", d.Minor))}
	for _, p := range d.CapNodes {
		nodes = append(nodes, dev(p))
	}
	control := ControlNodes
	if d.LocalDevRoot != "" {
		control = PresentControlNodes(d.LocalDevRoot)
	}
	for _, p := range control {
		nodes = append(nodes, dev(p))
	}
	edits := cdispec.ContainerEdits{DeviceNodes: nodes, Env: []string{VisibleVoid}}
	MergeEdits(&edits, d.Own)
	MergeEdits(&edits, d.Common)
	s := &cdispec.Spec{Kind: Kind, Devices: []cdispec.Device{{Name: d.UUID, ContainerEdits: edits}}}
	v, err := cdispec.MinimumRequiredVersion(s)
	if err != nil {
		v = cdispec.CurrentVersion
	}
	s.Version = v
	return s
}

// MergeEdits adds c's device nodes that e lacks (by path), its
// environment but NVIDIA_VISIBLE_DEVICES, its mounts and hooks to e; a
// nil c adds nothing.
func MergeEdits(e *cdispec.ContainerEdits, c *cdispec.ContainerEdits) {
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

// WriteSpec writes the spec of d into dir (created if missing),
// atomically, as JSON.
func WriteSpec(dir string, d Device) error {
	data, err := json.MarshalIndent(Spec(d), "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("CDI directory: %w", err)
	}
	return atomicfile.Write(SpecPath(dir, d.UUID), data, 0o644)
}

// RemoveSpec removes the spec of the device uuid from dir; a missing file
// is no error.
func RemoveSpec(dir, uuid string) error {
	if err := os.Remove(SpecPath(dir, uuid)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// NodeSpecs is what WriteNodeSpecs needs besides the devices.
type NodeSpecs struct {
	// Dir is the CDI directory the specs go to.
	Dir string
	// MIGMinors gives MIG devices their capability nodes (ReadMIGMinors
	// of DefaultMIGMinorsPath); nil: none (the mock backend's devices).
	MIGMinors MIGMinors
	// DevRoot, LocalDevRoot and Common are every Device's
	// (Device.DevRoot, Device.LocalDevRoot, Device.Common).
	DevRoot      string
	LocalDevRoot string
	Common       *cdispec.ContainerEdits
}

// WriteNodeSpecs writes the spec of every device of n a container can be
// given on the device-plugin path, as NVIDIA's device plugin writes one
// for all at its start (k8s-device-plugin internal/cdi/cdi.go
// CreateSpecFile): each GPU without MIG, and each MIG device with its
// capability nodes. It returns the UUIDs written; an error names the
// device.
func WriteNodeSpecs(s NodeSpecs, n device.Node) ([]string, error) {
	var uuids []string
	for _, g := range n.GPUs {
		devs := []Device{{UUID: g.UUID, Minor: g.Minor}}
		if g.MIGEnabled {
			devs = devs[:0]
			for _, m := range g.MIG {
				d := Device{UUID: m.UUID, Minor: g.Minor}
				if s.MIGMinors != nil {
					caps, err := s.MIGMinors.CapNodes(g.Minor, m.GPUInstanceID, m.ComputeInstanceID)
					if err != nil {
						return uuids, fmt.Errorf("MIG device %s: %w", m.UUID, err)
					}
					d.CapNodes = caps
				}
				devs = append(devs, d)
			}
		}
		for _, d := range devs {
			d.DevRoot, d.LocalDevRoot, d.Common = s.DevRoot, s.LocalDevRoot, s.Common
			if err := WriteSpec(s.Dir, d); err != nil {
				return uuids, fmt.Errorf("device %s: CDI spec: %w", d.UUID, err)
			}
			uuids = append(uuids, d.UUID)
		}
	}
	return uuids, nil
}
