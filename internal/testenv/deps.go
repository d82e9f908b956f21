// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// NoDeps fails the test for every package that the package in the current
// directory links (go list -deps .) and that is one of banned or under one
// of them (a path prefix ending at a slash).
func NoDeps(t testing.TB, banned ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	for _, d := range deps {
		for _, b := range banned {
			if d == b || strings.HasPrefix(d, b+"/") {
				t.Errorf("depends on %s", d)
			}
		}
	}
}
