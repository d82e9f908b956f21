// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/gang/workload"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestGangsOffSaid: on a kube-apiserver v1.37.2 with its defaults
// (GenericWorkload off, scheduling.k8s.io/v1beta1 not served) the webhook
// turns gangs off with an error that says what to turn on, rather than
// naming PodGroups that do not exist; gpuplane-scheduler without the gate
// says at start that gangs are off, for the gate and for the API.
func TestGangsOffSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	err := workload.Served(c.Client.Discovery())
	if !errors.Is(err, workload.ErrNotServed) || !strings.Contains(err.Error(), "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true") {
		t.Errorf("Served: %v, want ErrNotServed naming the flags", err)
	}
	gangs, err := startGangs(c.Config, c.Client)
	if gangs != nil || err != nil {
		t.Errorf("startGangs without the Workload API: %v %v, want no grouper and no error", gangs != nil, err)
	}
	s := startScheduler(t, c, false)
	s.logSays(t, "gangs off: the scheduler runs without --feature-gates=GenericWorkload=true")
	s.logSays(t, "gangs off\" err=\"the API server does not serve scheduling.k8s.io/v1beta1 workloads and podgroups")
}
