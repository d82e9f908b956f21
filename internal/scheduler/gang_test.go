// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func labelled(name string, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func TestGangLocalityScore(t *testing.T) {
	keys := []string{"nvidia.com/gpu.clique", "topology.kubernetes.io/rack"}
	held := []*v1.Node{
		labelled("a", map[string]string{"topology.kubernetes.io/rack": "r1"}),
		labelled("b", map[string]string{"topology.kubernetes.io/rack": "r3"}),
	}
	d := localDomains(keys, held)
	if d == nil || d.key != "topology.kubernetes.io/rack" || len(d.values) != 2 {
		t.Fatalf("domains %+v: want the rack key with r1 and r3 (no node has a clique)", d)
	}
	g := &GangLocality{keys: keys}
	cs := framework.NewCycleState()
	cs.Write(localityKey, d)
	for _, tc := range []struct {
		node *v1.Node
		want int64
	}{
		{labelled("c", map[string]string{"topology.kubernetes.io/rack": "r1"}), 100},
		{labelled("d", map[string]string{"topology.kubernetes.io/rack": "r3"}), 100},
		{labelled("e", map[string]string{"topology.kubernetes.io/rack": "r2"}), 0},
		{labelled("f", nil), 0},
	} {
		ni := framework.NewNodeInfo()
		ni.SetNode(tc.node)
		if s, st := g.Score(context.Background(), cs, nil, ni); s != tc.want || !st.IsSuccess() {
			t.Errorf("node %s: %d %v, want %d", tc.node.Name, s, st, tc.want)
		}
	}
	// The most local key wins when the group's nodes carry it.
	held[0].Labels["nvidia.com/gpu.clique"] = "abc.1"
	if d := localDomains(keys, held); d.key != "nvidia.com/gpu.clique" || !d.values["abc.1"] || len(d.values) != 1 {
		t.Errorf("domains %+v: want the clique abc.1", d)
	}
	if d := localDomains(keys, nil); d != nil {
		t.Errorf("no group nodes: %+v, want nil", d)
	}
}
