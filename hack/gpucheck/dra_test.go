// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi/gpucditest"
)

// twoGPUs is an A100 in MIG mode (GPU 0, left alone) and one without
// (GPU 1, the whole GPU the check prepares), driver 580.159.04.
const twoGPUs = `name: two
driverVersion: "580.159.04"
gpus:
  - productName: NVIDIA A100-SXM4-80GB
    migEnabled: true
  - productName: NVIDIA A100-SXM4-80GB
`

// fakeLoad stands for mpsload.py where there is no GPU: a matmul client
// runs at 400 TFLOP/s alone and at 48 % of it under
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 (issue 35's H200); an allocation
// fits under CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=<UUID>=<MiB>M or fails; a
// CUDA_MPS_PIPE_DIRECTORY that is not a directory on the host fails.
const fakeLoad = `import json, os, sys
pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")
if pipe is not None and not os.path.isdir(pipe):
    print(json.dumps({"error": "no pipe directory " + pipe}))
    sys.exit(1)
pct = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
if sys.argv[1] == "matmul":
    print(json.dumps({"tflops": 400.0 * (0.48 if pct == "50" else 1.0)}))
else:
    limit = os.environ.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "")
    mib = int(limit.rsplit("=", 1)[1].rstrip("M")) if limit else 1 << 30
    fits = float(sys.argv[2]) * 1024 <= mib
    print(json.dumps({"allocated": fits, "error": "" if fits else "CUDA out of memory"}))
`

// TestCheckDRA runs the DRA step of hack/gpu-check.sh on the mock with a
// fake driver tree and a fake nvidia-cuda-mps-control (the daemon starts
// and quits) and mpsload.py (fakeLoad): every line passes, in order: the
// driver's files found, the prepare latency, the whole GPU gpu-1 (one
// CDI ID), its spec's nodes and mounts present on the fake tree, a client
// alone, two MPS shares of 500 milliGPU and 20 GiB (50 % of the SMs,
// 20480 MiB pinned), their clients at 48 % of one alone each (within
// 30-70 %, run with the host's pipe directory), 24 GiB refused under
// 20 GiB, the smallest MIG device of GPU 0 (in MIG mode,
// empty) created with its spec and destroyed, and no spec left. The whole
// GPU's spec is copied out with the fake libcuda mounted; then, where
// this test may make a mount namespace (root, unshare), cdi_cuinit.py
// initialises the fake libcuda (cuInit returns 0, version 13000; one
// NVIDIA library mapped, from the spec's mount: the fake needs no other)
// through the spec's edits alone, and fails on the spec without its
// mounts (libcuda.so.1 not found).
func TestCheckDRA(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "nvidia-cuda-mps-control"), []byte("#!/bin/sh\ncat >/dev/null\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := mock.Open(writeProfile(t, twoGPUs), mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := b.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fake := gpucditest.New(t, n.DriverVersion)
	dir, err := os.MkdirTemp("", "gc") // short: the MPS pipe's socket path
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	specOut := filepath.Join(t.TempDir(), "cdi-gpu.json")
	load := filepath.Join(t.TempDir(), "mpsload.py")
	if err := os.WriteFile(load, []byte(fakeLoad), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := checkDRA(ctx, &out, b, n, draCheck{dir: dir, driverRoot: fake.Root, specOut: specOut, mps: true, mpsLoad: load}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		v, rest, _ := strings.Cut(l, " ")
		name, _, _ := strings.Cut(rest, ":")
		names = append(names, v+" "+name)
	}
	want := "PASS dra-driver-files,PASS dra-prepare-latency,PASS dra-whole,PASS dra-cdi-files,PASS dra-mps-alone,PASS dra-mps,PASS dra-mps," +
		"PASS dra-mps-throughput,PASS dra-mps-throughput,PASS dra-mps-memlimit,PASS mig-create,PASS dra-cdi-files,PASS mig-destroy,PASS dra-unprepare"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("lines %s, want %s:\n%s", got, want, out.String())
	}
	if !strings.Contains(out.String(), "CDI IDs [nvidia.com/gpu="+n.GPUs[1].UUID+"]") {
		t.Errorf("the whole GPU is not gpu-1 (%s):\n%s", n.GPUs[1].UUID, out.String())
	}
	data, err := os.ReadFile(specOut)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(fake.Lib("libcuda.so.1"))) {
		t.Fatalf("the copied spec mounts no %s:\n%s", fake.Lib("libcuda.so.1"), data)
	}
	cuInit(t, specOut, "PASS cdi-cuinit: cuInit(0) = 0, cuDriverGetVersion = 13000, 1 NVIDIA libraries mapped, from outside the spec: none")
	// A spec without the driver's mounts: libcuda.so.1 is not found.
	var spec map[string]any
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	edits := spec["devices"].([]any)[0].(map[string]any)["containerEdits"].(map[string]any)
	delete(edits, "mounts")
	bare := filepath.Join(t.TempDir(), "bare.json")
	data, _ = json.Marshal(spec)
	if err := os.WriteFile(bare, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cuInit(t, bare, "FAIL cdi-cuinit: ") // libcuda.so.1 not found, or (on a GPU machine) the host's from outside the spec
}

// cuInit runs cdi_cuinit.py on spec in a new mount namespace and checks
// its line starts with want; skipped where no namespace can be made.
func cuInit(t *testing.T, spec, want string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	if os.Geteuid() != 0 || exec.Command("unshare", "-m", "--propagation", "private", "true").Run() != nil {
		t.Skip("unshare -m is not allowed here (cdi_cuinit.py needs root)")
	}
	out, _ := exec.Command("unshare", "-m", "--propagation", "private", py, "cdi_cuinit.py", spec).CombinedOutput()
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("cdi_cuinit.py %s:\n%s\nwant a line starting %q", filepath.Base(spec), out, want)
	}
}
