// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package alloc

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// fuzzInput builds a window, GPUs, holdings and samples from data: every
// byte drives one choice, so any data is a valid input.
func fuzzInput(data []byte) Input {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	models := []string{"A100-80GB", "T4", "H100-80GB", "L4", "Unpriced"}
	in := Input{From: int64(next()) * minute, Prices: prices.Default(), Util: map[string][]Sample{}}
	in.To = in.From + int64(1+next())*7*minute + int64(next())
	nGPU := 1 + next()%4
	for i := 0; i < nGPU; i++ {
		g := GPU{Node: fmt.Sprintf("n%d", next()%2), UUID: fmt.Sprintf("g%d", i), Model: models[next()%len(models)]}
		in.GPUs = append(in.GPUs, g)
		for t := in.From; t < in.To; t += int64(1+next()) * minute {
			in.Util[g.UUID] = append(in.Util[g.UUID], Sample{Time: t, Util: float64(next()) / 255})
			if len(in.Util[g.UUID]) > 20 {
				break
			}
		}
	}
	nHold := next() % 12
	span := in.To - in.From
	for i := 0; i < nHold; i++ {
		g := in.GPUs[next()%nGPU]
		h := Holding{Namespace: fmt.Sprintf("ns%d", next()%3), Pod: fmt.Sprintf("p%d", i), Job: fmt.Sprintf("j%d", next()%3), Team: fmt.Sprintf("t%d", next()%2), GPU: g.UUID}
		h.Start = in.From - span/4 + int64(next())*span/200
		h.End = h.Start + int64(next())*span/200
		switch k := next() % 4; {
		case k == 1 && (g.Model == "A100-80GB" || g.Model == "H100-80GB"):
			h.Share = Share{Kind: MIG, Slices: 1 + next()%7}
		case k == 2:
			h.Share = Share{Kind: Replica, Replicas: 1 + next()%10}
		case k == 3:
			h.Share = Share{Kind: Milli, Milli: int64(1 + next()*1000/256)}
		}
		in.Holdings = append(in.Holdings, h)
	}
	return in
}

// FuzzConservation checks the books of random windows: the cents of every
// report add up to the GPUs' cost over the window worked out here from the
// prices alone (micro-USD per GPU-hour x milliseconds, rounded half up to
// the cent); each row is within a cent of its exact cost; GPU-hours add up
// to the capacity; efficiency and unused cost stay in range.
func FuzzConservation(f *testing.F) {
	f.Add([]byte{0, 8, 0, 3, 0, 0, 1, 1, 0, 9, 0, 0, 0, 0, 50, 120, 1, 3})
	f.Add([]byte{10, 255, 77, 2, 1, 2, 30, 200, 0, 4, 1, 1, 1, 0, 0, 10, 255, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(data)
		l, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		span := in.To - in.From
		var assetNum int64 // micro-USD x ms
		for _, g := range in.GPUs {
			assetNum += int64(math.Round(in.Prices.USDPerHour(g.Model)*1e6)) * span
		}
		const den = 1e4 * hour // micro-USD x ms per cent
		wantAsset := (assetNum + den/2) / den
		capacity := float64(span) * float64(len(in.GPUs)) / hour
		for _, by := range []By{ByPod, ByJob, ByNamespace, ByTeam, ByNode, ByModel} {
			r := l.Report(by)
			if r.AssetCents != wantAsset || sumCents(r) != wantAsset {
				t.Fatalf("by %s: asset %d, rows sum %d, want %d", by, r.AssetCents, sumCents(r), wantAsset)
			}
			hours := 0.0
			for _, x := range r.Rows {
				hours += x.GPUHoursAllocated
				if x.Efficiency < 0 || x.Efficiency > 1+1e-9 || x.UnusedCents < 0 || x.UnusedCents > x.CostCents {
					t.Fatalf("by %s: row %+v out of range", by, x)
				}
				if by == ByModel {
					exact := x.GPUHoursAllocated * in.Prices.USDPerHour(x.Key) * 100
					if math.Abs(float64(x.CostCents)-exact) >= 1+1e-6 {
						t.Fatalf("model %s: %d c, exact %v", x.Key, x.CostCents, exact)
					}
				}
			}
			for _, x := range r.Idle {
				hours += x.GPUHours
				exact := x.GPUHours * in.Prices.USDPerHour(x.Model) * 100
				if x.GPUHours < -1e-9 || math.Abs(float64(x.CostCents)-exact) >= 1+1e-6 {
					t.Fatalf("idle %+v, exact %v c", x, exact)
				}
			}
			if math.Abs(hours-capacity) > 1e-9*math.Max(1, capacity) || math.Abs(r.GPUHours-capacity) > 1e-9*math.Max(1, capacity) {
				t.Fatalf("by %s: %v GPU-hours in rows, %v in report, capacity %v", by, hours, r.GPUHours, capacity)
			}
		}
	})
}
