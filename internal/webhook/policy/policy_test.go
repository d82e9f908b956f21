// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/api/resource"
)

func load(t *testing.T) *Policy {
	t.Helper()
	data, err := os.ReadFile("testdata/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseDefaults(t *testing.T) {
	p := load(t)
	if p.TeamLabel != DefaultTeamLabel || p.TrainingLabel != DefaultTrainingLabel || p.GPUTaint.Key != "nvidia.com/gpu" || p.GPUTaint.Effect != "NoSchedule" {
		t.Errorf("defaults: %+v", p)
	}
	if len(p.Teams) != 3 || p.Teams[0].MaxGPUsPerPod != 8 || p.Teams[1].NamespaceSelector.MatchLabels["gpuplane.io/team"] != "inference" || p.Teams[2].MaxGPUsPerPod != 4 {
		t.Errorf("teams: %+v", p.Teams)
	}
}

func TestParseErrors(t *testing.T) {
	head := "apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\n"
	for _, c := range []struct{ in, want string }{
		{head + "teams:\n- name: a\n  namespaces: [a]\n  maxGPU: 3\n", `p.yaml:6: teams[0].maxGPU: unknown field; did you mean "maxGPUsPerPod"?`},
		{head + "colour: red\n", "p.yaml:3: colour: unknown field"},
		{"apiVersion: v1\nkind: GPUPolicy\n", "p.yaml:1: apiVersion: is \"v1\", want gpuplane.io/v1alpha1"},
		{"apiVersion: gpuplane.io/v1alpha1\nkind: Pod\n", "p.yaml:2: kind: is \"Pod\", want GPUPolicy"},
		{head + "teams: []\n", "p.yaml:3: teams: no team"},
		{head + "teams:\n- name: a\n  namespaces: [a]\n  maxGPUsPerPod: 1.5\n", "p.yaml:6: teams[0].maxGPUsPerPod: 1.5 is not a whole number"},
		{head + "teams:\n- name: a\n  namespaces: [a]\n- name: a\n  namespaces: [b]\n", "p.yaml:6: teams[1].name: team \"a\" given twice"},
		{head + "teams:\n- name: a\n  namespaces: [a]\n- name: b\n  namespaces: [c, a]\n", "p.yaml:7: teams[1].namespaces: namespace \"a\" already belongs to team \"a\""},
		{head + "teams:\n- name: a\n", "p.yaml:4: teams[0]: team \"a\" has neither namespaces nor namespaceSelector.matchLabels"},
		{head + "teams:\n- name: a\n  namespaces: [a]\n  maxGPUsPerPod: -1\n", "p.yaml:6: teams[0].maxGPUsPerPod: is -1"},
		{head + "teams:\n- name: a\n  namespaces: [a]\n  allowedResources: [cpu]\n", "p.yaml:6: teams[0].allowedResources: \"cpu\" is not a GPU resource"},
		{head + "gpuTaint: {effect: Never}\nteams:\n- name: a\n  namespaces: [a]\n", "p.yaml:3: gpuTaint.effect: is \"Never\""},
		{head + "teams:\n- name: a\n  namespaces: [a]\n  maxGPUsPerPod: lots\n", `p.yaml:6: teams[0].maxGPUsPerPod: "lots" is not a whole number`},
		// Label keys and namespace names as Kubernetes checks them
		// (internal/kubename): a prefix is a DNS-1123 subdomain, a name
		// part and a namespace at most 63 bytes.
		{head + "teamLabel: a..b/team\nteams:\n- name: a\n  namespaces: [a]\n", `p.yaml:3: teamLabel: "a..b/team" is not a label key`},
		{head + "trainingLabel: a-.b/training\nteams:\n- name: a\n  namespaces: [a]\n", `p.yaml:3: trainingLabel: "a-.b/training" is not a label key`},
		{head + "teamLabel: example.com/" + strings.Repeat("t", 64) + "\nteams:\n- name: a\n  namespaces: [a]\n", "p.yaml:3: teamLabel: "},
		{head + "excludeNamespaces: [" + strings.Repeat("n", 64) + "]\nteams:\n- name: a\n  namespaces: [a]\n", "p.yaml:3: excludeNamespaces[0]: "},
		{"", "p.yaml: empty policy file"},
		{"a: [", "p.yaml:1: did not find expected node content"},
	} {
		_, err := Parse("p.yaml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

var (
	research  = Namespace{Name: "research"}
	inference = Namespace{Name: "serve", Labels: map[string]string{"gpuplane.io/team": "inference"}}
	nobody    = Namespace{Name: "default"}
)

func gpuPod(res map[string]int64) *Pod {
	return &Pod{Name: "p", NodeSelector: map[string]string{resource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"},
		Containers: []Container{{Name: "main", Resources: res}}}
}

func TestValidate(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		name string
		pod  *Pod
		ns   Namespace
		want []string // Violation.String() prefixes
	}{
		{"good whole GPUs", gpuPod(map[string]int64{"nvidia.com/gpu": 8, "cpu": 4}), research, nil},
		{"cpu pod anywhere", &Pod{Containers: []Container{{Name: "c", Resources: map[string]int64{"cpu": 1}}}}, nobody, nil},
		{"no team", gpuPod(map[string]int64{"nvidia.com/gpu": 1}), nobody, []string{`team: namespace "default" belongs to no team`}},
		{"too many", gpuPod(map[string]int64{"nvidia.com/gpu": 9}), research, []string{"max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8"}},
		{"milli not allowed", gpuPod(map[string]int64{"gpuplane.io/gpu-milli": 500}), research, []string{"allowed-resources: container main: resource gpuplane.io/gpu-milli is not allowed for team research"}},
		{"mig by prefix", gpuPod(map[string]int64{"nvidia.com/mig-1g.10gb": 2}), research, nil},
		{"wrong model", &Pod{NodeSelector: map[string]string{resource.LabelGPUProduct: "Tesla-T4"}, Containers: []Container{{Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 1}}}}, research,
			[]string{`allowed-models: GPU model "Tesla-T4" is not allowed for team research`}},
		{"no model", &Pod{Containers: []Container{{Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 1}}}}, research,
			[]string{"allowed-models: team research may use only GPU models NVIDIA-H100-80GB-HBM3; add nodeSelector nvidia.com/gpu.product"}},
		{"model by affinity", &Pod{ModelAffinity: [][]string{{"NVIDIA-H100-80GB-HBM3", "Tesla-T4"}}, Containers: []Container{{Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 1}}}}, research,
			[]string{`allowed-models: GPU model "Tesla-T4"`}},
		{"training on shared", &Pod{Owners: []string{"PyTorchJob"}, NodeSelector: map[string]string{resource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}, Containers: []Container{{Name: "w", Resources: map[string]int64{"nvidia.com/gpu.shared": 1}}}}, research,
			[]string{"training-on-shared: container w: training pods may not use time-sliced or fractional GPUs (nvidia.com/gpu.shared)"}},
		{"ray worker on milli", &Pod{Labels: map[string]string{"ray.io/node-type": "worker"}, Containers: []Container{{Name: "ray", Resources: map[string]int64{"gpuplane.io/gpu-milli": 300}}}}, inference,
			[]string{"training-on-shared: container ray:"}},
		{"ray head on milli", &Pod{Labels: map[string]string{"ray.io/node-type": "head"}, Containers: []Container{{Name: "ray", Resources: map[string]int64{"gpuplane.io/gpu-milli": 300}}}}, inference, nil},
		{"labelled training", &Pod{Labels: map[string]string{"gpuplane.io/training": "true"}, Containers: []Container{{Name: "t", Resources: map[string]int64{"nvidia.com/gpu.shared": 1}}}}, inference,
			[]string{"training-on-shared: container t:"}},
		{"milli 1500 is 2 GPUs", &Pod{Containers: []Container{{Name: "c", Resources: map[string]int64{"gpuplane.io/gpu-milli": 1500}}}}, inference,
			[]string{"max-gpus-per-pod: the pod asks for 2 GPUs, team inference allows at most 1"}},
		{"init container counts as max", &Pod{Containers: []Container{{Name: "i", Init: true, Resources: map[string]int64{"nvidia.com/gpu.shared": 1}}, {Name: "c", Resources: map[string]int64{"nvidia.com/gpu.shared": 1}}}}, inference, nil},
		// A native sidecar runs alongside: 1 + 8 = 9 GPUs
		// (k8s.io/component-helpers resource.PodRequests); a plain init
		// container after it uses 2 + 1 = 3 at most.
		{"sidecar adds", &Pod{NodeSelector: map[string]string{resource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}, Containers: []Container{{Name: "s", Init: true, Sidecar: true, Resources: map[string]int64{"nvidia.com/gpu": 1}}, {Name: "i", Init: true, Resources: map[string]int64{"nvidia.com/gpu": 2}}, {Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 8}}}}, research,
			[]string{"max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8"}},
		{"init after sidecar", &Pod{NodeSelector: map[string]string{resource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}, Containers: []Container{{Name: "s", Init: true, Sidecar: true, Resources: map[string]int64{"nvidia.com/gpu": 1}}, {Name: "i", Init: true, Resources: map[string]int64{"nvidia.com/gpu": 8}}, {Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 1}}}}, research,
			[]string{"max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8"}},
		{"squatter", &Pod{Tolerations: []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists"}}}, research,
			[]string{"gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule"}},
		{"tolerate everything", &Pod{Tolerations: []Toleration{{Operator: "Exists"}}}, nobody, []string{"gpu-taint-toleration:"}},
		{"other taint", &Pod{Tolerations: []Toleration{{Key: "node.kubernetes.io/not-ready", Operator: "Exists"}, {Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoExecute"}}}, nobody, nil},
	} {
		vs := p.Validate(c.pod, c.ns)
		if len(vs) != len(c.want) {
			t.Errorf("%s: %v, want %q", c.name, vs, c.want)
			continue
		}
		for i, v := range vs {
			if !strings.HasPrefix(v.String(), c.want[i]) {
				t.Errorf("%s: %q, want prefix %q", c.name, v, c.want[i])
			}
		}
	}
}

func TestMutate(t *testing.T) {
	p := load(t)
	js := func(ops []PatchOp) string {
		b, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pod := gpuPod(map[string]int64{"nvidia.com/gpu": 1})
	if got, want := js(p.Mutate(pod, research)), `[{"op":"add","path":"/spec/tolerations","value":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]},{"op":"add","path":"/spec/schedulerName","value":"gpuplane-scheduler"},{"op":"add","path":"/metadata/labels","value":{"gpuplane.io/team":"research"}}]`; got != want {
		t.Errorf("bare GPU pod:\n got %s\nwant %s", got, want)
	}
	pod.Tolerations = []Toleration{{Key: "x", Operator: "Exists"}}
	pod.SchedulerName = "default-scheduler"
	pod.Labels = map[string]string{"app": "a", "gpuplane.io/team": "other"}
	if got, want := js(p.Mutate(pod, research)), `[{"op":"add","path":"/spec/tolerations/-","value":{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}},{"op":"replace","path":"/spec/schedulerName","value":"gpuplane-scheduler"},{"op":"replace","path":"/metadata/labels/gpuplane.io~1team","value":"research"}]`; got != want {
		t.Errorf("set fields:\n got %s\nwant %s", got, want)
	}
	done := gpuPod(map[string]int64{"nvidia.com/gpu": 1})
	done.Tolerations = []Toleration{{Key: "nvidia.com/gpu", Value: "", Effect: "NoSchedule"}}
	done.SchedulerName = "gpuplane-scheduler"
	done.Labels = map[string]string{"gpuplane.io/team": "research"}
	if ops := p.Mutate(done, research); len(ops) != 0 {
		t.Errorf("already mutated pod: %s", js(ops))
	}
	if ops := p.Mutate(&Pod{Containers: []Container{{Name: "c", Resources: map[string]int64{"cpu": 1}}}}, research); ops != nil {
		t.Errorf("CPU pod: %s", js(ops))
	}
	if ops := p.Mutate(gpuPod(map[string]int64{"nvidia.com/gpu": 1}), nobody); ops != nil {
		t.Errorf("no team: %s", js(ops))
	}
}

func FuzzParse(f *testing.F) {
	data, err := os.ReadFile("testdata/policy.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\nteams:\n- name: a\n  namespaces: [a]\n"))
	f.Add([]byte("teams: [{name: a, namespaceSelector: {matchLabels: {a: b}}}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse("f.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if len(p.Teams) == 0 || p.APIVersion != APIVersion {
			t.Errorf("accepted policy without teams or version: %+v", p)
		}
		pod := &Pod{Tolerations: []Toleration{{Operator: "Exists"}}, Containers: []Container{{Name: "c", Resources: map[string]int64{"nvidia.com/gpu.shared": 3}}}}
		p.Validate(pod, Namespace{Name: "a"})
		p.Mutate(pod, Namespace{Name: "a"})
	})
}
