// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// fakeMPS puts a fake nvidia-cuda-mps-control first on PATH: each run
// appends a line "<args>|<CUDA_VISIBLE_DEVICES>|<CUDA_MPS_PIPE_DIRECTORY>|
// <CUDA_MPS_LOG_DIRECTORY>|<stdin>" to the file it returns (stdin read
// only without -d, as the real one reads commands). It exits 1 while a
// file "fail" is next to the record.
func fakeMPS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	script := fmt.Sprintf(`#!/bin/sh
in=""
if [ "$1" != "-d" ]; then in=$(cat); fi
printf '%%s|%%s|%%s|%%s|%%s\n' "$*" "$CUDA_VISIBLE_DEVICES" "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY" "$in" >> %s
if [ -e %s ]; then echo failing; exit 1; fi
`, record, filepath.Join(dir, "fail"))
	if err := os.WriteFile(filepath.Join(dir, DefaultMPSControl), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return record
}

// records returns the fake's lines since the last call (from *seen on).
func records(t *testing.T, path string, seen *int) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	out := lines[*seen:]
	*seen = len(lines)
	return out
}

// TestPrepareMPS: a claim of gpu-1 under a GpuConfig of strategy MPS
// (active threads 50%, pinned memory 10Gi by default, 20Gi for device
// index 0, which is gpu-1) starts a daemon of ID <claim UID>-<the first
// 5 hex digits of SHA-256(gpu-1's UUID)>, NVIDIA's: the control program
// with -d and CUDA_VISIBLE_DEVICES=gpu-1, its pipe and log directories
// under <plugin dir>/mps/<ID>, then "set_default_active_thread_percentage
// 50" and "set_default_device_pinned_mem_limit <UUID> 20480M" (20Gi is
// 20480 MiB). The container gets the pipe directory at /tmp/nvidia-mps
// and CUDA_MPS_PIPE_DIRECTORY through the claim's CDI device. Preparing
// again, also after a restart, runs nothing; unprepare sends "quit" and
// removes the directory (CUDA_VISIBLE_DEVICES empty). A MIG device under a MigDeviceConfig of MPS gets
// a daemon of its MIG UUID, told to quit before the device is destroyed.
// A limit naming a device index the claim does not have is refused
// before anything runs. A failing control program fails the prepare.
func TestPrepareMPS(t *testing.T) {
	record := fakeMPS(t)
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	seen := 0
	u1 := n.GPUs[1].UUID
	cfg := `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50,"defaultPinnedDeviceMemoryLimit":"10Gi","defaultPerDevicePinnedMemoryLimit":{"0":"20Gi"}}}}`
	c := k.withConfig(k.claim("m", "gpu-1"), opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, cfg))
	ids, errStr := k.prepare(c)
	if want := "nvidia.com/gpu=" + u1 + ",gpuplane.io/claim=uid-m-gpu-1"; errStr != "" || strings.Join(ids, ",") != want {
		t.Fatalf("prepare: %v %q, want %s", ids, errStr, want)
	}
	h := sha256.Sum256([]byte(u1))
	id := "uid-m-" + hex.EncodeToString(h[:])[:5]
	root := filepath.Join(k.dirs.PluginDir, "mps", id)
	pipe, logDir := filepath.Join(root, "pipe"), filepath.Join(root, "log")
	env := "|" + u1 + "|" + pipe + "|" + logDir + "|"
	want := []string{"-d" + env, env + "set_default_active_thread_percentage 50", env + "set_default_device_pinned_mem_limit " + u1 + " 20480M"}
	if got := records(t, record, &seen); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("control runs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, err := os.ReadFile(claimCDISpecPath(k.dirs.CDIDir, c.UID, "gpu-1"))
	if err != nil {
		t.Fatal(err)
	}
	var spec cdispec.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	e := spec.Devices[0].ContainerEdits
	if strings.Join(e.Env, ",") != "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps" || len(e.Mounts) != 1 || e.Mounts[0].HostPath != pipe || e.Mounts[0].ContainerPath != "/tmp/nvidia-mps" {
		t.Errorf("claim CDI spec %s", data)
	}
	k.prepare(c)
	d.Stop()
	k.start(b)
	if ids2, _ := k.prepare(c); strings.Join(ids2, ",") != strings.Join(ids, ",") {
		t.Errorf("prepare after restart: %v", ids2)
	}
	if got := records(t, record, &seen); len(got) != 0 {
		t.Errorf("control runs on prepare again: %v", got)
	}
	k.unprepare(c)
	// quit needs no devices: CUDA_VISIBLE_DEVICES is empty.
	if got := records(t, record, &seen); strings.Join(got, "\n") != "||"+pipe+"|"+logDir+"|quit" {
		t.Errorf("control runs on unprepare: %v, want quit", got)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("daemon directory after unprepare: %v", err)
	}

	// A MIG device: the daemon serves its MIG UUID.
	mc := k.withConfig(k.claim("mig", "gpu-0-mig-3g40gb-9-4"), opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, migMPS))
	ids, errStr = k.prepare(mc)
	if errStr != "" || len(ids) != 2 {
		t.Fatalf("prepare mig: %v %q", ids, errStr)
	}
	migUUID := strings.TrimPrefix(ids[0], "nvidia.com/gpu=")
	got := records(t, record, &seen)
	if len(got) != 1 || !strings.HasPrefix(got[0], "-d|"+migUUID+"|") {
		t.Errorf("control runs for the MIG device: %v, want -d with %s", got, migUUID)
	}
	k.unprepare(mc)
	if got := records(t, record, &seen); len(got) != 1 || !strings.HasSuffix(got[0], "|quit") || len(liveMIG(t, b, n.GPUs[0].UUID)) != 0 {
		t.Errorf("unprepare mig: runs %v, live %v", got, liveMIG(t, b, n.GPUs[0].UUID))
	}

	bad := strings.Replace(cfg, `{"0":"20Gi"}`, `{"3":"20Gi"}`, 1)
	bc := k.withConfig(k.claim("bad", "gpu-1"), opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, bad))
	wantErr := `claim default/bad: sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit: "3" is neither a UUID nor an index of the claim's 1 devices`
	if _, errStr := k.prepare(bc); errStr != wantErr {
		t.Errorf("bad limit:\n got %q\nwant %q", errStr, wantErr)
	}
	if got := records(t, record, &seen); len(got) != 0 {
		t.Errorf("control runs for a refused claim: %v", got)
	}

	// The control program fails: prepare fails with its output, the
	// claim stays recorded (its daemon could not be told to quit); once
	// it works, the next prepare tells the half-started daemon to quit and
	// starts it again.
	fail := filepath.Join(filepath.Dir(record), "fail")
	if err := os.WriteFile(fail, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fc := k.withConfig(k.claim("f", "gpu-1"), opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}}`))
	if _, errStr := k.prepare(fc); !strings.Contains(errStr, "nvidia-cuda-mps-control -d: exit status 1") {
		t.Errorf("failing control program: %q", errStr)
	}
	kinds := func() string {
		var out []string
		for _, l := range records(t, record, &seen) {
			f := strings.Split(l, "|")
			out = append(out, f[0]+f[4])
		}
		return strings.Join(out, ",")
	}
	if got := kinds(); got != "-d,quit" {
		t.Errorf("runs while failing: %s, want -d,quit", got)
	}
	if err := os.Remove(fail); err != nil {
		t.Fatal(err)
	}
	if _, errStr := k.prepare(fc); errStr != "" {
		t.Fatalf("prepare once it works: %s", errStr)
	}
	if got := kinds(); got != "quit,-d" {
		t.Errorf("runs once it works: %s, want quit,-d", got)
	}
}

// TestPrepareMPSShares: two shares of gpu-1 (--dra-shares) under MPS use
// the GPU's one daemon ("gpu-" and 12 hex digits of SHA-256 of its UUID):
// started by the first claim, untouched by the second, told to quit with
// the last; each container gets its own share's client limits
// (GPUPLANE_GPU_SHARE=300, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30) and the
// pipe directory.
func TestPrepareMPSShares(t *testing.T) {
	record := fakeMPS(t)
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	k.dirs.Shares = true
	k.start(b)
	seen := 0
	u1 := n.GPUs[1].UUID
	var claims []*resourceapi.ResourceClaim
	for i, name := range []string{"a", "b"} {
		c := k.claim(name, "gpu-1")
		share := types.UID(fmt.Sprint("share-", i))
		r := &c.Status.Allocation.Devices.Results[0]
		r.ShareID = &share
		r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("300")}
		c.Status.Allocation.Devices.Config = []resourceapi.DeviceAllocationConfiguration{opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}}`)}
		c, err := k.client.ResourceV1().ResourceClaims("default").UpdateStatus(context.Background(), c, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, errStr := k.prepare(c); errStr != "" {
			t.Fatalf("prepare %s: %s", name, errStr)
		}
		claims = append(claims, c)
	}
	h := sha256.Sum256([]byte(u1))
	root := filepath.Join(k.dirs.PluginDir, "mps", "gpu-"+hex.EncodeToString(h[:])[:12])
	if got := records(t, record, &seen); len(got) != 1 || got[0] != "-d|"+u1+"|"+filepath.Join(root, "pipe")+"|"+filepath.Join(root, "log")+"|" {
		t.Errorf("control runs for two shares: %v", got)
	}
	data, err := os.ReadFile(claimCDISpecPath(k.dirs.CDIDir, claims[1].UID, "gpu-1"))
	if err != nil {
		t.Fatal(err)
	}
	var spec cdispec.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(spec.Devices[0].ContainerEdits.Env, ","); got != "GPUPLANE_GPU_SHARE=300,CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30,CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps" {
		t.Errorf("b's environment %s", got)
	}
	k.unprepare(claims[0])
	if got := records(t, record, &seen); len(got) != 0 {
		t.Errorf("control runs with a share left: %v", got)
	}
	k.unprepare(claims[1])
	if got := records(t, record, &seen); len(got) != 1 || !strings.HasSuffix(got[0], "|quit") {
		t.Errorf("control runs after the last share: %v, want quit", got)
	}
}
