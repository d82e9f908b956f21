// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"
	"strconv"
)

// Kubernetes' own node filters, as kube-scheduler's NodeName,
// NodeUnschedulable, TaintToleration and NodeAffinity plugins apply them
// (pkg/scheduler/framework/plugins), with the matching rules of
// k8s.io/api/core/v1 (Toleration.ToleratesTaint) and
// k8s.io/component-helpers/scheduling/corev1 (nodeaffinity). A pod the
// scheduler plugins see has been through them already; a snapshot's pod
// carries them in Pod.Filter, which check applies before any resource.

// Taint effects that keep a pod off a node; PreferNoSchedule only scores.
const (
	EffectNoSchedule = "NoSchedule"
	EffectNoExecute  = "NoExecute"
)

// TaintUnschedulable is the taint a cordoned node (Node.Unschedulable)
// stands for: NodeUnschedulable lets through only a pod that tolerates it.
const TaintUnschedulable = "node.kubernetes.io/unschedulable"

// Taint is one of a node's spec.taints.
type Taint struct {
	Key, Value, Effect string
}

// Toleration is one of a pod's spec.tolerations.
type Toleration struct {
	Key, Operator, Value, Effect string
}

// Tolerates reports whether t tolerates taint, as v1.Toleration's
// ToleratesTaint: an empty effect matches every effect, an empty key (with
// Exists) every key; Exists matches any value, Equal (or no operator) only
// an equal one.
func (t *Toleration) Tolerates(taint *Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", "Equal":
		return t.Value == taint.Value
	case "Exists":
		return true
	}
	return false
}

// Requirement is one matchExpressions (on a node label) or matchFields
// (on metadata.name) entry of a node selector term.
type Requirement struct {
	Key, Operator string
	Values        []string
}

// NodeTerm is one nodeSelectorTerms entry: its requirements ANDed. A term
// with none matches no node.
type NodeTerm struct {
	Expressions, Fields []Requirement
}

// NodeFilter is what a pod asks of its node beyond resources: spec.nodeName,
// spec.nodeSelector (exact labels), the required node affinity's terms
// (ORed; none: no constraint) and spec.tolerations.
type NodeFilter struct {
	NodeName    string
	Selector    map[string]string
	Terms       []NodeTerm
	Tolerations []Toleration
}

// Refusal is which filter refuses a node; RefusedNone when none does.
type Refusal uint8

const (
	RefusedNone Refusal = iota
	RefusedNodeName
	RefusedUnschedulable
	RefusedTaint
	RefusedSelector
)

// Refuses returns the first filter, in kube-scheduler's default order
// (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity), that
// refuses node n, and for RefusedTaint the taint not tolerated.
func (f *NodeFilter) Refuses(n *Node) (Refusal, *Taint) {
	if n.Unschedulable && !f.tolerates(&Taint{Key: TaintUnschedulable, Effect: EffectNoSchedule}) {
		return RefusedUnschedulable, nil
	}
	if f.NodeName != "" && f.NodeName != n.Name {
		return RefusedNodeName, nil
	}
	if t := f.Untolerated(n); t != nil {
		return RefusedTaint, t
	}
	if !f.Selects(n) {
		return RefusedSelector, nil
	}
	return RefusedNone, nil
}

// Untolerated returns the first NoSchedule or NoExecute taint of n that
// the pod does not tolerate; nil when it tolerates them all.
func (f *NodeFilter) Untolerated(n *Node) *Taint {
	for i := range n.Taints {
		t := &n.Taints[i]
		if (t.Effect == EffectNoSchedule || t.Effect == EffectNoExecute) && !f.tolerates(t) {
			return t
		}
	}
	return nil
}

// Selects reports whether n has the labels of the pod's nodeSelector and
// meets one of its required node affinity's terms (or it has none).
func (f *NodeFilter) Selects(n *Node) bool {
	for k, v := range f.Selector {
		if l, ok := n.Labels[k]; !ok || l != v {
			return false
		}
	}
	if len(f.Terms) == 0 {
		return true
	}
	for i := range f.Terms {
		if f.Terms[i].matches(n) {
			return true
		}
	}
	return false
}

// Reason words a refusal as kube-scheduler's plugins do.
func (r Refusal) Reason(t *Taint) string {
	switch r {
	case RefusedNodeName:
		return "node(s) didn't match the requested node name"
	case RefusedUnschedulable:
		return "node(s) were unschedulable"
	case RefusedTaint:
		return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
	case RefusedSelector:
		return reasons[fitSelector]
	}
	return ""
}

func (f *NodeFilter) tolerates(t *Taint) bool {
	for i := range f.Tolerations {
		if f.Tolerations[i].Tolerates(t) {
			return true
		}
	}
	return false
}

func (t *NodeTerm) matches(n *Node) bool {
	if len(t.Expressions) == 0 && len(t.Fields) == 0 {
		return false
	}
	for i := range t.Expressions {
		v, ok := n.Labels[t.Expressions[i].Key]
		if !t.Expressions[i].Matches(v, ok) {
			return false
		}
	}
	for i := range t.Fields {
		r := &t.Fields[i]
		// matchFields has one field, metadata.name, and In or NotIn.
		if r.Key != "metadata.name" || (r.Operator != "In" && r.Operator != "NotIn") || !r.Matches(n.Name, true) {
			return false
		}
	}
	return true
}

// Matches reports whether a label of value v (present: ok) meets r, as
// labels.Requirement.Matches: NotIn and DoesNotExist match an absent label,
// Gt and Lt compare one integer value with the label's; an unknown
// operator matches nothing.
func (r *Requirement) Matches(v string, ok bool) bool {
	switch r.Operator {
	case "In":
		return ok && contains(r.Values, v)
	case "NotIn":
		return !ok || !contains(r.Values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(r.Values) != 1 {
			return false
		}
		l, err1 := strconv.ParseInt(v, 10, 64)
		w, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return r.Operator == "Gt" && l > w || r.Operator == "Lt" && l < w
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// String shows the filter's contents, not its address (a PodSpec printed
// with %+v).
func (f *NodeFilter) String() string {
	if f == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{NodeName:%s Selector:%v Terms:%+v Tolerations:%+v}", f.NodeName, f.Selector, f.Terms, f.Tolerations)
}
