// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// candidateNodes are seven nodes of 96 CPUs, 512 GiB and 8 V100s. For a
// pod of 4 CPUs and one whole GPU, bestfit's raw score
// ⌊100·(1 − ((cpuFree−4000)/128000·½ + (gpuFree−1000)/8000·½))⌋ is, by hand:
//
//	a  empty                               cpu 96000 gpu 8000: ⌊20.3125⌋ = 20
//	b  a pod of 8 CPUs, 2 GPUs              cpu 88000 gpu 6000: ⌊35.9375⌋ = 35
//	c  a pod of 8 CPUs, 6 GPUs              cpu 88000 gpu 2000: ⌊60.9375⌋ = 60
//	d  as c, tainted NoSchedule             60, named only to a pod tolerating it
//	e  a pod of 8 GPUs                      no GPU free: never named
//	f  as b                                 35, after b by name
//	g  as c, spec.unschedulable             60, never named
//
// so the ranking is c, b, f, a.
func candidateNodes() []fwk.NodeInfo {
	mk := func(name string, used int64) (*v1.Node, []*v1.Pod) {
		n := gpuNode(name, "V100M16", 8, "96", "512Gi")
		if used == 0 {
			return n, nil
		}
		var idx []string
		for i := range used {
			idx = append(idx, fmt.Sprint(i))
		}
		p := newPod("on-"+name, "8", "32Gi", withGPUs(used), onNode(name), withAnnotation(gpuresource.AnnotationGPUs, strings.Join(idx, ",")))
		return n, []*v1.Pod{p}
	}
	var out []fwk.NodeInfo
	for _, s := range []struct {
		name string
		used int64
	}{{"g", 6}, {"f", 2}, {"e", 8}, {"d", 6}, {"c", 6}, {"b", 2}, {"a", 0}} {
		n, pods := mk(s.name, s.used)
		switch s.name {
		case "d":
			n.Spec.Taints = []v1.Taint{{Key: "gpu", Value: "reserved", Effect: v1.TaintEffectNoSchedule}}
		case "g":
			n.Spec.Unschedulable = true
		case "a":
			n.Labels["pool"] = "blue"
		}
		out = append(out, nodeInfo(n, pods...))
	}
	return out
}

func indexedPlugin(t *testing.T, candidates int32) *Plugin {
	t.Helper()
	args := Args{Policy: "bestfit", TieBreak: "first", Candidates: &candidates}
	p, tb, err := args.build()
	if err != nil {
		t.Fatal(err)
	}
	pl := &Plugin{policy: p, tie: tb, nodes: newNodeCache(), candidates: int(candidates)}
	pl.index = newNodeIndex(placement.NewIndexedPlacer(p, tb, rand.New(rand.NewPCG(0, 1))))
	pl.nodes.track = true
	return pl
}

// prefilterNames runs PreFilter and returns the names it gave, sorted, or
// nil for every node.
func prefilterNames(t *testing.T, pl *Plugin, p *v1.Pod, nodes []fwk.NodeInfo) []string {
	t.Helper()
	r, st := pl.PreFilter(context.Background(), framework.NewCycleState(), p, nodes)
	if !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	if r.AllNodes() {
		return nil
	}
	return sets.List(r.NodeNames)
}

// TestPreFilterCandidates: PreFilter names the n best nodes by the
// placement core's ranking (c, b, f, a; candidateNodes) that the pod's
// taints, unschedulable mark and node selector allow, and every node
// (nil) when none does, when none fits and for gang pods.
func TestPreFilterCandidates(t *testing.T) {
	nodes := candidateNodes()
	one := func(name string, opts ...podOpt) *v1.Pod {
		return newPod(name, "4", "16Gi", append([]podOpt{withGPUs(1)}, opts...)...)
	}
	tolerates := func(p *v1.Pod) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpEqual, Value: "reserved", Effect: v1.TaintEffectNoSchedule}}
	}
	selector := func(v string) podOpt {
		return func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"pool": v} }
	}
	gang := func(p *v1.Pod) {
		g := "g1"
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	}
	for _, c := range []struct {
		n    int32
		pod  *v1.Pod
		want []string
	}{
		{1, one("p1"), []string{"c"}},
		{2, one("p2"), []string{"b", "c"}},
		{3, one("p3"), []string{"b", "c", "f"}},
		{16, one("p4"), []string{"a", "b", "c", "f"}},
		{2, one("p5", tolerates), []string{"c", "d"}},
		{16, one("p6", selector("blue")), []string{"a"}},
		{16, one("p7", selector("red")), nil},
		{16, newPod("p8", "200", "16Gi", withGPUs(1)), nil},
		{16, one("p9", gang), nil},
	} {
		pl := indexedPlugin(t, c.n)
		if got := prefilterNames(t, pl, c.pod, nodes); !slices.Equal(got, c.want) {
			t.Errorf("%s, %d candidates: named %v, want %v", c.pod.Name, c.n, got, c.want)
		}
	}
}

// TestPreFilterCandidatesFollowChanges: the index follows a new snapshot
// (c filled up: b, f, a remain), a node removed and more pod shapes than
// it keeps, and a pod whose candidates were all filtered out
// (PostFilter) is evaluated on every node from then on.
func TestPreFilterCandidatesFollowChanges(t *testing.T) {
	pl := indexedPlugin(t, 2)
	nodes := candidateNodes()
	if got := prefilterNames(t, pl, newPod("p", "4", "16Gi", withGPUs(1)), nodes); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("named %v, want b, c", got)
	}
	// c's NodeInfo gets a pod on its last two GPUs: a new generation.
	c := nodes[4]
	if c.Node().Name != "c" {
		t.Fatalf("node 4 is %s", c.Node().Name)
	}
	c.(*framework.NodeInfo).AddPod(newPod("more", "1", "1Gi", withGPUs(2), onNode("c"), withAnnotation(gpuresource.AnnotationGPUs, "6,7")))
	if got := prefilterNames(t, pl, newPod("q", "4", "16Gi", withGPUs(1)), nodes); !slices.Equal(got, []string{"b", "f"}) {
		t.Fatalf("after c filled: named %v, want b, f", got)
	}
	// b removed from the snapshot: f and a.
	without := slices.DeleteFunc(slices.Clone(nodes), func(ni fwk.NodeInfo) bool { return ni.Node().Name == "b" })
	if got := prefilterNames(t, pl, newPod("r", "4", "16Gi", withGPUs(1)), without); !slices.Equal(got, []string{"a", "f"}) {
		t.Fatalf("without b: named %v, want a, f", got)
	}
	// More shapes than the index keeps trees for: it starts afresh, and
	// names the same (cpu 4000m to 4069m moves no score past an integer).
	for i := range maxShapes + 6 {
		p := newPod(fmt.Sprint("shape", i), fmt.Sprintf("%dm", 4000+i), "16Gi", withGPUs(1))
		if got := prefilterNames(t, pl, p, without); !slices.Equal(got, []string{"a", "f"}) {
			t.Fatalf("shape %d: named %v, want a, f", i, got)
		}
	}
	if n := len(pl.index.shapes); n > maxShapes {
		t.Errorf("%d shapes kept, want at most %d", n, maxShapes)
	}
	// A pod whose candidates were all filtered out: every node next.
	p := newPod("s", "4", "16Gi", withGPUs(1))
	cs := framework.NewCycleState()
	if r, st := pl.PreFilter(context.Background(), cs, p, without); !st.IsSuccess() || r.AllNodes() {
		t.Fatalf("PreFilter: %v, %v", r, st)
	}
	if _, st := pl.PostFilter(context.Background(), cs, p, nil); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("PostFilter after a narrowed cycle: %v, want UnschedulableAndUnresolvable", st)
	}
	if got := prefilterNames(t, pl, p, without); got != nil {
		t.Errorf("after PostFilter: named %v, want every node", got)
	}
	cs = framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), cs, p, without); !st.IsSuccess() {
		t.Fatal(st)
	}
	if _, st := pl.PostFilter(context.Background(), cs, p, nil); st.Code() != fwk.Unschedulable {
		t.Errorf("PostFilter after a cycle on every node: %v, want Unschedulable (preemption may run)", st)
	}
}
