// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package htmlkit

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestMissingDirs: with root/a existing, creating root/a/b/c creates
// root/a/b/c and root/a/b; removing them after a failed run leaves root/a,
// and a directory that holds a file stays.
func TestMissingDirs(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	if err := os.Mkdir(a, 0o755); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(a, "b", "c")
	made := MissingDirs(c + "/")
	want := []string{c, filepath.Join(a, "b")}
	if !reflect.DeepEqual(made, want) {
		t.Fatalf("MissingDirs = %q, want %q", made, want)
	}
	if err := os.MkdirAll(c, 0o755); err != nil {
		t.Fatal(err)
	}
	// b holds a file besides c: c goes, b stays.
	if err := os.WriteFile(filepath.Join(a, "b", "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveEmptyDirs(made)
	if _, err := os.Stat(c); !os.IsNotExist(err) {
		t.Errorf("%s still there (%v)", c, err)
	}
	if _, err := os.Stat(filepath.Join(a, "b")); err != nil {
		t.Errorf("a/b, which holds a file, was removed: %v", err)
	}
	if got := MissingDirs(a); got != nil {
		t.Errorf("MissingDirs(existing) = %q, want none", got)
	}
}
