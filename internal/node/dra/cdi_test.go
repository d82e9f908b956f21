// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"fmt"
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
	if !slices.Equal(e.Env, []string{"NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_CTK_LIBCUDA_DIR=/usr/lib/x86_64-linux-gnu"}) {
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

// toolkitIndexSpec is a spec in the shape nvidia-ctk cdi generate writes
// by default (--device-name-strategy=index, nvidia-container-toolkit
// pkg/nvcdi): GPUs named by index with their node and /dev/dri nodes, MIG
// devices "<GPU index>:<MIG index>" with their GPU's node and the two
// capability nodes, and "all". GI is the GPU instance of GPU 0's MIG
// device 0: its capability minors are 3+9·GI and 4+9·GI in
// driverMIGMinors' table.
func toolkitIndexSpec(gi int) string {
	mig := fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d, /dev/nvidia-caps/nvidia-cap%d", 3+9*gi, 4+9*gi)
	return fmt.Sprintf(`cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits: {deviceNodes: [{path: /dev/nvidia0}, {path: /dev/dri/card1}, {path: /dev/dri/renderD128}]}
- name: "0:0"
  containerEdits: {deviceNodes: [{path: /dev/nvidia0}, {path: %[1]s}]}
- name: "1"
  containerEdits:
    deviceNodes: [{path: /dev/nvidia1}, {path: /dev/dri/card2}, {path: /dev/dri/renderD129}]
    hooks:
    - hookName: createContainer
      path: /usr/bin/nvidia-cdi-hook
      args: [nvidia-cdi-hook, create-symlinks, --link, ../card2::/dev/dri/by-path/pci-0000:41:00.0-card]
- name: all
  containerEdits: {deviceNodes: [{path: /dev/nvidia0}, {path: /dev/nvidia1}, {path: %[1]s}]}
containerEdits:
  deviceNodes: [{path: /dev/nvidiactl}]
`, strings.ReplaceAll(mig, ", ", "}, {path: "))
}

// With the toolkit's spec named by index, each device is still given by
// its UUID, in a spec of the plugin's (an index name is positional: a
// spec generated again may give it to another device), with the edits of
// the toolkit's device for it: GPU 1's "1" adds its /dev/dri nodes and
// their symlink hook, the MIG device made outside DRA matches "0:0" by
// its capability nodes (GPU 0's "0" has none), the MIG device created on
// demand matches none. The runtimes' CDI cache resolves all three with no
// conflict.
func TestPrepareToolkitSpecIndexNames(t *testing.T) {
	b, n := mockNode(t, strings.Replace(twoA100, "    migEnabled: true\n", "    migEnabled: true\n    mig: [3g.40gb]\n", 1))
	static, err := b.MIGInstances(context.Background(), n.GPUs[0].UUID)
	if err != nil || len(static) != 1 {
		t.Fatalf("static MIG devices %v %v", static, err)
	}
	k := newKubelet(t)
	k.dirs.MIGMinorsPath = filepath.Join(t.TempDir(), "mig-minors")
	toolkit := filepath.Join(k.dirs.CDIDir, "nvidia.yaml")
	if err := os.MkdirAll(k.dirs.CDIDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string]string{k.dirs.MIGMinorsPath: driverMIGMinors(), toolkit: toolkitIndexSpec(static[0].GPUInstanceID)} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k.dirs.ToolkitSpec = toolkit
	k.start(b)
	k.slices(2)
	// The static 3g.40gb is at slot 0; one is created at slot 4.
	c := k.claim("c", "gpu-0-mig-3g40gb-9-0", "gpu-0-mig-3g40gb-9-4", "gpu-1")
	ids, errStr := k.prepare(c)
	if errStr != "" || len(ids) != 3 {
		t.Fatalf("prepare: %v %q", ids, errStr)
	}
	live, err := b.MIGInstances(context.Background(), n.GPUs[0].UUID)
	if err != nil || len(live) != 2 {
		t.Fatalf("live MIG devices %v %v", live, err)
	}
	created := live[0]
	if created.UUID == static[0].UUID {
		created = live[1]
	}
	uuids := []string{static[0].UUID, created.UUID, n.GPUs[1].UUID}
	ctl := "/dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools"
	caps := func(gi int) string {
		return fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d /dev/nvidia-caps/nvidia-cap%d", 3+9*gi, 4+9*gi)
	}
	wantNodes := []string{
		"/dev/nvidia0 " + caps(static[0].GPUInstanceID) + " " + ctl,
		"/dev/nvidia0 " + caps(created.GPUInstanceID) + " " + ctl,
		"/dev/nvidia1 " + ctl + " /dev/dri/card2 /dev/dri/renderD129",
	}
	for i, uuid := range uuids {
		if ids[i] != "nvidia.com/gpu="+uuid {
			t.Errorf("CDI device %d: %s, want nvidia.com/gpu=%s", i, ids[i], uuid)
		}
		if got := strings.Join(specNodes(t, k.dirs.CDIDir, uuid), " "); got != wantNodes[i] {
			t.Errorf("%s: nodes %s, want %s", uuid, got, wantNodes[i])
		}
	}
	s, err := cdiapi.ReadSpec(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID), 0)
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Devices[0].ContainerEdits.Hooks; len(h) != 1 || h[0].Args[1] != "create-symlinks" {
		t.Errorf("GPU 1's hooks %+v, want the toolkit device's create-symlinks", h)
	}
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(k.dirs.CDIDir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Refresh(); err != nil {
		t.Fatalf("CDI cache: %v", err)
	}
	for i, uuid := range uuids {
		if d := cache.GetDevice(ids[i]); d == nil || d.GetSpec().GetPath() != cdiSpecPath(k.dirs.CDIDir, uuid) {
			t.Errorf("%s resolves to %v, want the plugin's spec", ids[i], d)
		}
	}
	k.unprepare(c)
}

// toolkitIndexed matches by nodes; a MIG device whose capability nodes
// match no device, a GPU the spec lacks, and nodes two devices hold match
// none.
func TestToolkitIndexed(t *testing.T) {
	spec := func(yaml string) *cdiapi.Spec {
		t.Helper()
		path := filepath.Join(t.TempDir(), "nvidia.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := readToolkitSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	index := spec(toolkitIndexSpec(2)) // caps 21 and 22
	caps := []string{"/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia-caps/nvidia-cap22"}
	twice := spec("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"1\"\n  containerEdits: {deviceNodes: [{path: /dev/nvidia1}]}\n- name: gpu1\n  containerEdits: {deviceNodes: [{path: /dev/nvidia1}, {path: /dev/nvidiactl}]}\n")
	for _, tc := range []struct {
		name string
		s    *cdiapi.Spec
		d    cdiDevice
		want string
	}{
		{"GPU 0", index, cdiDevice{UUID: "GPU-a", Minor: 0}, "0"},
		{"GPU 1", index, cdiDevice{UUID: "GPU-b", Minor: 1}, "1"},
		{"MIG by its caps", index, cdiDevice{UUID: "MIG-a", Minor: 0, CapNodes: caps}, "0:0"},
		{"MIG with other caps", index, cdiDevice{UUID: "MIG-b", Minor: 0, CapNodes: []string{"/dev/nvidia-caps/nvidia-cap30", "/dev/nvidia-caps/nvidia-cap31"}}, ""},
		{"no such GPU", index, cdiDevice{UUID: "GPU-c", Minor: 7}, ""},
		{"two hold the nodes", twice, cdiDevice{UUID: "GPU-b", Minor: 1}, ""},
	} {
		name, edits := toolkitIndexed(tc.s, tc.d)
		if name != tc.want || (edits == nil) != (tc.want == "") {
			t.Errorf("%s: %q %v, want %q", tc.name, name, edits, tc.want)
		}
	}
}
