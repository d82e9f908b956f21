// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
)

// binary is one program of the image, built from ./cmd/<Name> into
// /usr/bin/<Name>.
type binary struct {
	Name string
	// Cgo: built with CGO_ENABLED=1 and linked against the image's glibc.
	// Only the node agent needs it (go-nvml dlopens libnvidia-ml.so.1);
	// the others are static, so they run without the image's libc too.
	Cgo bool
}

// binaries is every role's binary: the node agent (the GPU node
// DaemonSet), the scheduler, the webhook, the cost server and the offline
// tool, which `gpuplane cost` needs beside gpuplane-cost.
var binaries = []binary{
	{Name: "gpuplane"},
	{Name: "gpuplane-cost"},
	{Name: "gpuplane-node-agent", Cgo: true},
	{Name: "gpuplane-scheduler"},
	{Name: "gpuplane-webhook"},
}

// platform is one image platform; Arch is GOARCH and Debian's architecture
// alike (amd64, arm64).
type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }

// ccEnv is the variable that names the C compiler for a cross build of
// the node agent, e.g. CC_linux_arm64=aarch64-linux-gnu-gcc.
func (p platform) ccEnv() string { return "CC_" + p.OS + "_" + p.Arch }

// goBuild builds every binary for p into dir with fixed flags, so the
// same source, Go toolchain and C compiler give the same bytes:
// -trimpath (no local paths), -buildvcs=false (no VCS stamp; version and
// commit are given with -X), -ldflags -s -w (no symbol table or DWARF),
// GOAMD64=v1 / GOARM64=v8.0 whatever the environment says, and the
// Makefile's CGO_CFLAGS for the agent. Output of the go command goes to
// log.
func goBuild(ctx context.Context, root string, p platform, version, commit, dir string, log io.Writer) error {
	ldflags := "-s -w -X github.com/gpuplane/gpuplane/internal/version.version=" + version +
		" -X github.com/gpuplane/gpuplane/internal/version.commit=" + commit
	env := append(os.Environ(),
		"GOOS="+p.OS, "GOARCH="+p.Arch, "GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=readonly",
		"CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
	for _, cgo := range []bool{false, true} {
		args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", dir + "/"}
		for _, b := range binaries {
			if b.Cgo == cgo {
				args = append(args, "./cmd/"+b.Name)
			}
		}
		e := append(slices.Clip(env), "CGO_ENABLED=0")
		if cgo {
			e = append(slices.Clip(env), "CGO_ENABLED=1")
			if p.OS != runtime.GOOS || p.Arch != runtime.GOARCH {
				cc := os.Getenv(p.ccEnv())
				if cc == "" {
					return fmt.Errorf("%s: the node agent needs cgo: set %s to a C compiler for %s (Debian: apt-get install gcc-aarch64-linux-gnu; %s=aarch64-linux-gnu-gcc)", p, p.ccEnv(), p, p.ccEnv())
				}
				e = append(e, "CC="+cc)
			}
		}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, e, log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: go %v: %w", p, args, err)
		}
	}
	return nil
}
