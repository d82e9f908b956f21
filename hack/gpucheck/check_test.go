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
)

// TestFacts: the mock H200 of issue 35 (143771 MiB, 615.125 MiB reserved,
// 1011 MiB used) gives nvidia-smi's figures (used excludes reserved) and
// 132 SMs from the catalog; an unknown board's 0 SMs is a FAIL line.
func TestFacts(t *testing.T) {
	b, err := mock.Open(writeProfile(t, `name: h200
gpus:
  - productName: NVIDIA H200
    memoryMiB: 143771
    telemetry: {memoryUsedMiB: 1011, memoryReservedMiB: 615.125}
  - productName: NVIDIA Unknown Board
    memoryMiB: 1024
`), mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := b.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := facts(ctx, b, n)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "facts.json")
	var out bytes.Buffer
	if err := writeFacts(&out, path, fs); err != nil {
		t.Fatal(err)
	}
	var got []fact
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	h := got[0]
	if len(got) != 2 || h.Multiprocessors != 132 || h.FBUsedMiB != 1011 || h.FBReservedMiB != 615.125 || h.FBFreeMiB != 143771-615.125-1011 || h.MemoryMiB != 143771 {
		t.Errorf("facts %+v", got)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "PASS sm-count ") || !strings.HasPrefix(lines[1], "FAIL sm-count ") {
		t.Errorf("verdicts:\n%s", out.String())
	}
}

// TestCheckMPS: on the mock DGX H100 (81559 MiB per GPU), with a fake
// nvidia-cuda-mps-control that answers the two queries as the real one
// would after the agent's defaults (50 %, 81559/2 = 40779 MiB), every
// line of the MPS check passes: 16 replicas of 8 GPUs, Allocate's
// environment and mounts, the daemon's defaults.
func TestCheckMPS(t *testing.T) {
	bin := t.TempDir()
	script := `#!/bin/sh
[ "$1" = "-d" ] && exit 0
read cmd arg
case "$cmd" in
get_default_active_thread_percentage) echo 50.0 ;;
get_default_device_pinned_mem_limit) echo 40779M ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "nvidia-cuda-mps-control"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := mock.Open("dgx-h100", mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := b.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gc") // short: unix socket paths
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var out bytes.Buffer
	if err := checkMPS(ctx, &out, b, n, dir); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || strings.Contains(out.String(), "FAIL") || !strings.HasPrefix(lines[0], "PASS mps-replicas: 16 devices") {
		t.Errorf("MPS check:\n%s", out.String())
	}
}

func writeProfile(t *testing.T, y string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFBCompare runs fbcompare.py (hack/gpu-check.sh's comparison with
// nvidia-smi) on the H200 figures of issue 35: the corrected agent (used
// 0, reserved 615.125 of 143771 MiB) passes against nvidia-smi's used 0,
// reserved 616; the v1 reading (used 615.1, no reserved) fails.
func TestFBCompare(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	smi := write("smi.csv", "GPU-a, 0, 616, 143771\n")
	for _, tc := range []struct {
		facts string
		fail  bool
	}{
		{`[{"uuid":"GPU-a","fbUsedMiB":0,"fbFreeMiB":143155.875,"fbReservedMiB":615.125}]`, false},
		{`[{"uuid":"GPU-a","fbUsedMiB":615.1,"fbFreeMiB":143155.9,"fbReservedMiB":-1}]`, true},
	} {
		out, err := exec.Command(py, "fbcompare.py", write("facts.json", tc.facts), smi).CombinedOutput()
		if failed := err != nil; failed != tc.fail || strings.Contains(string(out), "FAIL") != tc.fail {
			t.Errorf("facts %s: %v\n%s", tc.facts, err, out)
		}
	}
}
