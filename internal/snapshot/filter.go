// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// What Kubernetes' own node filters read (cluster.NodeFilter): a node's
// labels and spec.taints, a pod's spec.tolerations, nodeSelector and
// required node affinity, and the constraints on other pods the simulator
// does not model, warned about.

type kubeTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

type kubeToleration struct {
	Key      string `json:"key"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Effect   string `json:"effect"`
}

type kubeRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// readNodeFilters keeps node n's labels, taints and spec.unschedulable
// for the filters.
func (n *Node) readNodeFilters(o *kubeObject) {
	n.Labels = maps.Clone(o.Metadata.Labels)
	for _, t := range o.Spec.Taints {
		n.Taints = append(n.Taints, cluster.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	n.NodeSpec.Unschedulable = o.Spec.Unschedulable
}

// podFilter returns what pod p (item path) asks of its node, never nil (a
// pod without tolerations is kept off every tainted node), and a warning for each constraint not modelled: pod
// affinity and anti-affinity, topology spread, a node affinity operator
// Kubernetes does not know. Preferred node affinity only scores: not read.
// spec.nodeName is a constraint only of a pod in phase Pending that has
// one (it waits on that node's kubelet); a running pod's was the
// scheduler's choice.
func podFilter(path string, p *Pod, o *kubeObject) (*cluster.NodeFilter, []string) {
	f := &cluster.NodeFilter{Selector: maps.Clone(o.Spec.NodeSelector)}
	if p.Phase == "Pending" {
		f.NodeName = o.Spec.NodeName
	}
	for _, t := range o.Spec.Tolerations {
		f.Tolerations = append(f.Tolerations, cluster.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect})
	}
	var warn []string
	unmodelled := func(field string) {
		warn = append(warn, fmt.Sprintf("%s.spec.%s: pod %s: not simulated (the simulator places it as if it had none)", path, field, trace.Quote(p.Name)))
	}
	if a := o.Spec.Affinity; a != nil {
		if isSet(a.PodAffinity) {
			unmodelled("affinity.podAffinity")
		}
		if isSet(a.PodAntiAffinity) {
			unmodelled("affinity.podAntiAffinity")
		}
		if a.NodeAffinity != nil && a.NodeAffinity.Required != nil {
			var w []string
			f.Terms, w = nodeTerms(path, a.NodeAffinity.Required.Terms)
			warn = append(warn, w...)
		}
	}
	if len(o.Spec.TopologySpreadConstraints) > 0 {
		unmodelled("topologySpreadConstraints")
	}
	return f, warn
}

// nodeTerms reads the required node affinity's terms; a term list that is
// present but empty matches no node, as in Kubernetes (one term with
// nothing in it).
func nodeTerms(path string, terms []kubeTerm) ([]cluster.NodeTerm, []string) {
	out := []cluster.NodeTerm{}
	var warn []string
	for ti, t := range terms {
		var nt cluster.NodeTerm
		for ei, e := range t.Expressions {
			nt.Expressions = append(nt.Expressions, cluster.Requirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
			if !knownOperator(e.Operator) {
				warn = append(warn, fmt.Sprintf("%s.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d].matchExpressions[%d]: operator %s is none of Kubernetes' (In, NotIn, Exists, DoesNotExist, Gt, Lt): matches no node",
					path, ti, ei, trace.Quote(e.Operator)))
			}
		}
		for _, e := range t.Fields {
			nt.Fields = append(nt.Fields, cluster.Requirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
		}
		out = append(out, nt)
	}
	if len(out) == 0 {
		out = append(out, cluster.NodeTerm{})
	}
	return out, warn
}

func knownOperator(op string) bool {
	switch op {
	case "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt":
		return true
	}
	return false
}

// isSet reports whether a raw JSON field holds something other than null.
func isSet(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}
