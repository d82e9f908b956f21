// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestPruneLabelsCredentials: without a readable kubeconfig, or outside a
// pod without one, PruneLabels says which credentials failed. (labels.Prune,
// which it runs, is tested against a fake clientset in internal/node/labels.)
func TestPruneLabelsCredentials(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for kubeconfig, want := range map[string]string{
		missing: "--kubeconfig: ",
		"":      "--prune-labels without --kubeconfig: ",
	} {
		err := PruneLabels(context.Background(), kubeconfig)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("PruneLabels(%q) = %v, want an error starting %q", kubeconfig, err, want)
		}
	}
}
