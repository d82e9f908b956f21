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

// TestMetricsCompare runs metricscompare.py on the H200 under a
// bf16 load (nvidia-smi: 97 %, 655 W, 52 C): the agent's 96 %, 648.5 W,
// 51 C pass; a utilization of 12 % while the load runs fails (outside
// 20 points, and a loaded GPU must be over 50 %), as does 400 W (outside
// max(15 W, 15 %)); idle, nvidia-smi's "[N/A]" power is a SKIP; a MIG
// device's series (GPU_I_ID) is not the GPU's.
func TestMetricsCompare(t *testing.T) {
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
	scrape := func(util, power string) string {
		return write("scrape.txt", `# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",pci_bus_id="00000000:19:00.0",device="nvidia0",modelName="NVIDIA H200",Hostname="h"} `+util+`
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",GPU_I_ID="1",GPU_I_PROFILE="1g.18gb",Hostname="h"} 3
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",Hostname="h"} `+power+`
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-a",Hostname="h"} 51
`)
	}
	for _, tc := range []struct {
		util, power, smi, label string
		want                    []string
	}{
		{"96", "648.5", "GPU-a, 97, 655.0, 52\n", "load", []string{"PASS metrics-load-util GPU-a: agent 96, nvidia-smi 97", "PASS metrics-load-power GPU-a: agent 648.5, nvidia-smi 655", "PASS metrics-load-temp GPU-a: agent 51, nvidia-smi 52"}},
		{"12", "400", "GPU-a, 97, 655.0, 52\n", "load", []string{"FAIL metrics-load-util GPU-a: agent 12, nvidia-smi 97", "FAIL metrics-load-power GPU-a: agent 400, nvidia-smi 655", "PASS metrics-load-temp GPU-a: agent 51, nvidia-smi 52"}},
		{"0", "70", "GPU-a, 0, [N/A], 50\n", "idle", []string{"PASS metrics-idle-util GPU-a: agent 0, nvidia-smi 0", "SKIP metrics-idle-power GPU-a: agent 70.0, nvidia-smi None", "PASS metrics-idle-temp GPU-a: agent 51, nvidia-smi 50"}},
	} {
		out, err := exec.Command(py, "metricscompare.py", scrape(tc.util, tc.power), write("smi.csv", tc.smi), tc.label).CombinedOutput()
		fail := strings.HasPrefix(tc.want[0], "FAIL")
		if got := strings.Split(strings.TrimSpace(string(out)), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") || (err != nil) != fail {
			t.Errorf("util %s, power %s, %s: %v\n%s", tc.util, tc.power, tc.label, err, out)
		}
	}
}
