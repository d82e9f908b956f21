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
