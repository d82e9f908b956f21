// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"maps"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/yaml"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

// gpuOperator is testdata/gpu-operator/v26.7.0.yaml: the GPU Operator's
// published defaults that decide where its operands run (the file cites
// its sources).
type gpuOperator struct {
	ClusterPolicy struct {
		Spec map[string]any `json:"spec"`
	} `json:"clusterPolicy"`
	Operands []struct {
		Spec         string            `json:"spec"`
		DaemonSet    string            `json:"daemonSet"`
		NodeSelector map[string]string `json:"nodeSelector"`
	} `json:"operands"`
	NodeLabels map[string]map[string]string `json:"nodeLabels"`
}

// operatorSwitchOff is the ClusterPolicy change docs/install.md ("From the
// GPU Operator") and values-gpu-operator.yaml give: the operator's device
// plugin, gpu-feature-discovery and dcgm-exporter off.
var operatorSwitchOff = []string{"devicePlugin", "gfd", "dcgmExporter"}

func loadGPUOperator(t *testing.T) gpuOperator {
	t.Helper()
	data, err := os.ReadFile("testdata/gpu-operator/v26.7.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var op gpuOperator
	if err := yaml.UnmarshalStrict(data, &op); err != nil {
		t.Fatal(err)
	}
	return op
}

// enabled is spec.<name>.enabled, true where the operand has no such
// field (the validator always runs).
func (op gpuOperator) enabled(spec map[string]any, name string) bool {
	s, _ := spec[name].(map[string]any)
	e, ok := s["enabled"].(bool)
	return !ok || e
}

// runs returns the nodes each operand's DaemonSet runs on under spec.
func (op gpuOperator) runs(spec map[string]any, nodes []*corev1.Node) map[string][]string {
	out := map[string][]string{}
	for _, o := range op.Operands {
		for _, n := range nodes {
			if op.enabled(spec, o.Spec) && matchesSelector(n, o.NodeSelector) {
				out[o.Spec] = append(out[o.Spec], n.Name)
			}
		}
	}
	return out
}

func matchesSelector(n *corev1.Node, sel map[string]string) bool {
	for k, v := range sel {
		if n.Labels[k] != v {
			return false
		}
	}
	return true
}

// operatorNodes are a cluster's nodes as the operator labels them: a GPU
// node of each workload configuration (NFD's PCI label, the common GPU
// label and the configuration's deploy labels) and a CPU node.
func operatorNodes(op gpuOperator) []*corev1.Node {
	var nodes []*corev1.Node
	for _, cfg := range slices.Sorted(maps.Keys(op.NodeLabels)) {
		l := map[string]string{
			"feature.node.kubernetes.io/pci-10de.present": "true",
			"nvidia.com/gpu.present":                      "true",
			"nvidia.com/gpu.workload.config":              cfg,
		}
		maps.Copy(l, op.NodeLabels[cfg])
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-" + cfg, Labels: l}})
	}
	return append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cpu", Labels: map[string]string{"kubernetes.io/os": "linux"}}})
}

// agentNodes returns the nodes the agent's DaemonSet runs on: its
// nodeSelector and required node affinity, as kube-scheduler matches them.
func agentNodes(t *testing.T, ds corev1.PodSpec, nodes []*corev1.Node) []string {
	t.Helper()
	pod := &corev1.Pod{Spec: ds}
	var on []string
	for _, n := range nodes {
		ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			on = append(on, n.Name)
		}
	}
	return on
}

// TestGPUOperatorPreset renders values-gpu-operator.yaml against the GPU
// Operator v26.7.0's defaults: the agent runs on exactly the nodes where
// the operator's device plugin ran and is switched off, and where
// gpu-feature-discovery and dcgm-exporter were; the operator's driver,
// toolkit, MIG manager and validator stay where they were; the agent uses
// the operator's runtime class, priority class, tolerations and MIG
// strategy. The chart's default node selection would also take the VM
// nodes, which the preset leaves out.
func TestGPUOperatorPreset(t *testing.T) {
	op := loadGPUOperator(t)
	nodes := operatorNodes(op)
	before := op.runs(op.ClusterPolicy.Spec, nodes)
	if want := []string{"gpu-container"}; !slices.Equal(before["devicePlugin"], want) {
		t.Fatalf("the operator's device plugin runs on %v, want %v (the fixture)", before["devicePlugin"], want)
	}
	patched := maps.Clone(op.ClusterPolicy.Spec)
	for _, name := range operatorSwitchOff {
		s := maps.Clone(patched[name].(map[string]any))
		s["enabled"] = false
		patched[name] = s
	}
	after := op.runs(patched, nodes)
	for _, name := range operatorSwitchOff {
		if len(after[name]) != 0 {
			t.Errorf("%s still runs on %v", name, after[name])
		}
	}
	for _, name := range []string{"driver", "toolkit", "validator"} {
		if !slices.Equal(after[name], before[name]) || len(after[name]) == 0 {
			t.Errorf("%s runs on %v after the change, %v before", name, after[name], before[name])
		}
	}

	for _, files := range [][]string{{"gpuplane/values-gpu-operator.yaml"}, {"gpuplane/values-gpu-operator.yaml", "gpuplane/values-gpu-operator-per-node.yaml"}} {
		var args []string
		for _, f := range files {
			args = append(args, "-f", f)
		}
		ds, c := agent(t, render(t, args...))
		p := ds.Spec.Template.Spec
		for _, name := range operatorSwitchOff {
			if got := agentNodes(t, p, nodes); !slices.Equal(got, before[name]) {
				t.Errorf("%v: the agent runs on %v, the operator's %s ran on %v", files, got, name, before[name])
			}
		}
		spec := op.ClusterPolicy.Spec
		if want := spec["operator"].(map[string]any)["runtimeClass"]; p.RuntimeClassName == nil || *p.RuntimeClassName != want {
			t.Errorf("%v: runtimeClassName %v, want the operator's %v", files, p.RuntimeClassName, want)
		}
		dsets := spec["daemonsets"].(map[string]any)
		if p.PriorityClassName != dsets["priorityClassName"] {
			t.Errorf("%v: priorityClassName %q, want the operator's %v", files, p.PriorityClassName, dsets["priorityClassName"])
		}
		for _, tol := range dsets["tolerations"].([]any) {
			m := tol.(map[string]any)
			want := corev1.Toleration{Key: m["key"].(string), Operator: corev1.TolerationOperator(m["operator"].(string)), Effect: corev1.TaintEffect(m["effect"].(string))}
			if !slices.Contains(p.Tolerations, want) {
				t.Errorf("%v: tolerations %v lack the operator's %v", files, p.Tolerations, want)
			}
		}
		if !slices.Contains(c.Args, "--label-node") {
			t.Errorf("%v: args %v: no --label-node in place of gpu-feature-discovery", files, c.Args)
		}
	}

	// One configuration: the operator's MIG strategy.
	r := render(t, "-f", "gpuplane/values-gpu-operator.yaml")
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", fullname, &cm)
	cfg, err := configv1.ParseConfig("config.yaml", []byte(cm.Data["config.yaml"]))
	if want := op.ClusterPolicy.Spec["mig"].(map[string]any)["strategy"]; err != nil || cfg.Flags.MIGStrategy != want {
		t.Errorf("config %v, %v: migStrategy, want the operator's mig.strategy %v", cfg, err, want)
	}
	// Per node: the operator's ConfigMap mounted, no --config.
	_, c := agent(t, render(t, "-f", "gpuplane/values-gpu-operator.yaml", "-f", "gpuplane/values-gpu-operator-per-node.yaml", "--set", "nodeConfigs.name=time-slicing-config,nodeConfigs.default=any"))
	if !slices.Contains(c.Args, "--config-dir=/etc/gpuplane/configs") || !slices.Contains(c.Args, "--default-config=any") || slices.Contains(c.Args, "--config=/etc/gpuplane/config.yaml") {
		t.Errorf("per node: args %v", c.Args)
	}

	// The chart's defaults would run the agent on the VM nodes too.
	ds, _ := agent(t, render(t))
	if got, want := agentNodes(t, ds.Spec.Template.Spec, nodes), []string{"gpu-container", "gpu-vm-passthrough", "gpu-vm-vgpu"}; !slices.Equal(got, want) {
		t.Errorf("the chart's defaults: the agent runs on %v, want %v", got, want)
	}
}
