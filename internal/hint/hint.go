// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package hint measures how near a mistyped name is to the names a reader
// knows, for the "did you mean" of every command line and file format: one
// distance for flags, subcommands, YAML keys and GPU models.
package hint

// Distance is the optimal string alignment distance of a and b, in bytes:
// the fewest insertions, deletions, substitutions and swaps of two
// neighbours that make b from a ("V100M61" is one swap from "V100M16",
// "kitten" three edits from "sitting").
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
