// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/api/resource"
)

// Pod is the part of a Kubernetes pod (or pod template) the policy reads.
type Pod struct {
	Name      string
	Namespace string
	Labels    map[string]string
	// Owners are the kinds of the pod's ownerReferences, e.g. PyTorchJob;
	// for a pod template, its owner's kind where it says how its pods are
	// owned (a training job's, a DaemonSet's).
	Owners        []string
	SchedulerName string
	NodeSelector  map[string]string
	// ModelAffinity holds, per required node-affinity expression that
	// names one of ModelLabels with operator In, its values.
	ModelAffinity [][]string
	Tolerations   []Toleration
	// Containers are the init containers, then the containers.
	Containers []Container
	// Claims are the pod's resource claims (spec.resourceClaims), in
	// order.
	Claims []Claim
}

// ClaimsDevices reports whether the pod has a resource claim. Every entry
// of spec.resourceClaims is allocated to the pod, whether or not a
// container names it (the scheduler's DynamicResources plugin allocates
// each before the pod is bound), so a pod with one holds devices on its
// node.
func (p *Pod) ClaimsDevices() bool { return len(p.Claims) > 0 }

// Container is one container's name and extended-resource counts.
type Container struct {
	Name string
	Init bool
	// Sidecar: an init container with restartPolicy Always (a native
	// sidecar), which runs alongside the containers.
	Sidecar bool
	// Resources maps a resource name to its count (limits, or requests
	// where no limit is given); milli-GPU for gpuplane.io/gpu-milli,
	// devices for the others.
	Resources map[string]int64
}

// Toleration is a pod toleration.
type Toleration struct {
	Key      string `json:"key,omitempty" yaml:"key"`
	Operator string `json:"operator,omitempty" yaml:"operator"`
	Value    string `json:"value,omitempty" yaml:"value"`
	Effect   string `json:"effect,omitempty" yaml:"effect"`
}

// Namespace is a namespace's name and labels.
type Namespace struct {
	Name   string
	Labels map[string]string
}

// Violation is one broken rule.
type Violation struct {
	// Rule is one of the Rule* names.
	Rule string `json:"rule"`
	// Container is the container at fault, or "" for the pod.
	Container string `json:"container,omitempty"`
	// Message says what is wrong and what to change.
	Message string `json:"message"`
}

func (v Violation) String() string {
	if v.Container == "" {
		return v.Rule + ": " + v.Message
	}
	return v.Rule + ": container " + v.Container + ": " + v.Message
}

// Rule names.
const (
	RuleTeam          = "team"
	RuleResource      = "allowed-resources"
	RuleModel         = "allowed-models"
	RuleMaxGPUs       = "max-gpus-per-pod"
	RuleTraining      = "training-on-shared"
	RuleTaintSquatter = "gpu-taint-toleration"
)

// TrainingOwners are the owner kinds whose pods are training workloads: the
// Kubeflow training operator's jobs and KubeRay's RayJob. RayCluster pods
// are training workers only when labelled ray.io/node-type=worker.
var TrainingOwners = []string{"PyTorchJob", "MPIJob", "TFJob", "JAXJob", "RayJob"}

// GPUPod reports whether a container of p asks for a GPU resource of any
// vendor (resource.IsAccelerator: NVIDIA's and gpuplane's, amd.com/gpu,
// habana.ai/gaudi), or a claim of p for a GPU or MIG device (ClaimAsks).
func (p *Pod) GPUPod() bool {
	for _, a := range p.ClaimAsks() {
		if a.GPUs() > 0 {
			return true
		}
	}
	for _, c := range p.Containers {
		for r, n := range c.Resources {
			if n > 0 && resource.IsAccelerator(r) {
				return true
			}
		}
	}
	return false
}

// GPUs is the pod's GPU count: a whole GPU, a MIG device, a time-sliced
// replica, an amd.com/gpu (a GPU or a partition of one) or a
// habana.ai/gaudi device counts one, gpuplane.io/gpu-milli counts
// milli/1000 rounded up; 4 amd.com/gpu and 2 nvidia.com/gpu are 6.
// Each container's GPUs of every kind are counted as one resource, whose
// effective request api/resource's PodRequests computes as Kubernetes does
// (k8s.io/component-helpers resource.PodRequests, KEP 753): the larger of
// the containers' sum and the largest init container; a sidecar adds to
// the containers' sum and to every init container after it. The devices
// of the pod's claims (ClaimAsks, each claim once however many containers
// name it) add to that: a claim is allocated to the pod, not to a
// container.
func (p *Pod) GPUs() int64 {
	view := resource.Pod{Containers: make([]resource.Container, len(p.Containers))}
	for i, c := range p.Containers {
		view.Containers[i] = resource.Container{Init: c.Init, Sidecar: c.Sidecar, Requests: map[string]int64{gpuCount: c.gpus()}}
	}
	n := resource.PodRequests(view)[gpuCount]
	for _, a := range p.ClaimAsks() {
		n += a.GPUs()
	}
	return n
}

// gpuCount names, in GPUs' view of the pod, a container's GPUs of every
// kind counted together.
const gpuCount = "gpus"

// gpus is the container's GPU count, as Pod.GPUs counts it.
func (c *Container) gpus() int64 {
	var n int64
	for r, q := range c.Resources {
		switch {
		case q <= 0 || !resource.IsAccelerator(r):
		case strings.TrimSuffix(r, resource.SharedSuffix) == resource.GPUMilli:
			n += (q + resource.MilliPerGPU - 1) / resource.MilliPerGPU
		default:
			n += q
		}
	}
	return n
}

// DaemonSetPod reports whether a DaemonSet owns the pod (an
// ownerReference of kind DaemonSet), or the pod is a DaemonSet's template.
func (p *Pod) DaemonSetPod() bool { return slices.Contains(p.Owners, "DaemonSet") }

// Training reports whether the pod is a training workload.
func (pol *Policy) Training(p *Pod) bool {
	if p.Labels[pol.TrainingLabel] == "true" || p.Labels["ray.io/node-type"] == "worker" {
		return true
	}
	for _, o := range p.Owners {
		if slices.Contains(TrainingOwners, o) {
			return true
		}
	}
	return false
}

// tolerates reports whether t tolerates the policy's GPU taint, by
// Kubernetes' rule (k8s.io/api/core/v1 Toleration.ToleratesTaint): an empty
// key with Exists matches every key, an empty effect every effect.
func (pol *Policy) tolerates(t Toleration) bool {
	g := pol.GPUTaint
	if t.Effect != "" && t.Effect != g.Effect {
		return false
	}
	if t.Key != "" && t.Key != g.Key {
		return false
	}
	switch t.Operator {
	case "Exists":
		return true
	case "", "Equal":
		return t.Key != "" && t.Value == g.Value
	}
	return false
}

func (pol *Policy) toleratesGPU(p *Pod) bool {
	for _, t := range p.Tolerations {
		if pol.tolerates(t) {
			return true
		}
	}
	return false
}

// sharedResource reports whether r is time-sliced or fractional.
func sharedResource(r string) bool {
	return strings.HasSuffix(r, resource.SharedSuffix) || r == resource.GPUMilli
}

func allowed(patterns []string, r string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if p == r || (strings.HasSuffix(p, "*") && strings.HasPrefix(r, strings.TrimSuffix(p, "*"))) {
			return true
		}
	}
	return false
}

// Validate applies the policy to pod p in namespace ns and returns the
// violations, pod-wide ones first, then per container in order, then per
// claim.
//
// Training pods are refused time-sliced (.shared) and fractional
// (gpu-milli, or a claim's milliGPU share) GPUs: NVIDIA's GPU Operator
// documentation, "Time-Slicing GPUs in Kubernetes" (docs.nvidia.com/
// datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html), says
// that unlike MIG "there is no memory or fault-isolation between
// replicas"; a fractional GPU is shared the same way.
//
// A pod in an excluded namespace (ExcludedNamespaces) is not checked. A
// pod a DaemonSet owns, or a DaemonSet's template, may tolerate the GPU
// taint without asking for a GPU: one pod per node, a node's device
// plugin, exporter or log agent, it takes no GPU node's room from GPU
// pods as a Deployment's pods would. Nor is a pod with a resource claim
// (ClaimsDevices) refused for tolerating the taint: it asks for devices
// through DRA, as NVIDIA's DRA driver's examples do with that toleration
// (k8s-dra-driver-gpu demo/specs/quickstart), whether or not its claims
// could be read.
func (pol *Policy) Validate(p *Pod, ns Namespace) []Violation {
	if pol.Excluded(ns.Name) {
		return nil
	}
	var vs []Violation
	if !p.GPUPod() {
		if pol.toleratesGPU(p) && !p.DaemonSetPod() && !p.ClaimsDevices() {
			vs = append(vs, Violation{Rule: RuleTaintSquatter, Message: fmt.Sprintf(
				"the pod asks for no GPU but tolerates the GPU nodes' taint %s:%s and would take room on a GPU node; remove that toleration or ask for a GPU",
				pol.GPUTaint.Key, pol.GPUTaint.Effect)})
		}
		return vs
	}
	team := pol.TeamOf(ns)
	if team == nil {
		return append(vs, Violation{Rule: RuleTeam, Message: fmt.Sprintf(
			"namespace %q belongs to no team of the GPU policy; run GPU pods in a team's namespace or add the namespace to a team", ns.Name)})
	}
	vs = append(vs, modelViolations(team, p)...)
	if n := p.GPUs(); team.MaxGPUsPerPod > 0 && n > team.MaxGPUsPerPod {
		vs = append(vs, Violation{Rule: RuleMaxGPUs, Message: fmt.Sprintf(
			"the pod asks for %d GPUs%s, team %s allows at most %d per pod; ask for fewer or split the work", n, p.countedNote(), team.Name, team.MaxGPUsPerPod)})
	}
	return append(vs, pol.resourceViolations(team, p)...)
}

// ModelLabels are the node labels by which a pod selects a GPU model
// (nodeSelector, or required node affinity with operator In): NVIDIA's
// gpu-feature-discovery's nvidia.com/gpu.product, AMD's node labeller's
// amd.com/gpu.product-name, and gpuplane's catalog model
// gpuplane.io/gpu.model (the one label of a Gaudi node, whose device
// plugin labels none; internal/quota's flavors select by it too).
var ModelLabels = []string{resource.LabelGPUProduct, resource.LabelAMDProductName, resource.LabelGPUModel}

// modelKey is the name under which allowed-models compares a model: AMD's
// node labeller's product name less resource.AMDInstinctPrefix, so that
// AMD_Instinct_MI300X and gpuplane's catalog name MI300X are one model;
// any other name as it is.
func modelKey(m string) string { return strings.TrimPrefix(m, resource.AMDInstinctPrefix) }

// modelAllowed reports whether model m is one of allowed (modelKey).
func modelAllowed(allowed []string, m string) bool {
	return slices.ContainsFunc(allowed, func(a string) bool { return modelKey(a) == modelKey(m) })
}

// modelViolations are the allowed-models rule's: the models the pod
// selects by nodeSelector and required node affinity on ModelLabels, and
// its claims' productName selectors.
func modelViolations(team *Team, p *Pod) []Violation {
	if len(team.AllowedModels) == 0 {
		return nil
	}
	var vs []Violation
	var picked []string
	for _, k := range ModelLabels {
		if m, ok := p.NodeSelector[k]; ok {
			picked = append(picked, m)
		}
	}
	for _, vals := range p.ModelAffinity {
		picked = append(picked, vals...)
	}
	for _, a := range p.ClaimAsks() {
		for _, m := range a.Products {
			picked = append(picked, productLabel(m))
		}
	}
	want := strings.Join(team.AllowedModels, ", ")
	if len(picked) == 0 {
		vs = append(vs, Violation{Rule: RuleModel, Message: fmt.Sprintf(
			"team %s may use only GPU models %s; add nodeSelector %s: <one of them>", team.Name, want, resource.LabelGPUProduct)})
	}
	for _, m := range picked {
		if !modelAllowed(team.AllowedModels, m) {
			vs = append(vs, Violation{Rule: RuleModel, Message: fmt.Sprintf(
				"GPU model %q is not allowed for team %s; select one of %s with %s", m, team.Name, want, resource.LabelGPUProduct)})
		}
	}
	return vs
}

// productLabel is the node label value (resource.LabelGPUProduct) of a
// DRA productName attribute: NVIDIA's GPU feature discovery writes the
// product name with its spaces as hyphens ("NVIDIA H100 80GB HBM3" is
// NVIDIA-H100-80GB-HBM3).
func productLabel(product string) string { return strings.ReplaceAll(product, " ", "-") }

// resourceViolations are the allowed-resources and training-on-shared
// rules', per container, then per claim request.
func (pol *Policy) resourceViolations(team *Team, p *Pod) []Violation {
	var vs []Violation
	training := pol.Training(p) && !team.AllowTrainingOnShared
	check := func(container, where, r string) {
		if !allowed(team.AllowedResources, r) {
			vs = append(vs, Violation{Rule: RuleResource, Container: container, Message: fmt.Sprintf(
				"%sresource %s is not allowed for team %s; use one of %s", where, r, team.Name, strings.Join(team.AllowedResources, ", "))})
		}
		if training && sharedResource(r) {
			vs = append(vs, Violation{Rule: RuleTraining, Container: container, Message: fmt.Sprintf(
				"%straining pods may not use time-sliced or fractional GPUs (%s): no memory or fault isolation; ask for %s or a MIG profile", where, r, resource.GPU)})
		}
	}
	for _, c := range p.Containers {
		names := make([]string, 0, len(c.Resources))
		for r, q := range c.Resources {
			if q > 0 && resource.IsAccelerator(r) {
				names = append(names, r)
			}
		}
		sort.Strings(names)
		for _, r := range names {
			check(c.Name, "", r)
		}
	}
	for _, a := range p.ClaimAsks() {
		if a.GPUs() > 0 {
			check("", fmt.Sprintf("claim %s request %s: ", a.Claim, a.Request), a.Resource())
		}
	}
	return vs
}

// PatchOp is one RFC 6902 JSON Patch operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Mutate returns the JSON Patch that gives GPU pod p of namespace ns the
// GPU taint's toleration, the team's schedulerName and the team label; a
// pod that asks for no GPU, or whose namespace has no team or is excluded
// (ExcludedNamespaces), gets nothing.
// Paths are relative to the pod object (/metadata, /spec).
func (pol *Policy) Mutate(p *Pod, ns Namespace) []PatchOp {
	if !p.GPUPod() || pol.Excluded(ns.Name) {
		return nil
	}
	team := pol.TeamOf(ns)
	if team == nil {
		return nil
	}
	var ops []PatchOp
	if !pol.toleratesGPU(p) {
		t := Toleration{Key: pol.GPUTaint.Key, Operator: "Exists", Effect: pol.GPUTaint.Effect}
		if len(p.Tolerations) == 0 {
			ops = append(ops, PatchOp{Op: "add", Path: "/spec/tolerations", Value: []Toleration{t}})
		} else {
			ops = append(ops, PatchOp{Op: "add", Path: "/spec/tolerations/-", Value: t})
		}
	}
	if team.SchedulerName != "" && p.SchedulerName != team.SchedulerName {
		op := "add"
		if p.SchedulerName != "" {
			op = "replace"
		}
		ops = append(ops, PatchOp{Op: op, Path: "/spec/schedulerName", Value: team.SchedulerName})
	}
	if got, ok := p.Labels[pol.TeamLabel]; !ok || got != team.Name {
		switch {
		case p.Labels == nil:
			ops = append(ops, PatchOp{Op: "add", Path: "/metadata/labels", Value: map[string]string{pol.TeamLabel: team.Name}})
		case ok:
			ops = append(ops, PatchOp{Op: "replace", Path: "/metadata/labels/" + escape(pol.TeamLabel), Value: team.Name})
		default:
			ops = append(ops, PatchOp{Op: "add", Path: "/metadata/labels/" + escape(pol.TeamLabel), Value: team.Name})
		}
	}
	return ops
}

// escape escapes a JSON Pointer token (RFC 6901: ~ as ~0, / as ~1).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
