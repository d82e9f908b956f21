// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/version"
)

func TestVersionFlag(t *testing.T) {
	cmd := newNodeAgentCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	// A test binary carries no -X values or VCS stamp: devel, unknown.
	if want := version.Get().String("gpuplane-node-agent") + "\n"; out.String() != want {
		t.Errorf("--version printed %q, want %q", out.String(), want)
	}
}

// TestPruneLabelsFlag: --prune-labels runs agent.PruneLabels, which reads
// --kubeconfig (missing here), instead of the agent (which would first
// refuse --kubeconfig without --node-name).
func TestPruneLabelsFlag(t *testing.T) {
	cmd := newNodeAgentCmd()
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	cmd.SetArgs([]string{"--prune-labels", "--kubeconfig", missing})
	if err := cmd.Execute(); err == nil || !strings.HasPrefix(err.Error(), "--kubeconfig: ") {
		t.Errorf("--prune-labels --kubeconfig %s: %v, want the kubeconfig's error", missing, err)
	}
}
