// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package htmlkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CheckDir makes dir if needed and checks that files can be written in it,
// so that a run does not find out only at its end. Unless force, a dir that
// already holds a report (index.html or report.json) is an error.
func CheckDir(dir string, force bool) error {
	if !force {
		for _, name := range []string{"index.html", "report.json"} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return fmt.Errorf("%s already holds a report: %s (--force overwrites it)", dir, name)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".gpuplane-check-")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// MissingDirs returns the directories of path, path itself first, that do
// not exist yet, down to the first that does: what creating path creates.
// A command that writes a report into path lists them before its run and,
// when the run fails, gives them to RemoveEmptyDirs, so that a failed run
// leaves no empty report directory behind.
func MissingDirs(path string) []string {
	var out []string
	for d := filepath.Clean(path); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// RemoveEmptyDirs removes dirs (as MissingDirs lists them, innermost
// first) while they are empty; it stops at the first it cannot remove.
func RemoveEmptyDirs(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}
