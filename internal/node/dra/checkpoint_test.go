// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestCheckpointChecksum: a saved checkpoint loads back; one byte changed
// in it (the claim's name "c" made "d") is refused as corrupt, naming the
// file, and the plugin does not start over it; a version 1 file (no
// checksum) is read; an unknown version is refused.
func TestCheckpointChecksum(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, checkpointFile)
	cp := &Checkpoint{Version: checkpointVersion, Claims: map[types.UID]*PreparedClaim{"u": {Namespace: "default", Name: "c", State: PrepareCompleted,
		Devices: []PreparedDevice{{Requests: []string{"r0"}, Pool: node, Device: "gpu-1", GPUUUID: "GPU-1"}}}}}
	if err := cp.save(path); err != nil {
		t.Fatal(err)
	}
	got, err := loadCheckpoint(path)
	if err != nil || got.Claims["u"].Devices[0].Device != "gpu-1" || got.Checksum == 0 {
		t.Fatalf("load: %+v, %v", got, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`"name": "c"`), []byte(`"name": "d"`), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("nothing replaced")
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "checkpoint "+path+" is corrupt: checksum") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
	b, _ := mockNode(t, twoA100)
	if _, err := New(context.Background(), b, Config{NodeName: node, PluginDir: dir}); err == nil || !strings.Contains(err.Error(), "is corrupt") {
		t.Errorf("New over a corrupt checkpoint: %v", err)
	}

	v1 := `{"version":1,"claims":{"u":{"namespace":"default","name":"c","state":"PrepareCompleted","devices":[]}}}`
	if err := os.WriteFile(path, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := loadCheckpoint(path); err != nil || got.Claims["u"].Name != "c" || got.Version != checkpointVersion {
		t.Errorf("version 1: %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"version":3,"claims":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "version 3, want 1 or 2") {
		t.Errorf("version 3: %v", err)
	}
}
