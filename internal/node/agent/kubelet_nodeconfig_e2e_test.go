// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// TestRealKubeletNodeConfig: the agent with --config-dir (two
// configurations, as a mounted ConfigMap) on an unlabelled node takes the
// configuration named default (fallback named) and serves realProfile's 8
// GPUs. Labelled nvidia.com/device-plugin.config=shared, it exits with an
// error naming the change; started again, as its DaemonSet does, it
// serves the shared configuration's 2 replicas of each GPU, 16.
func TestRealKubeletNodeConfig(t *testing.T) {
	e := startRealEnv(t, realProfile, "version: v1\n")
	dir := t.TempDir()
	for name, cfg := range map[string]string{
		"default": "version: v1\n",
		"shared":  "version: v1\nsharing:\n  timeSlicing:\n    resources:\n      - name: nvidia.com/gpu\n        replicas: 2\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--config=", "--config-dir", dir, "--kubeconfig", e.c.Kubeconfig}
	e.startAgent(args...)
	e.waitResource(gpuresource.GPU, 8, 8)

	patch := []byte(`{"metadata":{"labels":{"nvidia.com/device-plugin.config":"shared"}}}`)
	if _, err := e.c.Client.CoreV1().Nodes().Patch(e.ctx, e.node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.a.exited.Done():
	case <-e.ctx.Done():
		t.Fatalf("the agent did not exit on the label change:\n%s", e.log())
	}
	err := e.a.cmd.Wait()
	e.a.stopped = true
	want := `the node's configuration changed: node label nvidia.com/device-plugin.config="shared" selects configuration "shared", not "default"`
	if err == nil || !strings.Contains(e.log(), want) {
		t.Fatalf("agent exit %v, want an error with %q:\n%s", err, want, e.log())
	}

	e.startAgent(args...)
	e.waitResource(gpuresource.GPU, 16, 16)
}
