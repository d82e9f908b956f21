// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mock

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With a MIG state file, a second backend (the agent restarted) sees the
// MIG devices the first created and not the one it destroyed, refuses a
// placement overlapping a live one, and gives a new device a UUID not
// used before.
func TestMIGStateFile(t *testing.T) {
	ctx := context.Background()
	p, err := ParseProfile("empty-mig.yaml", []byte(emptyMIG))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "mig.json")
	b, err := New(p, Options{MIGStateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(ctx)
	g0 := n.GPUs[0].UUID
	a, err := b.CreateMIG(ctx, g0, "3g.40gb", 4)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.CreateMIG(ctx, g0, "1g.10gb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DestroyMIG(ctx, g0, c.GPUInstanceID, c.UUID); err != nil {
		t.Fatal(err)
	}

	b2, err := New(p, Options{MIGStateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	live, err := b2.MIGInstances(ctx, g0)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].UUID != a.UUID || live[0].GPUInstanceID != 1 || live[0].Placement.Start != 4 {
		t.Fatalf("after a restart: %+v, want only %s (GPU instance 1 at slot 4)", live, a.UUID)
	}
	if n2, _ := b2.Discover(ctx); len(n2.GPUs[0].MIG) != 1 || n2.GPUs[0].MIG[0].UUID != a.UUID {
		t.Errorf("Discover after a restart: %+v", n2.GPUs[0].MIG)
	}
	if _, err := b2.CreateMIG(ctx, g0, "1g.10gb", 6); err == nil || !strings.Contains(err.Error(), "overlaps GPU instance 1") {
		t.Errorf("1g.10gb at 6 over the 3g.40gb at 4..7: %v", err)
	}
	d, err := b2.CreateMIG(ctx, g0, "1g.10gb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.UUID == a.UUID || d.UUID == c.UUID {
		t.Errorf("new device's UUID %s used before", d.UUID)
	}

	if err := os.WriteFile(state, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(p, Options{MIGStateFile: state}); err == nil || !strings.Contains(err.Error(), "mock MIG state file "+state) {
		t.Errorf("bad state file: %v", err)
	}
	if err := os.WriteFile(state, []byte(`{"gpus": {"GPU-nope": {}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(p, Options{MIGStateFile: state}); err == nil || !strings.Contains(err.Error(), "no GPU GPU-nope") {
		t.Errorf("unknown GPU in the state file: %v", err)
	}
}
