// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package policy holds gpuplane's GPU admission policy: the versioned policy
// file (apiVersion gpuplane.io/v1alpha1, kind GPUPolicy), and the pure
// functions that mutate and validate a pod against it. It imports no
// Kubernetes package: pods are read into the small Pod model of this package,
// by the webhook from corev1 objects and by the offline `gpuplane policy
// check` from YAML files, so both apply one and the same rules.
package policy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/kubename"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// APIVersion and Kind of the policy file.
const (
	APIVersion = "gpuplane.io/v1alpha1"
	Kind       = "GPUPolicy"
)

// Defaults of the policy file.
const (
	// DefaultTeamLabel is the pod label the mutation sets to the team name.
	DefaultTeamLabel = resource.LabelTeam
	// DefaultTrainingLabel marks a pod as a training workload when its
	// value is "true", for training pods no known operator owns.
	DefaultTrainingLabel = resource.LabelTraining
)

// Policy is the parsed policy file.
type Policy struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	// GPUTaint is the taint of the GPU nodes; default nvidia.com/gpu with
	// effect NoSchedule (the taint GPU node pools of GKE and AKS carry).
	GPUTaint Taint `yaml:"gpuTaint"`
	// TeamLabel is the pod label set to the team's name; default
	// gpuplane.io/team.
	TeamLabel string `yaml:"teamLabel"`
	// TrainingLabel marks a training pod (value "true"); default
	// gpuplane.io/training.
	TrainingLabel string `yaml:"trainingLabel"`
	// ExcludeNamespaces are namespaces the policy does not check, besides
	// kube-system, which is never checked (see Excluded): the webhook's
	// namespaceSelector, the admission policies' bindings and gpuplane
	// policy check all leave out ExcludedNamespaces. The chart adds its
	// release namespace.
	ExcludeNamespaces []string `yaml:"excludeNamespaces"`
	// Teams in order; a namespace belongs to the first team that matches.
	Teams []Team `yaml:"teams"`
}

// AlwaysExcluded is the namespace no policy checks: the cluster's own
// (kube-proxy, CNI, CSI and cloud node agents run there).
const AlwaysExcluded = "kube-system"

// ExcludedNamespaces returns the namespaces the policy does not check:
// kube-system, then ExcludeNamespaces, then more (a flag's, the chart's
// release namespace), each once in that order. It is the one list of
// exemptions: gpuplane policy vap writes it into its bindings, the chart
// into the webhook configurations' namespaceSelector and the bindings,
// and Validate and Mutate pass over a pod in one of them.
func (p *Policy) ExcludedNamespaces(more ...string) []string {
	out := []string{AlwaysExcluded}
	for _, ns := range append(slices.Clone(p.ExcludeNamespaces), more...) {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// Excluded reports whether namespace ns is not checked (ExcludedNamespaces).
func (p *Policy) Excluded(ns string) bool {
	return ns == AlwaysExcluded || slices.Contains(p.ExcludeNamespaces, ns)
}

// Taint is a node taint.
type Taint struct {
	Key    string `yaml:"key"`
	Value  string `yaml:"value"`
	Effect string `yaml:"effect"`
}

// Team is one team's rules.
type Team struct {
	Name string `yaml:"name"`
	// Namespaces lists the team's namespaces by name.
	Namespaces []string `yaml:"namespaces"`
	// NamespaceSelector matches namespaces by label (matchLabels).
	NamespaceSelector *Selector `yaml:"namespaceSelector"`
	// AllowedResources lists the GPU resources the team's pods may ask
	// for, exactly (nvidia.com/gpu, amd.com/gpu, habana.ai/gaudi) or by a
	// prefix ending in * (nvidia.com/mig-*); empty allows every GPU
	// resource of every vendor (resource.IsAccelerator).
	AllowedResources []string `yaml:"allowedResources"`
	// AllowedModels lists the models a pod may select, as the values of
	// the node labels ModelLabels (nvidia.com/gpu.product,
	// amd.com/gpu.product-name, gpuplane.io/gpu.model); an AMD model as
	// its labeller's product name (AMD_Instinct_MI300X) or gpuplane's
	// catalog name (MI300X), the two being one (modelKey). When set, a
	// GPU pod must select one of them by nodeSelector or required node
	// affinity.
	AllowedModels []string `yaml:"allowedModels"`
	// MaxGPUsPerPod caps the GPUs of one pod (see GPUs); 0 is no cap.
	MaxGPUsPerPod int64 `yaml:"maxGPUsPerPod"`
	// SchedulerName, when set, is written into every GPU pod of the team.
	SchedulerName string `yaml:"schedulerName"`
	// AllowTrainingOnShared lets training pods use time-sliced and
	// fractional GPUs; default false.
	AllowTrainingOnShared bool `yaml:"allowTrainingOnShared"`
}

// Selector is a label selector with matchLabels only.
type Selector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

// Parse reads a policy file; file names it in errors. An unknown key, a
// wrong apiVersion or kind, or a bad value is an error naming file, line
// and field (internal/yamlx).
func Parse(file string, data []byte) (*Policy, error) {
	doc, err := yamlx.Parse(file, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("%s: empty policy file", file)
	}
	var p Policy
	if err := yamlx.Decode(file, doc, &p); err != nil {
		return nil, err
	}
	bad := func(n *yaml.Node, field, format string, a ...any) error {
		line := doc.Line
		if n != nil {
			line = n.Line
		}
		return fmt.Errorf("%s:%d: %s: %s", file, line, field, fmt.Sprintf(format, a...))
	}
	if err := p.checkTop(doc, bad); err != nil {
		return nil, err
	}
	if err := p.checkTeams(doc, bad); err != nil {
		return nil, err
	}
	return &p, nil
}

// badField makes the error of a field, at node n's line (nil: the
// document's).
type badField func(n *yaml.Node, field, format string, a ...any) error

// checkTop checks the fields above the teams, and fills in the defaults:
// the taint's key and effect, the team and training labels.
func (p *Policy) checkTop(doc *yaml.Node, bad badField) error {
	if p.APIVersion != APIVersion {
		return bad(yamlx.Lookup(doc, "apiVersion"), "apiVersion", "is %q, want %s", p.APIVersion, APIVersion)
	}
	if p.Kind != Kind {
		return bad(yamlx.Lookup(doc, "kind"), "kind", "is %q, want %s", p.Kind, Kind)
	}
	if p.GPUTaint.Key == "" {
		p.GPUTaint.Key = resource.GPU
	}
	if p.GPUTaint.Effect == "" {
		p.GPUTaint.Effect = "NoSchedule"
	}
	switch p.GPUTaint.Effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return bad(yamlx.Lookup(doc, "gpuTaint"), "gpuTaint.effect", "is %q, want NoSchedule, PreferNoSchedule or NoExecute", p.GPUTaint.Effect)
	}
	if p.TeamLabel == "" {
		p.TeamLabel = DefaultTeamLabel
	}
	if p.TrainingLabel == "" {
		p.TrainingLabel = DefaultTrainingLabel
	}
	for _, f := range []struct{ name, v string }{{"gpuTaint.key", p.GPUTaint.Key}, {"teamLabel", p.TeamLabel}, {"trainingLabel", p.TrainingLabel}} {
		if !kubename.IsLabelKey(f.v) {
			return bad(yamlx.Lookup(doc, strings.Split(f.name, ".")[0]), f.name, "%q is not a label key", f.v)
		}
	}
	for i, ns := range p.ExcludeNamespaces {
		if !kubename.IsDNS1123Label(ns) {
			return bad(yamlx.Lookup(doc, "excludeNamespaces"), fmt.Sprintf("excludeNamespaces[%d]", i), "%q is not a namespace name (RFC 1123 label)", ns)
		}
	}
	return nil
}

// checkTeams checks each team: a name given once, namespaces or a
// selector, each namespace in one team only, a cap of 0 or more, GPU
// resources only.
func (p *Policy) checkTeams(doc *yaml.Node, bad badField) error {
	if len(p.Teams) == 0 {
		return bad(yamlx.Lookup(doc, "teams"), "teams", "no team")
	}
	teams := yamlx.Lookup(doc, "teams")
	seen, nsTeam := map[string]bool{}, map[string]string{}
	for i := range p.Teams {
		t := &p.Teams[i]
		var n *yaml.Node
		if teams != nil && i < len(teams.Content) {
			n = teams.Content[i]
		}
		field := fmt.Sprintf("teams[%d]", i)
		switch {
		case t.Name == "":
			return bad(n, field+".name", "missing")
		case seen[t.Name]:
			return bad(yamlx.Lookup(n, "name"), field+".name", "team %q given twice", t.Name)
		case len(t.Namespaces) == 0 && (t.NamespaceSelector == nil || len(t.NamespaceSelector.MatchLabels) == 0):
			return bad(n, field, "team %q has neither namespaces nor namespaceSelector.matchLabels", t.Name)
		case t.MaxGPUsPerPod < 0:
			return bad(yamlx.Lookup(n, "maxGPUsPerPod"), field+".maxGPUsPerPod", "is %d, want 0 (no cap) or more", t.MaxGPUsPerPod)
		}
		seen[t.Name] = true
		for _, ns := range t.Namespaces {
			// The first team would win; a second listing is a mistake.
			if other, dup := nsTeam[ns]; dup {
				return bad(yamlx.Lookup(n, "namespaces"), field+".namespaces", "namespace %q already belongs to team %q", ns, other)
			}
			nsTeam[ns] = t.Name
		}
		for _, r := range t.AllowedResources {
			name := strings.TrimSuffix(r, "*")
			if !(strings.HasSuffix(r, "*") && hasVendorPrefix(name)) && !resource.IsAccelerator(name) {
				return bad(yamlx.Lookup(n, "allowedResources"), field+".allowedResources", "%q is not a GPU resource (nvidia.com/gpu, nvidia.com/mig-<profile>, either with .shared, %s, %s, %s, or a prefix ending in *)", r, resource.GPUMilli, resource.AMDGPU, resource.Gaudi)
			}
		}
	}
	return nil
}

// hasVendorPrefix reports whether resource name (or prefix) r begins with
// the resource prefix of a vendor gpuplane knows: nvidia.com/,
// gpuplane.io/, amd.com/ or habana.ai/.
func hasVendorPrefix(r string) bool {
	for _, p := range []string{resource.NVIDIAPrefix, resource.GPUPlanePrefix, resource.AMDPrefix, gaudiPrefix} {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return false
}

// gaudiPrefix is the prefix of Intel's Gaudi device plugin's resource.
const gaudiPrefix = "habana.ai/"

// TeamOf returns the team of namespace ns, or nil when no team matches.
func (p *Policy) TeamOf(ns Namespace) *Team {
	for i := range p.Teams {
		t := &p.Teams[i]
		for _, n := range t.Namespaces {
			if n == ns.Name {
				return t
			}
		}
		if t.NamespaceSelector != nil && len(t.NamespaceSelector.MatchLabels) > 0 {
			ok := true
			for k, v := range t.NamespaceSelector.MatchLabels {
				if got, has := ns.Labels[k]; !has || got != v {
					ok = false
					break
				}
			}
			if ok {
				return t
			}
		}
	}
	return nil
}
