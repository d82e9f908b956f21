// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCostDispatch builds gpuplane and gpuplane-cost side by side, as make
// build does, and runs `gpuplane cost` on the bundled day: the output,
// errors and exit status are gpuplane-cost's. Without gpuplane-cost beside
// it or on PATH, gpuplane says how to build it.
func TestCostDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir+"/", ".", "../gpuplane-cost").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	day, err := filepath.Abs("../../examples/cost/day.om")
	if err != nil {
		t.Fatal(err)
	}
	run := func(bin string, args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.Env = append(os.Environ(), "PATH=/nonexistent")
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}
	gp := filepath.Join(dir, "gpuplane")
	// The day costs 818.16 USD (internal/cost/cli's test works it out).
	out, _, code := run(gp, "cost", "--openmetrics", day, "--by", "model", "--format", "csv")
	if code != 0 || !strings.Contains(out, "total,,144,,,818.16,,") {
		t.Errorf("gpuplane cost: status %d, output:\n%s", code, out)
	}
	// Errors name the command as typed: "gpuplane cost:" through gpuplane
	// (before, "gpuplane-cost:"), "gpuplane-cost:" run directly.
	out, stderr, code := run(gp, "cost", "--openmetrics", day, "--by", "cluster")
	if code != 1 || out != "" || !strings.HasPrefix(stderr, `gpuplane cost: by "cluster"`) {
		t.Errorf("bad --by: status %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = run(gp, "cost", "--no-such-flag")
	if code != 1 || out != "" || !strings.HasPrefix(stderr, "gpuplane cost: unknown flag: --no-such-flag") {
		t.Errorf("bad flag: status %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, _, code = run(gp, "cost", "--help")
	if code != 0 || !strings.Contains(out, "  gpuplane cost (--prometheus URL | --openmetrics FILE) [flags]") {
		t.Errorf("--help: status %d, stdout %q", code, out)
	}
	out, stderr, code = run(filepath.Join(dir, "gpuplane-cost"), "--openmetrics", day, "--by", "cluster")
	if code != 1 || out != "" || !strings.HasPrefix(stderr, `gpuplane-cost: by "cluster"`) {
		t.Errorf("gpuplane-cost, bad --by: status %d, stdout %q, stderr %q", code, out, stderr)
	}
	// gpuplane alone, nothing on PATH.
	alone := filepath.Join(t.TempDir(), "gpuplane")
	data, err := os.ReadFile(gp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = run(alone, "cost", "--openmetrics", day)
	if code != 1 || out != "" || !strings.Contains(stderr, "make build") {
		t.Errorf("without gpuplane-cost: status %d, stdout %q, stderr %q", code, out, stderr)
	}
}
