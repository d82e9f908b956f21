// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSPDX keeps the license header on every Go, shell and make file and
// GitHub workflow git tracks, as Kubernetes' hack/verify-boilerplate does: within the first
// three lines, "SPDX-License-Identifier: Apache-2.0".
func TestSPDX(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "*.go", "*.sh", "Makefile", ".ci/run", ".github/workflows/*.yaml").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("git ls-files listed only %d files", len(files))
	}
	for _, f := range files {
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			t.Error(err)
			continue
		}
		sc := bufio.NewScanner(fh)
		found := false
		for i := 0; i < 3 && sc.Scan(); i++ {
			found = found || strings.HasSuffix(sc.Text(), "SPDX-License-Identifier: Apache-2.0")
		}
		fh.Close()
		if !found {
			t.Errorf("%s: no SPDX-License-Identifier: Apache-2.0 in its first three lines", f)
		}
	}
}
