// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package version tells which build of gpuplane is running: its version,
// VCS commit and Go version, as `gpuplane version` and every binary's
// --version print them.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time, e.g. by the Makefile's build target:
//
//	go build -ldflags "-X github.com/gpuplane/gpuplane/internal/version.version=v0.1.0 \
//	  -X github.com/gpuplane/gpuplane/internal/version.commit=$(git rev-parse HEAD)" ./cmd/...
//
// When empty, Get falls back to what the Go toolchain records in the binary.
var (
	version string
	commit  string
)

// Info is one build's identity.
type Info struct {
	// Version is the -X value, else the main module's version the Go
	// toolchain records (a tag, or a pseudo-version of the commit with
	// "+dirty" for uncommitted changes), else "devel".
	Version string
	// Commit is the -X value, else the VCS revision the Go toolchain
	// records ("-dirty" appended for uncommitted changes), else "unknown"
	// (go run and go test record none).
	Commit string
	// GoVersion is the Go toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string
}

// Get returns the running binary's build identity.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(bi, version, commit)
}

// fromBuild works out the Info from the build info (nil when unavailable)
// and the -X values.
func fromBuild(bi *debug.BuildInfo, version, commit string) Info {
	i := Info{Version: version, Commit: commit, GoVersion: runtime.Version()}
	if bi != nil {
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		if i.Commit == "" {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" && modified == "true" {
				rev += "-dirty"
			}
			i.Commit = rev
		}
	}
	if i.Version == "" {
		i.Version = "devel"
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	return i
}

// String returns the line a binary prints for --version, e.g.
// "gpuplane version v0.1.0, commit 0123abc, go1.26.8", with name the
// binary's name.
func (i Info) String(name string) string {
	return fmt.Sprintf("%s version %s, commit %s, %s", name, i.Version, i.Commit, i.GoVersion)
}
