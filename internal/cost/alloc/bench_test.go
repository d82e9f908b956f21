// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package alloc

import (
	"fmt"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// BenchmarkDay accounts for 1,000 GPUs over one day with a utilisation
// sample every 30 s (2,880 per GPU) and eight holdings per GPU of mixed
// shares, back to back, then reports by team.
func BenchmarkDay(b *testing.B) {
	const day = 24 * hour
	in := Input{From: 0, To: day, Prices: prices.Default(), Util: map[string][]Sample{}}
	for i := 0; i < 1000; i++ {
		g := GPU{Node: fmt.Sprintf("n%d", i/8), UUID: fmt.Sprintf("GPU-%d", i), Model: "A100-80GB"}
		in.GPUs = append(in.GPUs, g)
		s := make([]Sample, 0, day/30_000)
		for t := int64(0); t < day; t += 30_000 {
			s = append(s, Sample{Time: t, Util: float64((t/30_000+int64(i))%100) / 100})
		}
		in.Util[g.UUID] = s
		shares := []Share{{Kind: Whole}, {Kind: MIG, Slices: 3}, {Kind: Replica, Replicas: 4}, {Kind: Milli, Milli: 250}}
		for k := 0; k < 8; k++ {
			in.Holdings = append(in.Holdings, Holding{
				Namespace: fmt.Sprintf("ns%d", i%50), Pod: fmt.Sprintf("p%d-%d", i, k), Team: fmt.Sprintf("t%d", i%7), GPU: g.UUID,
				Share: shares[k%4], Start: int64(k) * 3 * hour, End: int64(k)*3*hour + 3*hour,
			})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		l, err := Compute(in)
		if err != nil {
			b.Fatal(err)
		}
		l.Report(ByTeam)
	}
}
