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
// (deploy/scheduler/config.yaml) and no leader election; it is a
// component of c (named "gpuplane-scheduler"): a crash closes c.Exited,
// and Stop stops it. Without edits GPUPlacement runs with policy fgd and
// tieBreak "first", so that placements repeat; edits, when given, change
// the decoded configuration instead (Shipped keeps it as shipped).
func StartGPUplaneSchedulerT(t testing.TB, c *Cluster, edits ...func(conf map[string]any)) {
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
	if len(edits) == 0 {
		edits = append(edits, repeatable)
	}
	for _, e := range edits {
		e(conf)
	}
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

// repeatable sets GPUPlacement's policy fgd and tieBreak "first".
func repeatable(conf map[string]any) {
	profile := conf["profiles"].([]any)[0].(map[string]any)
	profile["pluginConfig"] = []any{map[string]any{"name": "GPUPlacement", "args": map[string]any{"policy": "fgd", "tieBreak": "first"}}}
}

// Shipped keeps the shipped configuration as it is.
func Shipped(map[string]any) {}

// DefaultProfileOnly replaces the profiles by upstream's default one
// (default-scheduler), as a cluster scheduling DRA claims with
// kube-scheduler's own plugins has.
func DefaultProfileOnly(conf map[string]any) {
	conf["profiles"] = []any{map[string]any{"schedulerName": "default-scheduler"}}
}
