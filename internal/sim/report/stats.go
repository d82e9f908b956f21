// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// stat is the mean and population standard deviation of one metric over
// a policy's N runs.
type stat struct {
	Mean, Std float64
	N         int
}

func statOf(r *engine.Report, policy string, f func(engine.Result) float64) stat {
	var xs []float64
	for _, x := range r.Results {
		if x.Policy == policy {
			xs = append(xs, f(x))
		}
	}
	if len(xs) == 0 {
		return stat{}
	}
	s := stat{N: len(xs)}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	for _, x := range xs {
		s.Std += (x - s.Mean) * (x - s.Mean)
	}
	s.Std = math.Sqrt(s.Std / float64(len(xs)))
	if math.IsNaN(s.Std) {
		s.Std = 0 // a mean of +Inf (an unbounded p95 wait)
	}
	return s
}

func replayOf(f func(*engine.ReplayStats) float64) func(engine.Result) float64 {
	return func(x engine.Result) float64 {
		if x.Replay == nil {
			return 0
		}
		return f(x.Replay)
	}
}

// runsOf returns the results of one policy.
func runsOf(r *engine.Report, policy string) []engine.Result {
	var out []engine.Result
	for _, x := range r.Results {
		if x.Policy == policy {
			out = append(out, x)
		}
	}
	return out
}
