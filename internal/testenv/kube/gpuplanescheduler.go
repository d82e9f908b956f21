// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// SchedulerName is the profile of gpuplane-scheduler's shipped
// configuration (deploy/scheduler/config.yaml) that GPU pods name.
const SchedulerName = "gpuplane"

var (
	schedOnce sync.Once
	schedBin  string
	schedErr  error
)

// repoRoot is the repository's root, from this file's path.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// buildScheduler builds cmd/gpuplane-scheduler once per test binary.
func buildScheduler() (string, error) {
	schedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpuplane-scheduler-bin-")
		if err != nil {
			schedErr = err
			return
		}
		schedBin = filepath.Join(dir, "gpuplane-scheduler")
		cmd := exec.Command("go", "build", "-o", schedBin, "github.com/gpuplane/gpuplane/cmd/gpuplane-scheduler")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			schedErr = fmt.Errorf("go build gpuplane-scheduler: %v\n%s", err, out)
		}
	})
	return schedBin, schedErr
}

// StartGPUplaneSchedulerT runs gpuplane-scheduler (built from this
// repository) against c with the shipped configuration
// (deploy/scheduler/config.yaml), no leader election, and GPUPlacement's
// tieBreak "first", so that placements repeat; it is a component of c
// (named "gpuplane-scheduler"): a crash closes c.Exited, and Stop stops it.
func StartGPUplaneSchedulerT(t testing.TB, c *Cluster) {
	t.Helper()
	bin, err := buildScheduler()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(), "deploy", "scheduler", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	conf["clientConnection"] = map[string]any{"kubeconfig": c.Kubeconfig, "qps": 1000, "burst": 2000}
	conf["leaderElection"] = map[string]any{"leaderElect": false}
	profile := conf["profiles"].([]any)[0].(map[string]any)
	profile["pluginConfig"] = []any{map[string]any{"name": "GPUPlacement", "args": map[string]any{"policy": "fgd", "tieBreak": "first"}}}
	if b, err = yaml.Marshal(conf); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(c.Dir, "gpuplane-scheduler.yaml")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.start("gpuplane-scheduler", bin, nil, "--config="+cfg, "--secure-port=0", "-v=2"); err != nil {
		t.Fatal(err)
	}
}
