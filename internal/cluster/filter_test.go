// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import "testing"

func filterNode(t *testing.T, name string) Node {
	t.Helper()
	n, err := NewNode(name, "A100-80GB", 8000, 32768, 2)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFilterTaints: a CPU pod without a toleration of nvidia.com/gpu never
// fits a node tainted NoSchedule or NoExecute; PreferNoSchedule does not
// keep it off; Exists, Equal, an empty key with Exists and an empty effect
// tolerate as v1.Toleration.ToleratesTaint does.
func TestFilterTaints(t *testing.T) {
	gpuTaint := Taint{Key: "nvidia.com/gpu", Value: "present", Effect: EffectNoSchedule}
	cases := []struct {
		name  string
		taint Taint
		tol   []Toleration
		want  bool
	}{
		{"no toleration", gpuTaint, nil, false},
		{"NoExecute", Taint{Key: "nvidia.com/gpu", Effect: EffectNoExecute}, nil, false},
		{"PreferNoSchedule", Taint{Key: "nvidia.com/gpu", Effect: "PreferNoSchedule"}, nil, true},
		{"Exists", gpuTaint, []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: EffectNoSchedule}}, true},
		{"Equal value", gpuTaint, []Toleration{{Key: "nvidia.com/gpu", Operator: "Equal", Value: "present"}}, true},
		{"no operator is Equal", gpuTaint, []Toleration{{Key: "nvidia.com/gpu", Value: "present"}}, true},
		{"Equal other value", gpuTaint, []Toleration{{Key: "nvidia.com/gpu", Operator: "Equal", Value: "absent"}}, false},
		{"other effect", gpuTaint, []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: EffectNoExecute}}, false},
		{"other key", gpuTaint, []Toleration{{Key: "example.com/x", Operator: "Exists"}}, false},
		{"empty key Exists", gpuTaint, []Toleration{{Operator: "Exists"}}, true},
	}
	for _, c := range cases {
		n := filterNode(t, "g0")
		n.Taints = []Taint{c.taint}
		p := Pod{Name: "cpu", CPUMilli: 100, MemoryMiB: 100, Filter: &NodeFilter{Tolerations: c.tol}}
		ok, why := Fits(&n, &p)
		if ok != c.want || Feasible(&n, &p) != c.want {
			t.Errorf("%s: Fits %v (%q), want %v", c.name, ok, why, c.want)
		}
		if !ok && why != "node(s) had untolerated taint {"+c.taint.Key+": "+c.taint.Value+"}" {
			t.Errorf("%s: reason %q", c.name, why)
		}
	}
	// Without a Filter (a scheduler plugin's pod) taints are not read.
	n := filterNode(t, "g0")
	n.Taints = []Taint{gpuTaint}
	if !Feasible(&n, &Pod{Name: "cpu", CPUMilli: 100}) {
		t.Error("a pod without a Filter is refused by a taint")
	}
}

// TestFilterUnschedulable: a cordoned node takes no pod but one that
// tolerates node.kubernetes.io/unschedulable.
func TestFilterUnschedulable(t *testing.T) {
	n := filterNode(t, "g0")
	n.Unschedulable = true
	p := Pod{Name: "gpu", CPUMilli: 100, NumGPU: 1, GPUMilli: MilliGPU, Filter: &NodeFilter{}}
	if ok, why := Fits(&n, &p); ok || why != "node(s) were unschedulable" {
		t.Errorf("cordoned: Fits %v %q", ok, why)
	}
	p.Filter.Tolerations = []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists"}}
	if Feasible(&n, &p) {
		t.Error("cordoned node fits a pod tolerating only nvidia.com/gpu")
	}
	p.Filter.Tolerations = []Toleration{{Key: TaintUnschedulable, Operator: "Exists", Effect: EffectNoSchedule}}
	if !Feasible(&n, &p) {
		t.Error("cordoned node refuses a pod tolerating node.kubernetes.io/unschedulable")
	}
}

// TestFilterNodeName: a pod with spec.nodeName fits that node only.
func TestFilterNodeName(t *testing.T) {
	a, b := filterNode(t, "a"), filterNode(t, "b")
	p := Pod{Name: "p", CPUMilli: 100, Filter: &NodeFilter{NodeName: "b"}}
	if ok, why := Fits(&a, &p); ok || why != "node(s) didn't match the requested node name" {
		t.Errorf("node a: Fits %v %q", ok, why)
	}
	if !Feasible(&b, &p) {
		t.Error("node b refuses the pod named to it")
	}
}

// TestFilterSelector: nodeSelector is exact (a MIG product label is not
// its GPU model); required node affinity ORs terms and ANDs expressions.
func TestFilterSelector(t *testing.T) {
	const product = "nvidia.com/gpu.product"
	mig := filterNode(t, "mig")
	mig.Labels = map[string]string{product: "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "zone": "a", "nvidia.com/gpu.count": "8"}
	whole := filterNode(t, "whole")
	whole.Labels = map[string]string{product: "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "2"}
	in := func(op, key string, vals ...string) Requirement {
		return Requirement{Key: key, Operator: op, Values: vals}
	}
	cases := []struct {
		name           string
		f              NodeFilter
		onMIG, onWhole bool
	}{
		{"selector exact MIG product", NodeFilter{Selector: map[string]string{product: "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"}}, true, false},
		{"selector model product", NodeFilter{Selector: map[string]string{product: "NVIDIA-A100-SXM4-80GB"}}, false, true},
		{"In", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("In", "zone", "a", "b")}}}}, true, false},
		{"NotIn", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("NotIn", "zone", "a")}}}}, false, true},
		{"Exists", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("Exists", "zone")}}}}, true, false},
		{"DoesNotExist", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("DoesNotExist", "zone")}}}}, false, true},
		{"Gt", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("Gt", "nvidia.com/gpu.count", "4")}}}}, true, false},
		{"Lt", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("Lt", "nvidia.com/gpu.count", "4")}}}}, false, true},
		{"ANDed", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("Exists", "zone"), in("Lt", "nvidia.com/gpu.count", "4")}}}}, false, false},
		{"ORed", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("Exists", "zone")}}, {Expressions: []Requirement{in("Lt", "nvidia.com/gpu.count", "4")}}}}, true, true},
		{"empty term", NodeFilter{Terms: []NodeTerm{{}}}, false, false},
		{"matchFields", NodeFilter{Terms: []NodeTerm{{Fields: []Requirement{in("In", "metadata.name", "whole")}}}}, false, true},
		{"unknown operator", NodeFilter{Terms: []NodeTerm{{Expressions: []Requirement{in("Near", "zone", "a")}}}}, false, false},
	}
	for _, c := range cases {
		p := Pod{Name: "p", CPUMilli: 100, Filter: &c.f}
		for _, x := range []struct {
			n    *Node
			want bool
		}{{&mig, c.onMIG}, {&whole, c.onWhole}} {
			ok, why := Fits(x.n, &p)
			if ok != x.want || Feasible(x.n, &p) != x.want {
				t.Errorf("%s on %s: Fits %v (%q), want %v", c.name, x.n.Name, ok, why, x.want)
			}
			if !ok && why != "node(s) didn't match Pod's node affinity/selector" {
				t.Errorf("%s on %s: reason %q", c.name, x.n.Name, why)
			}
		}
	}
}
