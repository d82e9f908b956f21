// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/api/resource"
)

// TestGPUPatternIsIsGPU: the CEL test of a GPU resource name is
// resource.IsAccelerator (CEL's matches is RE2, as Go's regexp).
func TestGPUPatternIsIsGPU(t *testing.T) {
	re := regexp.MustCompile(gpuPattern)
	for _, r := range []string{
		"nvidia.com/gpu", "nvidia.com/gpu.shared", "gpuplane.io/gpu-milli", "gpuplane.io/gpu-milli.shared",
		"nvidia.com/mig-1g.10gb", "nvidia.com/mig-1g.10gb.shared", "nvidia.com/mig-x.shared.shared", "nvidia.com/mig-.shared",
		"nvidia.com/mig-", "nvidia.com/gpu.shared.shared", "nvidia.com/gpux", "xnvidia.com/gpu", "cpu", "memory",
		"amd.com/gpu", "gpuplane.io/gpu", "nvidia.com/gpu-milli",
		"habana.ai/gaudi", "amd.com/gpu.shared", "habana.ai/gaudi.shared", "amd.com/gpux", "xamd.com/gpu", "amd.com/cpx_nps1", "habana.ai/gaudi2",
	} {
		if got, want := re.MatchString(r) && r != notGPU, resource.IsAccelerator(r); got != want {
			t.Errorf("%s: CEL says GPU %v, resource.IsAccelerator %v", r, got, want)
		}
	}
}

const smallPolicy = `apiVersion: gpuplane.io/v1alpha1
kind: GPUPolicy
gpuTaint: {key: example.com/gpu, value: "on", effect: NoExecute}
teams:
- name: a
  namespaces: [a1, a2]
  allowedModels: [M1]
  maxGPUsPerPod: 4
  schedulerName: sched-a
- name: b
  namespaceSelector: {matchLabels: {tier: b}}
  allowedResources: [nvidia.com/mig-*]
  allowTrainingOnShared: true
`

// TestAdmissionPolicyData: the policy file enters the CEL as these
// literals, worked out by hand.
func TestAdmissionPolicyData(t *testing.T) {
	p, err := Parse("small.yaml", []byte(smallPolicy))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := p.Data()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`teamNames=["a","b"]`,
		`teamNamespaces=[["a1","a2"],[]]`,
		`teamSelectors=[{},{"tier":"b"}]`,
		`teamAllowedResources=[[],["nvidia.com/mig-*"]]`,
		`teamAllowedModels=[["M1"],[]]`,
		`teamMaxGPUs=[4,0]`,
		`teamTrainingOnShared=[false,true]`,
		`teamSchedulerNames=["sched-a",""]`,
		`teamLabel="gpuplane.io/team"`,
		`trainingLabel="gpuplane.io/training"`,
		`taintKey="example.com/gpu"`,
		`taintValue="on"`,
		`taintEffect="NoExecute"`,
	}
	var got []string
	for _, v := range vars {
		got = append(got, v.Name+"="+v.Expression)
	}
	if !slices.Equal(got, want) {
		t.Errorf("data:\n got %q\nwant %q", got, want)
	}
}

var variableRef = regexp.MustCompile(`variables\.([A-Za-z]+)`)

// TestAdmissionPolicies: the objects `gpuplane policy vap` prints, and that
// every variable names only those before it (as the API server requires)
// and every rule has a validation naming it.
func TestAdmissionPolicies(t *testing.T) {
	p, err := Parse("small.yaml", []byte(smallPolicy))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.AdmissionPolicies(AdmissionPolicyOptions{ExcludeNamespaces: []string{"gpu-system"}})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("%d documents:\n%s", len(docs), out)
	}
	var vap struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string
		Metadata   struct{ Name string }
		Spec       struct {
			FailurePolicy    string `yaml:"failurePolicy"`
			MatchConstraints struct {
				ResourceRules []struct {
					Operations, Resources []string
				} `yaml:"resourceRules"`
			} `yaml:"matchConstraints"`
			Variables   []Variable
			Validations []Validation
		}
	}
	var b struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			PolicyName        string   `yaml:"policyName"`
			ValidationActions []string `yaml:"validationActions"`
			MatchResources    struct {
				NamespaceSelector struct {
					MatchExpressions []struct {
						Key, Operator string
						Values        []string
					} `yaml:"matchExpressions"`
				} `yaml:"namespaceSelector"`
			} `yaml:"matchResources"`
		}
	}
	if err := yaml.Unmarshal([]byte(docs[0]), &vap); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &b); err != nil {
		t.Fatal(err)
	}
	if vap.APIVersion != "admissionregistration.k8s.io/v1" || vap.Kind != "ValidatingAdmissionPolicy" || vap.Metadata.Name != "gpuplane-gpu-policy" || vap.Spec.FailurePolicy != "Fail" {
		t.Errorf("policy %s %s %s failurePolicy %s", vap.APIVersion, vap.Kind, vap.Metadata.Name, vap.Spec.FailurePolicy)
	}
	if r := vap.Spec.MatchConstraints.ResourceRules; len(r) != 1 || !slices.Equal(r[0].Operations, []string{"CREATE"}) || !slices.Equal(r[0].Resources, []string{"pods"}) {
		t.Errorf("resourceRules %+v", r)
	}
	if b.Kind != "ValidatingAdmissionPolicyBinding" || b.Metadata.Name != "gpuplane-gpu-policy" || b.Spec.PolicyName != "gpuplane-gpu-policy" || !slices.Equal(b.Spec.ValidationActions, []string{"Deny"}) {
		t.Errorf("binding %+v", b)
	}
	if e := b.Spec.MatchResources.NamespaceSelector.MatchExpressions; len(e) != 1 || e[0].Key != "kubernetes.io/metadata.name" || e[0].Operator != "NotIn" || !slices.Equal(e[0].Values, []string{"kube-system", "gpu-system"}) {
		t.Errorf("namespaceSelector %+v", e)
	}
	if got := vap.Spec.Variables[2]; got.Name != "teamSelectors" || got.Expression != `[{},{"tier":"b"}]` {
		t.Errorf("variables[2] = %+v", got)
	}
	defined := map[string]bool{}
	for _, v := range vap.Spec.Variables {
		for _, m := range variableRef.FindAllStringSubmatch(v.Expression, -1) {
			if !defined[m[1]] {
				t.Errorf("variable %s names variables.%s, not defined before it", v.Name, m[1])
			}
		}
		if defined[v.Name] {
			t.Errorf("variable %s twice", v.Name)
		}
		defined[v.Name] = true
	}
	var names []string
	for _, v := range vap.Spec.Variables {
		names = append(names, v.Name)
	}
	if len(names) != len(DataVariables)+len(LogicVariables()) || !slices.Equal(names[:len(DataVariables)], DataVariables) {
		t.Errorf("variables %v, want the data variables %v then the logic", names, DataVariables)
	}
	rules := map[string]bool{}
	for _, v := range vap.Spec.Validations {
		for _, m := range variableRef.FindAllStringSubmatch(v.Expression+" "+v.MessageExpression, -1) {
			if !defined[m[1]] {
				t.Errorf("validation %q names variables.%s, not defined", v.Message, m[1])
			}
		}
		if v.Reason != "Forbidden" || !strings.HasPrefix(v.MessageExpression, "variables.refuses + ") {
			t.Errorf("validation %+v", v)
		}
		for _, r := range []string{RuleTeam, RuleResource, RuleModel, RuleMaxGPUs, RuleTraining, RuleTaintSquatter, RuleTeamLabel} {
			if strings.HasPrefix(v.Message, "gpuplane GPU policy: "+r+": ") && strings.Contains(v.MessageExpression, r+": ") {
				rules[r] = true
			}
		}
	}
	if len(rules) != 7 || len(vap.Spec.Validations) != 8 {
		t.Errorf("validations for rules %v, %d validations; want 7 rules, 8 validations (allowed-models has two)", rules, len(vap.Spec.Validations))
	}
}

// TestMutatingAdmissionPolicy: with Mutating, a MutatingAdmissionPolicy and
// binding of the same name follow, with the same variables and the three
// mutations of Policy.Mutate.
func TestMutatingAdmissionPolicy(t *testing.T) {
	p, err := Parse("small.yaml", []byte(smallPolicy))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.AdmissionPolicies(AdmissionPolicyOptions{Mutating: true})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "\n---\n")
	if len(docs) != 6 {
		t.Fatalf("%d documents:\n%s", len(docs), out)
	}
	var m struct {
		Kind string
		Spec struct {
			FailurePolicy      string `yaml:"failurePolicy"`
			ReinvocationPolicy string `yaml:"reinvocationPolicy"`
			Variables          []Variable
			Validations        []Validation
			Mutations          []Mutation
		}
	}
	var b map[string]any
	if err := yaml.Unmarshal([]byte(docs[2]), &m); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(docs[3]), &b); err != nil {
		t.Fatal(err)
	}
	if m.Kind != "MutatingAdmissionPolicy" || m.Spec.FailurePolicy != "Fail" || m.Spec.ReinvocationPolicy != "IfNeeded" || len(m.Spec.Validations) != 0 || len(m.Spec.Mutations) != 3 || len(m.Spec.Variables) != len(DataVariables)+len(LogicVariables()) {
		t.Errorf("policy %+v", m)
	}
	for _, mu := range m.Spec.Mutations {
		if mu.PatchType != "JSONPatch" || !strings.HasPrefix(mu.JSONPatch.Expression, "!variables.gpuPod || variables.team == '' ? [] : ") {
			t.Errorf("mutation %+v", mu)
		}
	}
	spec, _ := b["spec"].(map[string]any)
	if b["kind"] != "MutatingAdmissionPolicyBinding" || spec["policyName"] != "gpuplane-gpu-policy" || spec["validationActions"] != nil || spec["matchResources"] == nil {
		t.Errorf("binding %v", b)
	}
}

// TestClaimAdmissionPolicy: the claim policy follows the pod policy (and
// the mutating one), named NAME-claims, of resource.k8s.io/v1
// ResourceClaimTemplates and ResourceClaims on CREATE and UPDATE,
// failurePolicy Fail, with the pod policy's data variables and binding
// scope, every variable naming only those before it, and three
// validations: max-gpus-per-pod, allowed-models, allowed-resources. What it counts is checked on kube-apiserver
// (deploy/helm TestAdmissionPolicyDRAOnCluster).
func TestClaimAdmissionPolicy(t *testing.T) {
	p, err := Parse("small.yaml", []byte(smallPolicy))
	if err != nil {
		t.Fatal(err)
	}
	for _, mutating := range []bool{false, true} {
		out, err := p.AdmissionPolicies(AdmissionPolicyOptions{Name: "gp", ExcludeNamespaces: []string{"gpu-system"}, Mutating: mutating})
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(string(out), "\n---\n")
		var vap struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				FailurePolicy    string `yaml:"failurePolicy"`
				MatchConstraints struct {
					ResourceRules []struct {
						APIGroups   []string `yaml:"apiGroups"`
						APIVersions []string `yaml:"apiVersions"`
						Operations  []string
						Resources   []string
					} `yaml:"resourceRules"`
				} `yaml:"matchConstraints"`
				Variables   []Variable
				Validations []Validation
			}
		}
		if err := yaml.Unmarshal([]byte(docs[len(docs)-2]), &vap); err != nil {
			t.Fatal(err)
		}
		if vap.Kind != "ValidatingAdmissionPolicy" || vap.Metadata.Name != "gp-claims" || vap.Spec.FailurePolicy != "Fail" {
			t.Errorf("mutating %v: policy %s %s failurePolicy %s", mutating, vap.Kind, vap.Metadata.Name, vap.Spec.FailurePolicy)
		}
		r := vap.Spec.MatchConstraints.ResourceRules
		if len(r) != 1 || !slices.Equal(r[0].APIGroups, []string{"resource.k8s.io"}) || !slices.Equal(r[0].APIVersions, []string{"v1"}) ||
			!slices.Equal(r[0].Operations, []string{"CREATE", "UPDATE"}) || !slices.Equal(r[0].Resources, []string{"resourceclaimtemplates", "resourceclaims"}) {
			t.Errorf("resourceRules %+v", r)
		}
		// The binding: the pod policy's, with the claim policy's name.
		wantBinding := strings.ReplaceAll(docs[1], "name: gp\n", "name: gp-claims\n")
		wantBinding = strings.ReplaceAll(wantBinding, "policyName: gp\n", "policyName: gp-claims\n")
		if got := strings.TrimSuffix(docs[len(docs)-1], "\n"); got != strings.TrimSuffix(wantBinding, "\n") {
			t.Errorf("binding:\n%s\nwant:\n%s", got, wantBinding)
		}
		data, err := p.Data()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(vap.Spec.Variables[:len(data)], data) {
			t.Errorf("data variables %v, want %v", vap.Spec.Variables[:len(data)], data)
		}
		defined := map[string]bool{}
		for _, v := range vap.Spec.Variables {
			for _, m := range variableRef.FindAllStringSubmatch(v.Expression, -1) {
				if !defined[m[1]] {
					t.Errorf("variable %s names variables.%s, not defined before it", v.Name, m[1])
				}
			}
			defined[v.Name] = true
		}
		v := vap.Spec.Validations
		if len(v) != 3 || !strings.Contains(v[0].MessageExpression, "'"+RuleMaxGPUs+": the claim asks for ' + string(variables.gpus) + ' GPUs, team '") {
			t.Fatalf("validations %+v", v)
		}
		for i, r := range []string{RuleMaxGPUs, RuleModel, RuleResource} {
			if !strings.HasPrefix(v[i].Message, "gpuplane GPU policy: "+r+": ") || !strings.Contains(v[i].MessageExpression, r+": ") || v[i].Reason != "Forbidden" {
				t.Errorf("validation %d %+v, want rule %s", i, v[i], r)
			}
		}
	}
}
