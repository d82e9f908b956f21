// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// filterSnapshot: a tainted, cordoned GPU node with labels; a pod with
// tolerations, nodeSelector, required node affinity (expressions and
// matchFields), preferred node affinity and pod anti-affinity; a pending
// pod with a nodeName; a running pod with one.
const filterSnapshot = `{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"g0","labels":{"nvidia.com/gpu.count":"1","nvidia.com/gpu.product":"NVIDIA-L4","zone":"a"}},
 "spec":{"unschedulable":true,"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
 "status":{"allocatable":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"1"}}},
{"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"nodeSelector":{"zone":"a"},
 "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},{"operator":"Exists"}],
 "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
   {"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]},{"key":"x","operator":"Near"}]},
   {"matchFields":[{"key":"metadata.name","operator":"In","values":["g0"]}]}]},
  "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}}]},
  "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone"}]}},
 "containers":[{"resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"pinned","namespace":"d"},"spec":{"nodeName":"g0","containers":[{"resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"run","namespace":"d"},"spec":{"nodeName":"g0","containers":[{"resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Running"}}
]}`

// TestReadFilters: the node keeps its labels, taints and cordon; the pod
// its selector, terms (an unknown operator kept, to match nothing, and
// warned of), tolerations; pod anti-affinity is a warning naming the pod
// and the field, preferred node affinity is not read; spec.nodeName is a
// constraint of the pending pod only.
func TestReadFilters(t *testing.T) {
	s, err := Read("f.json", strings.NewReader(filterSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	n := s.Nodes[0]
	if !n.NodeSpec.Unschedulable || n.Labels["zone"] != "a" || len(n.Taints) != 1 || n.Taints[0] != (cluster.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}) {
		t.Errorf("node: unschedulable %v, labels %v, taints %v", n.NodeSpec.Unschedulable, n.Labels, n.Taints)
	}
	f := s.Pods[0].Filter
	switch {
	case f == nil:
		t.Fatal("pod p has no filter")
	case f.NodeName != "" || f.Selector["zone"] != "a" || len(f.Tolerations) != 2 || f.Tolerations[1] != (cluster.Toleration{Operator: "Exists"}):
		t.Errorf("pod p: %v", f)
	case len(f.Terms) != 2 || len(f.Terms[0].Expressions) != 2 || f.Terms[0].Expressions[1].Operator != "Near" || len(f.Terms[1].Fields) != 1 || f.Terms[1].Fields[0].Values[0] != "g0":
		t.Errorf("pod p terms: %+v", f.Terms)
	}
	if got := s.Pods[1].Filter; got == nil || got.NodeName != "g0" {
		t.Errorf("pending pinned: filter %v, want nodeName g0", got)
	}
	if got := s.Pods[2].Filter; got == nil || got.NodeName != "" || len(got.Tolerations) != 0 {
		t.Errorf("running pod: filter %v, want an empty one", got)
	}
	w := strings.Join(s.Warnings, "\n")
	for _, want := range []string{
		`items[1].spec.affinity.podAntiAffinity: pod "d/p": not simulated`,
		`nodeSelectorTerms[0].matchExpressions[1]: operator "Near" is none of Kubernetes'`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "preferred") {
		t.Errorf("preferred node affinity warned of:\n%s", w)
	}
	// Read as a whole: p's empty key with Exists tolerates every taint,
	// the cordon's too; the pinned pod tolerates none, and the cordon
	// keeps it off first.
	node, _ := cluster.NewNode("g0", "L4", 8000, 32768, 1)
	node.Labels, node.Taints, node.Unschedulable = n.Labels, n.Taints, n.NodeSpec.Unschedulable
	if r, _ := f.Refuses(&node); r != cluster.RefusedNone {
		t.Errorf("p on g0: refusal %d, want none", r)
	}
	if r, _ := s.Pods[1].Filter.Refuses(&node); r != cluster.RefusedUnschedulable {
		t.Errorf("pinned on g0: refusal %d, want the cordon", r)
	}
}
