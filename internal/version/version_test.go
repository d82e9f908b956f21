// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name            string
		bi              *debug.BuildInfo
		version, commit string
		want            Info
	}{
		{"-X values win", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-x"}, Settings: vcs("abc", "true")},
			"v0.1.0", "0123", Info{"v0.1.0", "0123", "go1.26.8"}},
		{"go build in a clean checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260101000000-0123456789ab"}, Settings: vcs("0123456789abcdef", "false")},
			"", "", Info{"v0.0.0-20260101000000-0123456789ab", "0123456789abcdef", "go1.26.8"}},
		{"go build with uncommitted changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260101000000-0123456789ab+dirty"}, Settings: vcs("0123456789abcdef", "true")},
			"", "", Info{"v0.0.0-20260101000000-0123456789ab+dirty", "0123456789abcdef-dirty", "go1.26.8"}},
		{"go run: no VCS stamp", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"", "", Info{"devel", "unknown", "go1.26.8"}},
	} {
		if got := fromBuild(tc.bi, tc.version, tc.commit); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := (Info{"v1", "c", "go1.26.8"}).String("gpuplane"); got != "gpuplane version v1, commit c, go1.26.8" {
		t.Errorf("String = %q", got)
	}
}
