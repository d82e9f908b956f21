// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// BenchmarkBuild30Days: 100 GPUs over 30 days with a utilisation sample a
// minute (4.32 M samples) and 2,000 holdings of 1 to 3 days; 30 day
// buckets, each accounted for on its own, plus the whole window.
func BenchmarkBuild30Days(b *testing.B) {
	in := alloc.Input{From: t0, To: t0 + 30*24*hour, Util: map[string][]alloc.Sample{}, Prices: prices.Default()}
	for g := range 100 {
		uuid := fmt.Sprintf("GPU-%03d", g)
		in.GPUs = append(in.GPUs, alloc.GPU{Node: fmt.Sprintf("node-%02d", g/8), UUID: uuid, Model: "H100-80GB"})
		s := make([]alloc.Sample, 0, 30*24*60)
		for m := in.From; m < in.To; m += minute {
			s = append(s, alloc.Sample{Time: m, Util: float64((g+int(m/minute))%100) / 100})
		}
		in.Util[uuid] = s
	}
	for i := range 2000 {
		g := i % 100
		start := in.From + int64(i/100)*36*hour
		in.Holdings = append(in.Holdings, alloc.Holding{Namespace: fmt.Sprintf("ns-%d", i%20), Pod: fmt.Sprintf("p-%d", i), Team: fmt.Sprintf("team-%d", i%12),
			GPU: fmt.Sprintf("GPU-%03d", g), Share: alloc.Share{Kind: alloc.Milli, Milli: 500}, Start: start, End: start + int64(24+24*(i%3))*hour})
	}
	b.ResetTimer()
	for range b.N {
		r, err := Build(in)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Buckets) != 30 {
			b.Fatalf("%d buckets", len(r.Buckets))
		}
	}
}
