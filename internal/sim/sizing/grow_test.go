// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package sizing

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func TestGrowable(t *testing.T) {
	l := list() // 6 A (8 V100M32), 2 B (CPU only), 1 C (2 T4)
	got, skipped := Growable(l, nil)
	if len(got) != 2 || got[0].Name != "a0" || got[1].Name != "c0" {
		t.Errorf("Growable = %v, want a0 and c0 (no CPU-only type)", got)
	}
	if len(skipped) != 1 || skipped[0].Nodes != 2 || skipped[0].Type != "CPU-only (64 CPU, 256 GiB)" {
		t.Errorf("skipped = %+v, want the 2 CPU-only nodes", skipped)
	}
	// a0 cordoned: a1 stands for type A; c0 cordoned: type C is not grown.
	cordoned := func(s trace.NodeSpec) bool { return s.Name == "a0" || s.Name == "c0" }
	got, skipped = Growable(l, cordoned)
	if len(got) != 1 || got[0].Name != "a1" || len(skipped) != 2 || !strings.Contains(skipped[1].Why, "cordoned") {
		t.Errorf("Growable with a0, c0 cordoned = %v, %+v; want a1 alone, C skipped as cordoned", got, skipped)
	}
	g := Grow(l, l[8], 2)
	if len(g) != 11 || g[9].Name != "c0+add1" || g[10].Name != "c0+add2" || g[10].GPUs != 2 || len(l) != 9 {
		t.Errorf("Grow(list, c0, 2) = %v", g)
	}
	if n := TypeName(l[0]); n != "V100M32 x8 (96 CPU, 512 GiB)" {
		t.Errorf("TypeName(a0) = %q", n)
	}
	// c0 served by DRA (a snapshot's DRA-only node) is a type of its own
	// beside a device-plugin c0 of the same shape: Grow copies a DRA node.
	d := l[8]
	d.Name, d.Serving = "d0", cluster.ServedByDRA
	got, _ = Growable(append(slices.Clone(l), d), nil)
	if len(got) != 3 || got[2].Name != "d0" || TypeName(got[2]) != "t4 x2 DRA (104 CPU, 512 GiB)" {
		t.Errorf("Growable with a DRA T4 node = %v, want a0, c0, d0 (t4 x2 DRA)", got)
	}
}

// share is the share of pods placed with added nodes when need nodes
// place them all: each node added places more.
func share(added, need int) float64 {
	if added >= need {
		return 1
	}
	return 0.5 + 0.5*float64(added)/float64(need)
}

func TestSearchAdd(t *testing.T) {
	l := list() // 9 nodes
	target := Target{Metric: "placed", Value: 1}
	ty := l[8] // C: 2 T4
	for _, need := range []int{0, 1, 2, 3, 5, 37} {
		var tried []int
		r, err := SearchAdd(context.Background(), l, ty, target, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
			tried = append(tried, len(nodes)-9)
			return share(len(nodes)-9, need), nil
		})
		if err != nil || !r.Reached || r.Answer.Added != need || r.Answer.Nodes != 9+need || r.NodeType != TypeName(ty) {
			t.Errorf("need %d: SearchAdd = %+v, %v (tried %v)", need, r, err, tried)
		}
		if tried[0] != 0 {
			t.Errorf("need %d: first try adds %d, want 0 (the cluster as given)", need, tried[0])
		}
	}
	// need 5 by hand: 0, 1, 2, 4 fail, 8 holds; bisection 6, 5 hold.
	var tried []int
	r, _ := SearchAdd(context.Background(), l, ty, target, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
		tried = append(tried, len(nodes)-9)
		return share(len(nodes)-9, 5), nil
	})
	if want := []int{0, 1, 2, 4, 8, 6, 5}; !slices.Equal(tried, want) {
		t.Errorf("need 5: tried %v, want %v", tried, want)
	}
	// 5 added C nodes: the list's 6·8 V100M32 and 1·2 T4, plus 5·2 T4.
	p := prices.Default()
	want := 48*p.USDPerHour("V100M32") + 12*p.USDPerHour("T4")
	if r.Answer.GPUs != 60 || math.Abs(r.Answer.USDPerHour-want) > 1e-9 {
		t.Errorf("5 added: %d GPUs, %v USD/h; want 60, %v", r.Answer.GPUs, r.Answer.USDPerHour, want)
	}
	// A type that places no more pods past 2 added: tried 0, 1, 2, 4, 8,
	// then given up: 2, 4, 8 place as many (not 1,000,000 nodes).
	tried = nil
	r, _ = SearchAdd(context.Background(), l, ty, target, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
		tried = append(tried, len(nodes)-9)
		return 0.5 + 0.1*float64(min(len(nodes)-9, 2)), nil
	})
	if want := []int{0, 1, 2, 4, 8}; r.Reached || !slices.Equal(tried, want) {
		t.Errorf("plateau: reached %v, tried %v, want not reached after %v", r.Reached, tried, want)
	}
	// Placed % that jitters by a few tenths of a point past 2 added
	// (the seeds' mean: 70.4, 70.0, 70.4, ... % at 4, 8, 16, ...), which
	// the strict rule reads as gains every other doubling: 8 added
	// placed 0.0 points more than 2 (under placedGain's 0.5), so tried
	// 0, 1, 2, 4, 8, then given up.
	tried = nil
	r, _ = SearchAdd(context.Background(), l, ty, target, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
		k := len(nodes) - 9
		tried = append(tried, k)
		if k <= 2 {
			return 0.5 + 0.1*float64(k), nil
		}
		return 0.7 + 0.004*float64(bits.Len(uint(k))%2), nil
	})
	if want := []int{0, 1, 2, 4, 8}; r.Reached || !slices.Equal(tried, want) {
		t.Errorf("jitter: reached %v, tried %v, want not reached after %v", r.Reached, tried, want)
	}
	// A wait that stays infinite gives up only at 16 × the list's 9 nodes:
	// 0, 1, 2, ..., 128, 256 tried.
	tried = nil
	r, _ = SearchAdd(context.Background(), l, ty, Target{Metric: "p95wait", Value: 60}, prices.Default(), func(_ context.Context, nodes []trace.NodeSpec) (float64, error) {
		tried = append(tried, len(nodes)-9)
		return math.Inf(1), nil
	})
	if r.Reached || tried[len(tried)-1] != 256 {
		t.Errorf("infinite wait: reached %v, tried %v, want given up at 256", r.Reached, tried)
	}
}

// TestGrowHostname: added nodes keep their type's labels and taints, each
// with its own kubernetes.io/hostname, and the type's map is not changed
// (a pod selecting node a by hostname still fits only a).
func TestGrowHostname(t *testing.T) {
	ty := trace.NodeSpec{Name: "a", GPUs: 8, Model: "A100-80GB",
		Labels: map[string]string{"kubernetes.io/hostname": "a", "pool": "gpu"},
		Taints: []cluster.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}}
	out := Grow([]trace.NodeSpec{ty}, ty, 2)
	if len(out) != 3 {
		t.Fatalf("%d nodes, want 3", len(out))
	}
	for j, want := range []string{"a", "a+add1", "a+add2"} {
		n := out[j]
		if n.Name != want || n.Labels["kubernetes.io/hostname"] != want || n.Labels["pool"] != "gpu" || len(n.Taints) != 1 {
			t.Errorf("node %d: %s, labels %v, taints %v; want %s, its own hostname, pool gpu, 1 taint", j, n.Name, n.Labels, n.Taints, want)
		}
	}
}
