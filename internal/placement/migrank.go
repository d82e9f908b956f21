// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math"
	"math/bits"
	"sort"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// MIGPlacement is a free placement of a MIG profile on a node: the GPU
// (index on the node) and the start (memory slot 0..7).
type MIGPlacement struct {
	GPU, Start int
}

// RankMIG returns the free placements of MIG profile k (gpu.MIGProfiles'
// index) on the GPUs of MIG on demand of n, best first: by the
// fragmentation after an instance there (FragMIG against tw and the
// stranded slices' Waste, as FGD chooses), ties by GPU, then start. The node's CPU and memory are
// left out (every shape's CPU counts as fitting): the ranking is what
// gpuplane's DRA driver publishes as its devices' order
// (internal/node/dra Options.Rank), and the driver knows the GPUs'
// instances but not the pods' CPU. Upstream's allocator takes the first
// free device of that order (DRAGPUs), so on a node of one pending MIG
// claim the instance lands on RankMIG's first. Empty when k has no free
// placement on n; static MIG GPUs and GPUs without MIG are not ranked.
func (tw *TargetWorkload) RankMIG(n *cluster.Node, k int) []MIGPlacement {
	p := cluster.Pod{NumGPU: 1, GPUMilli: cluster.MIGMilli(k), MIGProfile: int8(k + 1)}
	var buf [cluster.MaxGPUsPerNode]int64
	var mbuf [cluster.MaxGPUsPerNode]uint8
	after := fragView(n, buf[:0])
	mig := MIGView(n, mbuf[:0])
	type ranked struct {
		MIGPlacement
		frag float64
	}
	var out []ranked
	for g := range n.GPUFree {
		starts := n.MIGFreeStarts(g, k)
		a, ok := n.FreeAfter(&p, g)
		if starts == 0 || !ok {
			continue
		}
		keep, keepM := after[g], mig[g]
		after[g] = min(a, cluster.MilliGPU-1)
		for m := starts; m != 0; m &= m - 1 {
			s := bits.TrailingZeros8(m)
			pl, ok := n.MIGPlaceableAfter(g, k, s)
			if !ok { // MIGFreeStarts offers only placements that fit
				continue
			}
			mig[g] = migGPU | pl
			out = append(out, ranked{MIGPlacement{g, s}, tw.FragMIG(n.ModelID, math.MaxInt64, after, mig) + tw.Waste(after, mig)})
		}
		after[g], mig[g] = keep, keepM
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].frag < out[j].frag })
	res := make([]MIGPlacement, len(out))
	for i, r := range out {
		res[i] = r.MIGPlacement
	}
	return res
}
