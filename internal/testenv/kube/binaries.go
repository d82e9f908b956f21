// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// binariesTxt lists the programs, their versions and how they are built;
// hack/build-controlplane.sh reads the same file.
//
//go:embed binaries.txt
var binariesTxt string

// Version returns the version of a program listed in binaries.txt
// ("etcd", "kube-apiserver", "kubectl", "kwok", "containerd"), or "" for an
// unknown name.
func Version(name string) string {
	for _, line := range strings.Split(binariesTxt, "\n") {
		f := strings.Fields(line)
		if (len(f) == 4 || len(f) == 5) && f[0] == name {
			return f[1]
		}
	}
	return ""
}

// CacheDir is where hack/build-controlplane.sh puts the programs:
// $GPUPLANE_CACHE/bin, by default $HOME/.cache/gpuplane/bin.
func CacheDir() string {
	if d := os.Getenv("GPUPLANE_CACHE"); d != "" {
		return filepath.Join(d, "bin")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "gpuplane", "bin")
}

// Find returns the path of a built program, CacheDir()/<name>-<version>, or
// an error that says how to build it.
func Find(name string) (string, error) {
	v := Version(name)
	if v == "" {
		return "", fmt.Errorf("%s is not in internal/testenv/kube/binaries.txt", name)
	}
	p := filepath.Join(CacheDir(), name+"-"+v)
	fi, err := os.Stat(p)
	if err == nil && (fi.IsDir() || fi.Mode()&0o111 == 0) {
		err = errors.New("not an executable file")
	}
	if err != nil {
		return "", fmt.Errorf("%s %s not found at %s (run hack/build-controlplane.sh): %w", name, v, p, err)
	}
	return p, nil
}

// Binary returns the path of a built program for a test. Where it is
// missing the test is skipped, unless CI is set, when it fails: .ci/run
// builds every program first.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p, err := Find(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but a control-plane program is missing: %v", err)
		}
		t.Skip(err)
	}
	return p
}
