// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package testenv locates shared test inputs: the public GPU cluster traces
// in ../shared/traces beside the repository.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TracesDir returns the path of ../shared/traces beside the repository,
// or $GPUPLANE_TRACES when set (a checkout elsewhere, e.g. a git
// worktree). Where it is absent the test is skipped, unless CI is set,
// when it fails: CI always has the traces.
func TracesDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "traces")
	if env := os.Getenv("GPUPLANE_TRACES"); env != "" {
		dir = env
	}
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but the traces are missing: %v", err)
		}
		t.Skipf("traces not found at %s (set up ../shared to run this test)", dir)
	}
	return dir
}

// Openb returns the path of one file of the Alibaba openb trace.
func Openb(t testing.TB, name string) string {
	return filepath.Join(TracesDir(t), "alibaba-gpu-v2023", name)
}
