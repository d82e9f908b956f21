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
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// fakeMPS puts a fake nvidia-cuda-mps-control first on PATH: each run
// appends a line "<args>|<CUDA_VISIBLE_DEVICES>|<CUDA_MPS_PIPE_DIRECTORY>|
// <CUDA_MPS_LOG_DIRECTORY>|<stdin>" to the file it returns (stdin read
// only without -d, as the real one reads commands). It exits 1 while a
// file "fail" is next to the record, or "fail-<word>" for a run whose
// command starts with <word> ("fail-d" for -d, "fail-quit").
func fakeMPS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	script := fmt.Sprintf(`#!/bin/sh
in=""
word=d
if [ "$1" != "-d" ]; then in=$(cat); word=${in%%%% *}; fi
printf '%%s|%%s|%%s|%%s|%%s\n' "$*" "$CUDA_VISIBLE_DEVICES" "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY" "$in" >> %s
if [ -e %s ] || [ -e "%s-$word" ]; then echo failing; exit 1; fi
`, record, filepath.Join(dir, "fail"), filepath.Join(dir, "fail"))
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
// before anything runs. A control program failing at -d fails the
// prepare and leaves nothing: the daemon never ran, so it gets no quit,
// and unprepare runs nothing.
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
	d = k.start(b)
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

	// The control program fails at -d: prepare fails with its output; the
	// daemon never ran, so it is told nothing, and nothing stays: no
	// record, no directory, and unprepare runs nothing. Once it works,
	// the next prepare starts the daemon.
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
	if got := kinds(); got != "-d" {
		t.Errorf("runs while failing: %s, want -d", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(k.dirs.PluginDir, "mps")); len(entries) != 0 {
		t.Errorf("daemon directories after a failed start: %v", entries)
	}
	if _, held := d.Prepared()[fc.UID]; held {
		t.Error("the claim whose daemon failed to start is still recorded")
	}
	k.unprepare(fc)
	if got := kinds(); got != "" {
		t.Errorf("runs on unprepare after a failed start: %s, want none", got)
	}
	if err := os.Remove(fail); err != nil {
		t.Fatal(err)
	}
	if _, errStr := k.prepare(fc); errStr != "" {
		t.Fatalf("prepare once it works: %s", errStr)
	}
	if got := kinds(); got != "-d" {
		t.Errorf("runs once it works: %s, want -d", got)
	}
	k.unprepare(fc)
	if got := kinds(); got != "quit" {
		t.Errorf("runs on unprepare: %s, want quit", got)
	}
}

// TestPrepareMPSRollback: a daemon launched whose configuration fails is
// told to quit by the prepare's rollback, and nothing stays; where it
// does not quit either, the claim stays recorded and its unprepare tells
// it again, and succeeds once it quits.
func TestPrepareMPSRollback(t *testing.T) {
	record := fakeMPS(t)
	b, _ := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	seen := 0
	kinds := func() string {
		var out []string
		for _, l := range records(t, record, &seen) {
			f := strings.Split(l, "|")
			w, _, _ := strings.Cut(f[4], " ")
			out = append(out, f[0]+w)
		}
		return strings.Join(out, ",")
	}
	touch := func(name string) string {
		p := filepath.Join(filepath.Dir(record), name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mpsDirs := func() int {
		entries, _ := os.ReadDir(filepath.Join(k.dirs.PluginDir, "mps"))
		return len(entries)
	}
	cfg := `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50}}}`
	c := k.withConfig(k.claim("c", "gpu-1"), opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, cfg))

	setFail := touch("fail-set_default_active_thread_percentage")
	if _, errStr := k.prepare(c); !strings.Contains(errStr, "set_default_active_thread_percentage: exit status 1") {
		t.Errorf("failing configuration: %q", errStr)
	}
	if got := kinds(); got != "-d,set_default_active_thread_percentage,quit" {
		t.Errorf("runs: %s, want -d, the failing command, quit", got)
	}
	if _, held := d.Prepared()[c.UID]; held || mpsDirs() != 0 {
		t.Errorf("after the rollback: recorded %v, %d daemon directories", held, mpsDirs())
	}
	k.unprepare(c)
	if got := kinds(); got != "" {
		t.Errorf("runs on unprepare: %s, want none", got)
	}

	// quit fails too: the claim stays for its unprepare.
	quitFail := touch("fail-quit")
	if _, errStr := k.prepare(c); errStr == "" {
		t.Fatal("prepare with a failing configuration succeeded")
	}
	if got := kinds(); got != "-d,set_default_active_thread_percentage,quit" {
		t.Errorf("runs: %s", got)
	}
	if _, held := d.Prepared()[c.UID]; !held || mpsDirs() != 1 {
		t.Errorf("a daemon that does not quit: recorded %v, %d daemon directories; want recorded, 1", held, mpsDirs())
	}
	resp, err := k.dra.NodeUnprepareResources(context.Background(), &drapb.NodeUnprepareResourcesRequest{Claims: []*drapb.Claim{pbClaim(c)}})
	if err != nil || !strings.Contains(resp.Claims[string(c.UID)].GetError(), "quit: exit status 1") {
		t.Errorf("unprepare while quit fails: %v %v", resp, err)
	}
	if err := os.Remove(quitFail); err != nil {
		t.Fatal(err)
	}
	kinds()
	k.unprepare(c)
	if got := kinds(); got != "quit" {
		t.Errorf("runs on unprepare once quit works: %s, want quit", got)
	}
	if _, held := d.Prepared()[c.UID]; held || mpsDirs() != 0 {
		t.Errorf("after unprepare: recorded %v, %d daemon directories", held, mpsDirs())
	}
	if err := os.Remove(setFail); err != nil {
		t.Fatal(err)
	}
	if _, errStr := k.prepare(c); errStr != "" {
		t.Errorf("prepare once it all works: %s", errStr)
	}
}

// TestPrepareMPSWithoutProgram: on a node where the MPS control program
// is not found, the agent's claims under an MPS configuration are refused
// at prepare with a message naming it, before anything is held: no
// record, no daemon directory, no CDI spec; unprepare succeeds, and the
// same GPU is prepared for a claim without MPS.
func TestPrepareMPSWithoutProgram(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	b, _ := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	c := k.withConfig(k.claim("m", "gpu-1"), opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}}`))
	want := `claim default/m: device gpu-1: sharing strategy MPS needs NVIDIA's MPS control program, which the node agent cannot find (exec: "nvidia-cuda-mps-control": executable file not found in $PATH): this node refuses MPS claims until nvidia-cuda-mps-control is on the agent's PATH`
	if _, errStr := k.prepare(c); errStr != want {
		t.Errorf("MPS claim without the program:\n got %q\nwant %q", errStr, want)
	}
	if p := d.Prepared(); len(p) != 0 {
		t.Errorf("recorded %v", p)
	}
	for _, dir := range []string{filepath.Join(k.dirs.PluginDir, "mps"), k.dirs.CDIDir} {
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: %v", dir, entries)
		}
	}
	k.unprepare(c)
	if _, errStr := k.prepare(k.claim("plain", "gpu-1")); errStr != "" {
		t.Errorf("gpu-1 without MPS after the refusal: %s", errStr)
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
