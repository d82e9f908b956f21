// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"strconv"
	"strings"
)

func pct(v float64) string  { return strconv.FormatFloat(100*v, 'f', 2, 64) }
func num1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func num0(v float64) string { return thousands(int(math.Round(v))) }
func usd(v float64) string  { return strconv.FormatFloat(v, 'f', 2, 64) }

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// duration formats seconds for a reader: s, min, h or d; "unbounded" for
// +Inf (a p95 wait when more than 5% of pods never started).
func duration(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "unbounded"
	case math.IsNaN(s):
		return "–"
	case s < 60:
		return strconv.FormatFloat(s, 'f', 0, 64) + " s"
	case s < 3600:
		return strconv.FormatFloat(s/60, 'f', 1, 64) + " min"
	case s < 2*86400:
		return strconv.FormatFloat(s/3600, 'f', 2, 64) + " h"
	}
	return strconv.FormatFloat(s/86400, 'f', 2, 64) + " d"
}

// count writes n things: "1 node", "1,213 nodes".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return thousands(n) + " " + thing + "s"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// hours writes seconds as hours with 2 decimals, "unbounded" for +Inf.
func hours(s float64) string {
	if math.IsInf(s, 1) {
		return "unbounded"
	}
	return strconv.FormatFloat(s/3600, 'f', 2, 64)
}
