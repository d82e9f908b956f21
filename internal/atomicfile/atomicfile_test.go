// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// entries lists dir's file names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{"first\n", "second, longer than the first\n", ""} {
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("content %q, want %q", got, content)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
		if names := entries(t, dir); len(names) != 1 || names[0] != "state.json" {
			t.Errorf("directory holds %q, want only state.json (no temporary file)", names)
		}
	}
}

func TestWriteFuncError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "index.html")
	if err := Write(path, []byte("old report"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFunc(path, 0o644, func(w io.Writer) error {
		if _, err := io.WriteString(w, "half of a new"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the writer's", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "old report" {
		t.Errorf("after a failed write the file holds %q, want the old %q", got, "old report")
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "index.html" {
		t.Errorf("directory holds %q, want only index.html (no temporary file)", names)
	}
}

func TestWriteFuncErrorNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new")
	if err := WriteFunc(path, 0o644, func(io.Writer) error { return errors.New("boom") }); err == nil {
		t.Fatal("no error")
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %q, want nothing", names)
	}
}

func TestWriteNoDir(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
