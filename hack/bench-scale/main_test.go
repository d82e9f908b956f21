// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import "testing"

// TestRatio: k=1 at 0.58 s (0.13 CPU s) and k=40 at 18.36 s (5.26) is
// 18.36/0.58/40 = 0.79 and 5.26/0.13/40 = 1.01 (docs/simulate-validation.md); k=10
// to k=40 from 3.14 s (1.14) is 18.36/3.14/4 = 1.46 and 5.26/1.14/4 =
// 1.15; one factor gives no line.
func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		firstK, lastK                  int
		first, last, firstCPU, lastCPU float64
		want                           string
	}{
		{1, 40, 0.58, 18.36, 0.13, 5.26, "time(k=40) / time(k=1) / 40 = 0.79 wall, 1.01 CPU (1 is linear)"},
		{10, 40, 3.14, 18.36, 1.14, 5.26, "time(k=40) / time(k=10) / (40/10) = 1.46 wall, 1.15 CPU (1 is linear)"},
		{40, 40, 14.11, 14.11, 5.58, 5.58, ""},
	} {
		if got := ratio(tc.firstK, tc.lastK, tc.first, tc.last, tc.firstCPU, tc.lastCPU); got != tc.want {
			t.Errorf("ratio(%d, %d) = %q, want %q", tc.firstK, tc.lastK, got, tc.want)
		}
	}
}
