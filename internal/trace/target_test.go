// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

func TestReadTargetPods(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pods.csv")
	csv := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,500,\np1,8000,16384,2,1000,V100M16|V100M32\n"
	if err := os.WriteFile(f, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	pods, err := ReadTargetPods(f)
	if err != nil {
		t.Fatal(err)
	}
	v16, _ := gpu.ModelID("V100M16")
	v32, _ := gpu.ModelID("V100M32")
	want := []cluster.Pod{
		{Name: "p0", CPUMilli: 4000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 500},
		{Name: "p1", CPUMilli: 8000, MemoryMiB: 16384, NumGPU: 2, GPUMilli: 1000, Models: cluster.ModelSet(1<<uint(v16) | 1<<uint(v32))},
	}
	if len(pods) != 2 || pods[0] != want[0] || pods[1] != want[1] {
		t.Errorf("pods %+v\nwant %+v", pods, want)
	}
	builtin, err := ReadTargetPods("")
	if err != nil || len(builtin) != BuiltinTargetPods {
		t.Errorf("built-in: %d pods, %v; want %d", len(builtin), err, BuiltinTargetPods)
	}
	if _, err := ReadTargetPods(filepath.Join(dir, "none.csv")); err == nil {
		t.Error("a missing file is no error")
	}
}
