// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodSum = "b59b0625cd1a791375d40dab23a4d5d3d0641e3d0a773501becdc3725b7f99cf"

// TestReadLockErrors: each bad line is refused naming the file, the line
// and what is wrong.
func TestReadLockErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"libc6 2.41 amd64 " + goodSum, ":3: 4 fields, want 5"},
		{"libc6 2.41 amd64 abc pool/main/g/glibc/x.deb", `:3: sha256 "abc": want 64 lowercase hex digits`},
		{"libc6 2.41 amd64 " + strings.ToUpper(goodSum) + " pool/main/g/glibc/x.deb", ":3: sha256"},
		{"libc6 2.41 amd64 " + goodSum + " pool/../../etc/x.deb", `:3: path "pool/../../etc/x.deb"`},
		{"libc6 2.41 amd64 " + goodSum + " dists/x.deb", `:3: path "dists/x.deb"`},
	} {
		p := filepath.Join(t.TempDir(), "debian.lock")
		if err := os.WriteFile(p, []byte("# comment\n\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readLock(p)
		if err == nil || !strings.Contains(err.Error(), p+c.want) {
			t.Errorf("%q: error %v, want one with %q", c.line, err, p+c.want)
		}
	}
}

// TestForArch: an image takes its architecture's lines and those of
// "all"; a package without a line for the architecture is an error.
func TestForArch(t *testing.T) {
	lock := []debPkg{
		{Name: "libc6", Arch: "amd64"}, {Name: "libc6", Arch: "arm64"}, {Name: "ca-certificates", Arch: "all"},
	}
	got, err := forArch(lock, "arm64")
	if err != nil || len(got) != 2 || got[0].Arch != "arm64" || got[1].Name != "ca-certificates" {
		t.Errorf("arm64: %+v, %v; want libc6 arm64 and ca-certificates", got, err)
	}
	if _, err := forArch(lock, "riscv64"); err == nil || !strings.Contains(err.Error(), "has no line for architecture riscv64") {
		t.Errorf("riscv64: %v, want a missing-line error", err)
	}
}

// TestLockFile: the committed lock reads, and pins libc6 for both image
// architectures and ca-certificates.
func TestLockFile(t *testing.T) {
	pkgs, err := readLock("debian.lock")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		got, err := forArch(pkgs, arch)
		if err != nil || len(got) != 2 {
			t.Errorf("%s: %+v, %v; want libc6 and ca-certificates", arch, got, err)
		}
	}
}
