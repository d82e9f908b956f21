// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/gpuplane/gpuplane/internal/version"
)

func TestVersionFlag(t *testing.T) {
	cmd := newWebhookCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	// A test binary carries no -X values or VCS stamp: devel, unknown.
	if want := version.Get().String("gpuplane-webhook") + "\n"; out.String() != want {
		t.Errorf("--version printed %q, want %q", out.String(), want)
	}
}

func TestBadPolicyFile(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/policy.yaml"
	if err := os.WriteFile(f, []byte("apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\nteam: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := newWebhookCmd()
	cmd.SetArgs([]string{"--policy", f})
	if err := cmd.Execute(); err == nil || err.Error() != f+`:3: team: unknown field; did you mean "teams"?` {
		t.Errorf("got %v", err)
	}
}

// The limits' flags reach the webhook's options: a bad value is refused
// before anything is read.
func TestLimitFlags(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"--read-timeout=-1s", "--read-timeout -1s is negative (0: no limit)"},
		{"--read-header-timeout=-2s", "--read-header-timeout -2s is negative (0: no limit)"},
		{"--write-timeout=-3s", "--write-timeout -3s is negative (0: no limit)"},
		{"--idle-timeout=-4s", "--idle-timeout -4s is negative (0: no limit)"},
		{"--max-connections=-1", "--max-connections -1 is negative (0: no limit)"},
		{"--max-request-bytes=0", "--max-request-bytes 0 is not positive"},
	} {
		cmd := newWebhookCmd()
		cmd.SetArgs([]string{c.arg, "--policy", "/nonexistent/policy.yaml"})
		if err := cmd.Execute(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.arg, err, c.want)
		}
	}
}
