// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"
)

// toolkitSpec is a spec in the shape nvidia-ctk cdi generate
// --device-name-strategy=uuid writes (nvidia-container-toolkit
// pkg/nvcdi): one device per GPU with its node, and the edits every
// device gets at the top: control nodes, the driver's libraries, the
// ldcache hook.
const toolkitSpec = `cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: GPU1UUID
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia1
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  - NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/x86_64-linux-gnu
  deviceNodes:
  - path: /dev/nvidia-modeset
  - path: /dev/nvidia-uvm
  - path: /dev/nvidia-uvm-tools
  - path: /dev/nvidiactl
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
    args: [nvidia-cdi-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
    options: [ro, nosuid, nodev, bind]
`

// On a node with the toolkit's spec in the runtimes' directory, a whole
// GPU it names gets no spec of the plugin's (the CDI cache would refuse
// two specs of one name in one directory), and a MIG device created on
// demand, which it cannot name, gets the plugin's spec with the
// toolkit's libraries and hook. The CDI library the runtimes use
// (containerd, CRI-O) resolves both names with no conflict.
func TestPrepareToolkitSpec(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	toolkit := filepath.Join(k.dirs.CDIDir, "nvidia.yaml")
	if err := os.MkdirAll(k.dirs.CDIDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toolkit, []byte(strings.Replace(toolkitSpec, "GPU1UUID", n.GPUs[1].UUID, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	k.dirs.ToolkitSpec = toolkit
	k.start(b)
	k.slices(2)
	c := k.claim("c", "gpu-1", "gpu-0-mig-1g10gb-19-2")
	ids, errStr := k.prepare(c)
	if errStr != "" || len(ids) != 2 {
		t.Fatalf("prepare: %v %q", ids, errStr)
	}
	if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID)); !os.IsNotExist(err) {
		t.Errorf("a spec of the plugin's for the toolkit's GPU: %v", err)
	}
	mig := strings.TrimPrefix(ids[1], "nvidia.com/gpu=")
	s, err := cdiapi.ReadSpec(cdiSpecPath(k.dirs.CDIDir, mig), 0)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Devices[0].ContainerEdits
	var nodes []string
	for _, d := range e.DeviceNodes {
		nodes = append(nodes, d.Path)
	}
	if got := strings.Join(nodes, " "); got != "/dev/nvidia0 /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia-modeset" {
		t.Errorf("MIG device nodes %s", got)
	}
	if !slices.Equal(e.Env, []string{"NVIDIA_VISIBLE_DEVICES=" + mig, "NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/x86_64-linux-gnu"}) {
		t.Errorf("env %v", e.Env)
	}
	if len(e.Mounts) != 1 || !strings.HasSuffix(e.Mounts[0].HostPath, "libcuda.so.535.104.05") || len(e.Hooks) != 1 || e.Hooks[0].Args[1] != "update-ldcache" {
		t.Errorf("mounts %+v, hooks %+v: want the toolkit's", e.Mounts, e.Hooks)
	}

	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(k.dirs.CDIDir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Refresh(); err != nil {
		t.Fatalf("CDI cache: %v", err)
	}
	for i, want := range []string{toolkit, cdiSpecPath(k.dirs.CDIDir, mig)} {
		d := cache.GetDevice(ids[i])
		if d == nil || d.GetSpec().GetPath() != want {
			t.Errorf("%s resolves to %v, want a device of %s", ids[i], d, want)
		}
	}
	k.unprepare(c)
	if _, err := os.Stat(toolkit); err != nil {
		t.Errorf("the toolkit's spec after unprepare: %v", err)
	}
}

func TestToolkitSpecErrors(t *testing.T) {
	dir := t.TempDir()
	if s, err := readToolkitSpec(filepath.Join(dir, "none.yaml")); s != nil || err != nil {
		t.Errorf("a missing spec: %v %v, want none and no error", s, err)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte(strings.Replace(toolkitSpec, "kind: nvidia.com/gpu", "kind: example.com/fpga", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readToolkitSpec(other); err == nil || !strings.Contains(err.Error(), "kind example.com/fpga, want nvidia.com/gpu") {
		t.Errorf("another kind: %v", err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readToolkitSpec(empty); err == nil || !strings.Contains(err.Error(), "empty.yaml") {
		t.Errorf("an empty spec: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: nvidia.com/gpu\ndevices: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readToolkitSpec(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("a malformed spec: %v", err)
	}
}
