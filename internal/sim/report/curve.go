// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"sort"

	"github.com/gpuplane/gpuplane/internal/htmlkit"
)

// curve is one run's samples.
type curve struct{ x, y []float64 }

// at returns c at x: linear between samples, or the last sample at or
// before x when hold is set; the end values beyond the ends.
func (c curve) at(x float64, hold bool) float64 {
	n := len(c.x)
	k := sort.SearchFloat64s(c.x, x) // first sample ≥ x
	switch {
	case k < n && c.x[k] == x:
		return c.y[k]
	case k == 0:
		return c.y[0]
	case k == n:
		return c.y[n-1]
	case hold:
		return c.y[k-1]
	}
	f := (x - c.x[k-1]) / (c.x[k] - c.x[k-1])
	return c.y[k-1] + f*(c.y[k]-c.y[k-1])
}

// envelope samples the runs' curves at n points over the span they all
// cover and returns the grid with the mean, minimum and maximum there.
func envelope(cs []curve, n int, hold bool) (grid, mean, lo, hi []float64) {
	a, z := math.Inf(-1), math.Inf(1)
	for _, c := range cs {
		if len(c.x) == 0 {
			continue
		}
		a, z = math.Max(a, c.x[0]), math.Min(z, c.x[len(c.x)-1])
	}
	if math.IsInf(a, 0) || z < a {
		return nil, nil, nil, nil
	}
	for i := 0; i < n; i++ {
		x := a + (z-a)*float64(i)/float64(n-1)
		if n == 1 {
			x = z
		}
		m, l, h, k := 0.0, math.Inf(1), math.Inf(-1), 0
		for _, c := range cs {
			if len(c.x) == 0 {
				continue
			}
			v := c.at(x, hold)
			m += v
			l, h = math.Min(l, v), math.Max(h, v)
			k++
		}
		grid, mean, lo, hi = append(grid, x), append(mean, m/float64(k)), append(lo, l), append(hi, h)
	}
	return grid, mean, lo, hi
}

// meanSeries is a policy's mean line with its min–max band when there
// are several runs; from drops the grid points before it.
func meanSeries(name, color string, cs []curve, hold bool, from float64) htmlkit.Series {
	grid, mean, lo, hi := envelope(cs, 160, hold)
	k := sort.SearchFloat64s(grid, from)
	grid, mean, lo, hi = grid[k:], mean[k:], lo[k:], hi[k:]
	s := htmlkit.Series{Name: name, Color: color, X: grid, Y: mean}
	if len(cs) > 1 {
		s.BandX, s.BandY = htmlkit.Band(grid, lo, hi)
	}
	return s
}
