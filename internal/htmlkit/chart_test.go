// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package htmlkit

import (
	"regexp"
	"strings"
	"testing"
)

// texts returns the text of the elements of class cls in an SVG.
func texts(svg, cls string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`class="`+cls+`"[^>]*>([^<]*)<`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestChartAxesFitData: data from x 0 to 130 and y 10 to 95. The x axis
// ends at 130 (no room to 150): ticks every 20 from 0 to 120 and the line
// ends on the right edge of the plot (x = 720 − 160 = 560). The y axis
// runs 4% of the range (3.4) beyond the data, 6.6 to 98.4: ticks every 20
// from 20 to 80, no 0 and no 100.
func TestChartAxesFitData(t *testing.T) {
	svg := Chart("t", Axis{Label: "x"}, Axis{Label: "y"}, []Series{{Name: "a", X: []float64{0, 130}, Y: []float64{10, 95}}})
	if got := strings.Join(texts(svg, "xtick"), " "); got != "0 20 40 60 80 100 120" {
		t.Errorf("x ticks %q", got)
	}
	if got := strings.Join(texts(svg, "ytick"), " "); got != "20 40 60 80" {
		t.Errorf("y ticks %q", got)
	}
	if !regexp.MustCompile(`points="64\.0,[0-9.]+ 560\.0,[0-9.]+"`).MatchString(svg) {
		t.Errorf("line does not span the plot from 64 to 560:\n%s", svg)
	}
	// Log axis of seconds from 1 s to 2 h: the duration ticks inside.
	svg = Chart("t", Axis{Log: true, Ticks: DurationTicks}, Axis{}, []Series{{X: []float64{1, 7200}, Y: []float64{0, 1}}})
	if got := strings.Join(texts(svg, "xtick"), "|"); got != "1 s|10 s|1 min|10 min|1 h" {
		t.Errorf("log ticks %q", got)
	}
}

// TestChartConstantZero: a replay in which no pod ever waits draws the
// waiting-pods chart of a constant 0. The axis is widened to 0..1 (plus 4%
// above), ticks 0.0 to 1.0 every 0.2, never below 0 (it ran from -1 to 1).
func TestChartConstantZero(t *testing.T) {
	svg := Chart("t", Axis{Label: "x"}, Axis{Label: "y"}, []Series{{Name: "a", X: []float64{0, 10}, Y: []float64{0, 0}}})
	if got := strings.Join(texts(svg, "ytick"), " "); got != "0.0 0.2 0.4 0.6 0.8 1.0" {
		t.Errorf("y ticks %q", got)
	}
	svg = Chart("t", Axis{Label: "x"}, Axis{Label: "y"}, []Series{{Name: "a", X: []float64{0, 10}, Y: []float64{-3, -3}}})
	if got := strings.Join(texts(svg, "ytick"), " "); got != "-4.0 -3.5 -3.0 -2.5 -2.0" {
		t.Errorf("negative constant: y ticks %q", got)
	}
}
