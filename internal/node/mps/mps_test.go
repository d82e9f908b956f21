// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mps_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/node/mps"
	"github.com/gpuplane/gpuplane/internal/node/mps/mpstest"
)

// TestStartStop: Start launches the daemon (-d with its devices, pipe and
// log directories in the environment) and sends the settings, active
// threads then each device's pinned memory limit; starting again runs
// nothing; Stop sends quit (no devices named) and removes the directory;
// stopping again runs nothing. A failing -d leaves no daemon to stop.
func TestStartStop(t *testing.T) {
	record := mpstest.Fake(t)
	dir := t.TempDir()
	ctx := context.Background()
	var c mps.Control
	m := mps.New(dir, "gpu-a", []string{"GPU-a"})
	pct := 25
	s := mps.Settings{ActiveThreadPercentage: &pct, PinnedMemLimits: map[string]string{"GPU-a": "20480M"}}
	if err := c.Start(ctx, m, s); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, m, s); err != nil {
		t.Fatal(err)
	}
	pipe, logDir := filepath.Join(dir, "gpu-a", "pipe"), filepath.Join(dir, "gpu-a", "log")
	env := "|GPU-a|" + pipe + "|" + logDir + "|"
	seen := 0
	want := []string{"-d" + env, env + "set_default_active_thread_percentage 25", env + "set_default_device_pinned_mem_limit GPU-a 20480M"}
	if got := mpstest.Records(t, record, &seen); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !mps.Started(m) {
		t.Error("not marked started")
	}
	if err := c.Stop(ctx, mps.New(dir, "gpu-a", nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx, mps.New(dir, "gpu-a", nil)); err != nil {
		t.Fatal(err)
	}
	if got := mpstest.Records(t, record, &seen); strings.Join(got, "\n") != "||"+pipe+"|"+logDir+"|quit" {
		t.Errorf("stop runs %q, want one quit", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "gpu-a")); !os.IsNotExist(err) {
		t.Errorf("daemon directory left: %v", err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(record), "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, m, s); err == nil || !strings.Contains(err.Error(), "MPS control daemon gpu-a: nvidia-cuda-mps-control -d") {
		t.Errorf("failing -d: %v", err)
	}
	if err := c.Stop(ctx, m); err != nil {
		t.Errorf("stop after a failed launch: %v (no quit is due)", err)
	}
	if got := mpstest.Records(t, record, &seen); len(got) != 1 {
		t.Errorf("runs %q, want the failed -d only", got)
	}
}

// TestFind: the program is looked up on PATH; a missing one is an error.
func TestFind(t *testing.T) {
	mpstest.Fake(t)
	if err := (mps.Control{}).Find(); err != nil {
		t.Errorf("fake on PATH: %v", err)
	}
	if err := (mps.Control{Program: "no-such-mps-control"}).Find(); err == nil {
		t.Error("a missing program was found")
	}
}
