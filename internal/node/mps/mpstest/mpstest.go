// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package mpstest is a fake nvidia-cuda-mps-control for tests on machines
// without NVIDIA's driver.
package mpstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/node/mps"
)

// Fake puts a fake nvidia-cuda-mps-control first on PATH (t.Setenv: not
// for parallel tests) and returns the file it records to: each run
// appends a line "<args>|<CUDA_VISIBLE_DEVICES>|<CUDA_MPS_PIPE_DIRECTORY>|
// <CUDA_MPS_LOG_DIRECTORY>|<stdin>" (stdin read only without -d, as the
// real one reads commands). It exits 1 while a file "fail" is next to the
// record.
func Fake(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	script := fmt.Sprintf(`#!/bin/sh
in=""
if [ "$1" != "-d" ]; then in=$(cat); fi
printf '%%s|%%s|%%s|%%s|%%s\n' "$*" "$CUDA_VISIBLE_DEVICES" "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY" "$in" >> %s
if [ -e %s ]; then echo failing; exit 1; fi
`, record, filepath.Join(dir, "fail"))
	if err := os.WriteFile(filepath.Join(dir, mps.DefaultControl), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return record
}

// Records returns the fake's lines recorded in path since the last call
// (from *seen on).
func Records(t *testing.T, path string, seen *int) []string {
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
