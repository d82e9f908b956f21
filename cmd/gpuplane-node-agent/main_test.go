// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
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
