// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package hint

import "testing"

// Worked by hand: kitten to sitting is k→s, e→i and +g; a swap of two
// neighbours is one edit, where Levenshtein counts two.
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"kitten", "sitting", 3}, {"V100M61", "V100M16", 1}, {"", "abc", 3}, {"abc", "", 3},
		{"format", "formta", 1}, {"nodes", "nodes", 0}, {"ab", "ba", 1}, {"ca", "abc", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
