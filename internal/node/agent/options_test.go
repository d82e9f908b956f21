// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"strings"
	"testing"
)

// --node-feature-api writes the NodeFeature object of --node-name in
// --namespace: both are needed before anything starts.
func TestCheckNodeFeatureAPI(t *testing.T) {
	o := DefaultOptions()
	o.NodeFeatureAPI, o.NodeName, o.Namespace = true, "node-1", ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--node-feature-api needs --node-name (or $NODE_NAME) and --namespace (or $POD_NAMESPACE)") {
		t.Errorf("no namespace: %v", err)
	}
	o.Namespace = "gpu-system"
	if err := o.Check(); err != nil {
		t.Errorf("node and namespace given: %v", err)
	}
}

// --scheduler-choice lists the pods bound to --node-name: it needs one.
func TestCheckSchedulerChoice(t *testing.T) {
	o := DefaultOptions()
	o.SchedulerChoice, o.NodeName = true, ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--scheduler-choice needs --node-name (or $NODE_NAME)") {
		t.Errorf("no node name: %v", err)
	}
	o.NodeName = "node-1"
	if err := o.Check(); err != nil {
		t.Errorf("node name given: %v", err)
	}
}
