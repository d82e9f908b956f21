// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// perNode is the reference placer: placement.Placer scores every node for
// every pod, and the cluster is changed directly.
type perNode struct{ *placement.Placer }

func (perNode) Allocate(c *cluster.Cluster, i int, p *cluster.Pod, g cluster.GPUSet) error {
	return c.Allocate(i, p, g)
}

func (perNode) Release(c *cluster.Cluster, i int, p *cluster.Pod, g cluster.GPUSet) error {
	return c.Release(i, p, g)
}

// runBoth runs one experiment with the indexed placer and with the per-node
// reference, from the same seed, and fails on any difference in the result.
func runBoth(t *testing.T, w *Workload, mode, policy string, tie placement.TieBreak, seed uint64) {
	t.Helper()
	var res [2]Result
	for k := range res {
		pol, err := placement.New(policy, w.target)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		var pl placer = placement.NewIndexedPlacer(pol, tie, rng)
		if k == 1 {
			pl = perNode{placement.NewPlacer(pol, tie, rng)}
		}
		if mode == "fill" {
			res[k], err = fill(context.Background(), w, pl, rng, 1.3, false)
		} else {
			res[k], err = replay(context.Background(), w, pl, rng, false, nil, false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(res[0], res[1]) {
		t.Errorf("%s %s tie %d seed %d: indexed placer\n%+v\nper-node placer\n%+v", mode, policy, tie, seed, res[0], res[1])
	}
}

// TestIndexedPlacerMatchesPerNodeOpenb: on the default openb trace, every
// policy, both tie-breaks and three seeds give result-for-result the same
// fill as scoring every node, and so the paper reproduction cannot move.
func TestIndexedPlacerMatchesPerNodeOpenb(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 96 fills")
	}
	w := openb(t, "openb_pod_list_default.csv")
	for _, policy := range placement.Names {
		for _, tie := range []placement.TieBreak{placement.TieFirst, placement.TieRandom} {
			for seed := uint64(42); seed < 45; seed++ {
				runBoth(t, w, "fill", policy, tie, seed)
			}
		}
	}
}

// TestIndexedPlacerMatchesPerNodeBuiltin: the same on the built-in trace, in
// fill and in replay (which releases pods, so nodes return to earlier
// classes).
func TestIndexedPlacerMatchesPerNodeBuiltin(t *testing.T) {
	// Pods arrive faster than they leave, so that some wait.
	w, err := Prepare("builtin", trace.BuiltinNodes(4), "builtin", trace.BuiltinPods(3000, 1, 2, 3600), 0.95, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range placement.Names {
		for _, tie := range []placement.TieBreak{placement.TieFirst, placement.TieRandom} {
			for _, mode := range []string{"fill", "replay"} {
				runBoth(t, w, mode, policy, tie, 7)
			}
		}
	}
}

// TestTrimMatchesSliceRemoval: trim drops the same pods, leaving the same
// order, as deleting order[rng.IntN(len(order))] one at a time does.
func TestTrimMatchesSliceRemoval(t *testing.T) {
	pods := []cluster.Pod{{NumGPU: 1, GPUMilli: 500}, {NumGPU: 2, GPUMilli: 1000}, {CPUMilli: 1}, {NumGPU: 1, GPUMilli: 1000}}
	for seed := uint64(0); seed < 50; seed++ {
		src := rand.New(rand.NewPCG(seed, 1))
		n := 1 + src.IntN(300)
		order := make([]int, n)
		var demand int64
		for i := range order {
			order[i] = src.IntN(len(pods))
			demand += pods[order[i]].TotalGPUMilli()
		}
		target := src.Int64N(demand + 1)
		// The slice removal fill did before trim.
		want := append([]int(nil), order...)
		wantDemand := demand
		r1 := rand.New(rand.NewPCG(seed, 2))
		for wantDemand > target && len(want) > 0 {
			k := r1.IntN(len(want))
			wantDemand -= pods[want[k]].TotalGPUMilli()
			want = append(want[:k], want[k+1:]...)
		}
		r2 := rand.New(rand.NewPCG(seed, 2))
		got, gotDemand := trim(order, demand, target, pods, r2)
		if !reflect.DeepEqual(got, want) || gotDemand != wantDemand || r1.Uint64() != r2.Uint64() {
			t.Fatalf("seed %d: trim = %v, %d; slice removal %v, %d", seed, got, gotDemand, want, wantDemand)
		}
	}
}
