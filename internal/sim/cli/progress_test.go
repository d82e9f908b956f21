// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestProgressLine: 3 of 12 runs in 6 s: 2 s a run, 9 left, about 18 s.
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{3, 12, 6 * time.Second, "simulate: 3/12 runs, 6 s, about 18 s left"},
		{0, 12, 1200 * time.Millisecond, "simulate: 0/12 runs, 1 s"},
		{1, 25, 10 * time.Second, "simulate: 1/25 runs, 10 s, about 4 min 00 s left"},
		{12, 12, 65 * time.Second, "simulate: 12/12 runs, 1 min 05 s"},
	} {
		if got := ProgressLine(tc.done, tc.total, tc.elapsed); got != tc.want {
			t.Errorf("%d/%d in %v: %q, want %q", tc.done, tc.total, tc.elapsed, got, tc.want)
		}
	}
}

// TestIsTerminal: a pipe and a buffer are not terminals (progress prints
// rarely there); a character device is.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer taken for a terminal")
	}
	if f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer f.Close()
		if !IsTerminal(f) {
			t.Errorf("%s, a character device, not taken for one", os.DevNull)
		}
	}
}
