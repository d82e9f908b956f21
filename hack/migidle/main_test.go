// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCount by hand: one DGX A100 (8 GPUs, 128 cores). GPU 0 holds a
// 4g.40gb (571) and a 2g.20gb (285): round(856 × 7 / 1000) = 6 slices
// held, 1 idle; GPU 1 one whole GPU (not MIG); d failed. CPU held: 121 +
// 2 + 2 cores = 125, 3 free: under 4, so the idle slice is stranded.
func TestCount(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pods := write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,121000,1024,1,500\nb,2000,1024,1,250\nc,2000,1024,1,1000\nd,2000,1024,1,500\n")
	pl := write("pl.csv", "sharing,policy,seed,seq,pod,node,gpus,gpu_milli,start_seconds,wait_seconds,failed_reason\n"+
		"mig,fgd,42,1,a,a100-80gb-0,0,571,,,\nmig,fgd,42,2,b,a100-80gb-0,0,285,,,\nmig,fgd,42,3,c,a100-80gb-0,1,1000,,,\nmig,fgd,42,4,d,,,,,,no_room\n")
	var out strings.Builder
	if err := count("A100-80GB x 1", pods, []string{pl}, &out); err != nil {
		t.Fatal(err)
	}
	want := "fgd seed 42: 1 idle slices on MIG GPUs, 1 on nodes with under 4 cores free\nall 1 runs: 1 idle slices on MIG GPUs, 1 on nodes with under 4 cores free\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if err := count("A100-80GB x 1", pods, []string{pods}, &out); err == nil || !strings.Contains(err.Error(), "pods.csv:1: want simulate --placements' header") {
		t.Errorf("a pod list as placements: %v", err)
	}
}
