// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package owners

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestNewMissingKubeconfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := New(p, "")
	if err == nil || !strings.Contains(err.Error(), "kubeconfig \""+p+"\"") {
		t.Errorf("error %v, want one naming the kubeconfig file", err)
	}
}
