// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// workloadAPIWarning opens the install notes' warning that gangs are off.
const workloadAPIWarning = "WARNING: the API server does not serve scheduling.k8s.io/v1beta1 Workload"

// TestNotesWorkloadAPI: on a kube-apiserver v1.37.2 with its defaults
// (GenericWorkload off), the install notes of the scheduler say that gangs
// are off and what to turn on; TestChartInstalls checks that they say
// nothing of it where the Workload API is served. A server-side dry run:
// helm reads the API server's discovery, creates nothing.
func TestNotesWorkloadAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	helmBin(t)
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	out := helm(t, "install", release, chart, "--dry-run=server", "--kubeconfig", c.Kubeconfig, "--namespace", namespace, "--set", "scheduler.enabled=true")
	if !strings.Contains(out, workloadAPIWarning) || !strings.Contains(out, "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true") {
		t.Errorf("notes without the Workload API lack the warning:\n%s", out)
	}
	// The node agent alone schedules nothing: no warning.
	if out := helm(t, "install", release, chart, "--dry-run=server", "--kubeconfig", c.Kubeconfig, "--namespace", namespace); strings.Contains(out, workloadAPIWarning) {
		t.Errorf("notes of the node agent alone warn:\n%s", out)
	}
}
