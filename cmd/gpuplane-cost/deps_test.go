// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestCostDeps keeps gpuplane cost off the simulator, as TestOfflineDeps
// (cmd/gpuplane) keeps the offline tool off Kubernetes: it must link no
// internal/sim package and not internal/placement. The cost report shares
// only the chart kit and the report-directory writes (internal/htmlkit)
// with the simulator's report.
func TestCostDeps(t *testing.T) {
	const mod = "github.com/gpuplane/gpuplane/"
	testenv.NoDeps(t, mod+"internal/sim", mod+"internal/placement")
}
