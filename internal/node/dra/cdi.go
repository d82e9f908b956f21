// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpuplane/gpuplane/internal/node/gpucdi"
)

// CDI device names and spec files: gpucdi's, shared with the device
// plugin.
const (
	cdiKind = gpucdi.Kind
	// DefaultCDIDir is the CDI directory for transient specs, the
	// runtimes' (containerd, CRI-O) and NVIDIA's DRA driver's.
	DefaultCDIDir = gpucdi.DefaultDir
)

// CDIDeviceID is the qualified CDI device name of a GPU or MIG device.
func CDIDeviceID(uuid string) string { return gpucdi.DeviceID(uuid) }

// cdiDevice is what a CDI spec gives a container for one device.
type cdiDevice = gpucdi.Device

// cdiSpecPath is the spec file of one device in dir (gpucdi.SpecPath).
func cdiSpecPath(dir, uuid string) string { return gpucdi.SpecPath(dir, uuid) }

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
func writeCDISpec(dir string, d cdiDevice) error { return gpucdi.WriteSpec(dir, d) }

// removeCDISpec removes the spec of the device uuid from dir; a missing
// file is no error.
func removeCDISpec(dir, uuid string) error { return gpucdi.RemoveSpec(dir, uuid) }
