// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/api/resource"
)

// The policy's rules that CEL can say are also written as one
// ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1), evaluated in
// the API server, so they hold when gpuplane-webhook is down (its
// failurePolicy is Ignore). The policy file enters it only as data: the
// variables DataVariables names, CEL literals (JSON) of the teams' fields in
// team order. The CEL itself (LogicVariables, Validations) is the same for
// every policy file; the chart ships it as files/gpu-policy-cel.yaml
// (AdmissionPolicyLogic) and writes the data variables from
// webhook.policy, so the chart and `gpuplane policy vap` give one and the
// same policy (deploy/helm checks it).
//
// What CEL cannot do stays the webhook's: the mutation (toleration,
// schedulerName, team label; a ValidatingAdmissionPolicy cannot change the
// object) and the early check of workload pod templates (the pods they
// create are checked). Nor can CEL count the GPUs of a pod's resource
// claims: an admission policy reads the object, its namespace and its
// paramRef's object only, never the ResourceClaims and
// ResourceClaimTemplates a pod names. So the policy sees of a claim only
// that the pod has one (claimPod): such a pod is no taint squatter, and
// it needs no model selector; its claimed GPUs are the webhook's to count.
// With failurePolicy Fail, the policy never refuses a pod for what its
// claims ask; the claim policy (claimvap.go) checks each claim when it is
// written. docs/webhook.md has the table.

// RuleTeamLabel is the rule only the admission policy checks: a GPU pod
// labelled with another team's name. The webhook sets the label instead.
const RuleTeamLabel = "team-label"

// Variable is a ValidatingAdmissionPolicy variable.
type Variable struct {
	Name       string `yaml:"name" json:"name"`
	Expression string `yaml:"expression" json:"expression"`
}

// Validation is a ValidatingAdmissionPolicy validation.
type Validation struct {
	Expression        string `yaml:"expression" json:"expression"`
	Message           string `yaml:"message" json:"message"`
	MessageExpression string `yaml:"messageExpression" json:"messageExpression"`
	Reason            string `yaml:"reason" json:"reason"`
}

// gpuPattern and notGPU are resource.IsAccelerator in CEL: a name is a
// GPU resource when it matches gpuPattern (RE2, as CEL's matches) and is
// not notGPU (the MIG prefix and .shared, no profile).
const (
	gpuPattern = `^((nvidia\.com/gpu|gpuplane\.io/gpu-milli|nvidia\.com/mig-.+)(\.shared)?|amd\.com/gpu|habana\.ai/gaudi)$`
	notGPU     = resource.MIGPrefix + resource.SharedSuffix
)

// isGPU is resource.IsAccelerator in CEL, of resource name r.
func isGPU(r string) string {
	return fmt.Sprintf(`(%[1]s.matches('%[2]s') && %[1]s != '%[3]s')`, r, strings.ReplaceAll(gpuPattern, `\`, `\\`), notGPU)
}

// celGPUCount is Container.gpus' count of one resource r with count n.
func celGPUCount(r, n string) string {
	return fmt.Sprintf(`(%[1]s.startsWith('%[3]s') ? (%[2]s + %[4]d) / %[5]d : %[2]s)`, r, n, resource.GPUMilli, resource.MilliPerGPU-1, resource.MilliPerGPU)
}

// celModelKey is modelKey in CEL, of model name m.
func celModelKey(m string) string {
	p := resource.AMDInstinctPrefix
	return fmt.Sprintf(`(%[1]s.startsWith('%[2]s') ? %[1]s.substring(%[3]d) : %[1]s)`, m, p, len(p))
}

func celList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = "'" + v + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// LogicVariables are the admission policy's variables after the data
// variables; they may name those and each other in order.
func LogicVariables() []Variable {
	quantity := func(q string) string { return "quantity(string(" + q + ")).asInteger()" }
	return append(teamVariables(), []Variable{
		{"labels", `object.metadata.?labels.orValue({})`},
		{"refuses", `'gpuplane GPU policy refuses pod ' + request.namespace + '/' + object.metadata.?name.orValue(object.metadata.?generateName.orValue('')) + ': '`},
		// Init containers, then containers, as Pod.Containers. The
		// mutating policy runs before the API server validates the pod,
		// so a pod without containers is no CEL error there.
		{"containers", `object.spec.?initContainers.orValue([]) + object.spec.?containers.orValue([])`},
		{"initCount", `size(object.spec.?initContainers.orValue([]))`},
		// Per container: its GPU resources' counts, from limits, or from
		// requests where no limit is given.
		{"gpuLimits", `variables.containers.map(c, c.?resources.?limits.orValue({}).transformMapEntry(r, q, ` + isGPU("r") + `, {r: ` + quantity("q") + `}))`},
		{"gpuRequests", `variables.containers.transformList(i, c, c.?resources.?requests.orValue({}).transformMapEntry(r, q, ` + isGPU("r") + ` && !(r in variables.gpuLimits[i]), {r: ` + quantity("q") + `}))`},
		// Per container: the GPU resources it asks for (count > 0), sorted.
		{"gpuNames", `variables.containers.transformList(i, c, (variables.gpuLimits[i].filter(r, variables.gpuLimits[i][r] > 0) + variables.gpuRequests[i].filter(r, variables.gpuRequests[i][r] > 0)).sort())`},
		{"gpuPod", `variables.gpuNames.exists(n, size(n) > 0)`},
		// Pod.ClaimsDevices: any entry of spec.resourceClaims. The
		// policy cannot read the claims and templates they name (a
		// ValidatingAdmissionPolicy reads no other object but its
		// paramRef's), so it cannot tell their devices.
		{"claimPod", `size(object.spec.?resourceClaims.orValue([])) > 0`},
		// Per container: its GPU count (Container.gpus).
		{"gpuCounts", `variables.containers.transformList(i, c, variables.gpuLimits[i].transformList(r, n, n > 0, ` + celGPUCount("r", "n") + `).sum() + variables.gpuRequests[i].transformList(r, n, n > 0, ` + celGPUCount("r", "n") + `).sum())`},
		{"sidecar", `variables.containers.transformList(i, c, i < variables.initCount && c.?restartPolicy.orValue('') == 'Always')`},
		// Pod.GPUs: the larger of the containers' and sidecars' sum and
		// each init container's count plus the sidecars before it.
		{"gpus", `(variables.gpuCounts.transformList(i, n, i < variables.initCount, n + variables.gpuCounts.transformList(j, m, j < i && variables.sidecar[j], m).sum()) + [variables.gpuCounts.transformList(i, n, i >= variables.initCount || variables.sidecar[i], n).sum()]).max()`},
		{"models", `variables.teamAllowedModels[variables.teamIndex]`},
		// The models the pod selects: nodeSelector, then required node
		// affinity's In terms, on ModelLabels.
		{"picked", `object.spec.?nodeSelector.orValue({}).filter(k, k in ` + celList(ModelLabels) + `).map(k, object.spec.nodeSelector[k]) + object.spec.?affinity.?nodeAffinity.?requiredDuringSchedulingIgnoredDuringExecution.?nodeSelectorTerms.orValue([]).map(t, t.?matchExpressions.orValue([]).filter(e, e.key in ` + celList(ModelLabels) + ` && e.operator == 'In').map(e, e.?values.orValue([])).flatten()).flatten()`},
		// The models the pod selects that the team may not use
		// (modelAllowed: compared by modelKey).
		{"badModels", `variables.picked.filter(m, !variables.models.exists(a, ` + celModelKey("a") + ` == ` + celModelKey("m") + `))`},
		{"allowedResources", `variables.teamAllowedResources[variables.teamIndex]`},
		{"badResources", `variables.containers.transformList(i, c, variables.gpuNames[i].filter(r, !variables.allowedResources.exists(p, p == r || (p.endsWith('*') && r.startsWith(p.substring(0, size(p) - 1))))).map(r, 'container ' + c.name + ': resource ' + r)).flatten()`},
		{"training", `variables.labels[?variables.trainingLabel].orValue('') == 'true' || variables.labels[?'ray.io/node-type'].orValue('') == 'worker' || object.metadata.?ownerReferences.orValue([]).exists(o, o.kind in ` + celList(TrainingOwners) + `)`},
		// Policy.toleratesGPU.
		{"toleratesGPU", `object.spec.?tolerations.orValue([]).exists(t, (t.?effect.orValue('') == '' || t.effect == variables.taintEffect) && (t.?key.orValue('') == '' || t.key == variables.taintKey) && (t.?operator.orValue('') == 'Exists' || (t.?operator.orValue('') in ['', 'Equal'] && t.?key.orValue('') != '' && t.?value.orValue('') == variables.taintValue)))`},
		{"schedulerName", `variables.teamSchedulerNames[variables.teamIndex]`},
		{"sharedUse", `variables.containers.transformList(i, c, variables.gpuNames[i].filter(r, r.endsWith('` + resource.SharedSuffix + `') || r == '` + resource.GPUMilli + `').map(r, 'container ' + c.name + ': training pods may not use time-sliced or fractional GPUs (' + r + '): no memory or fault isolation; ask for ` + resource.GPU + ` or a MIG profile')).flatten()`},
	}...)
}

// teamVariables are the variables, after the data variables, that find
// the team of the request's namespace (Policy.TeamOf): the pod policy's
// and the claim policy's.
func teamVariables() []Variable {
	return []Variable{
		{"nsLabels", `namespaceObject.metadata.?labels.orValue({})`},
		// Indexes of the teams the namespace matches; the first one wins
		// (Policy.TeamOf).
		{"teamMatches", `variables.teamNames.transformList(i, n, request.namespace in variables.teamNamespaces[i] || (size(variables.teamSelectors[i]) > 0 && variables.teamSelectors[i].all(k, k in variables.nsLabels && variables.nsLabels[k] == variables.teamSelectors[i][k])), i)`},
		{"team", `size(variables.teamMatches) > 0 ? variables.teamNames[variables.teamMatches[0]] : ''`},
		// The team's index, 0 when none (then no rule reads it).
		{"teamIndex", `size(variables.teamMatches) > 0 ? variables.teamMatches[0] : 0`},
	}
}

// Validations are the admission policy's rules, with the webhook's
// messages (Validate), each naming its rule.
func Validations() []Validation {
	team := `!variables.gpuPod || variables.team == '' || `
	return []Validation{
		{
			Expression:        `!variables.gpuPod || variables.team != ''`,
			Message:           "gpuplane GPU policy: team: a GPU pod in a namespace of no team",
			MessageExpression: `variables.refuses + 'team: namespace "' + request.namespace + '" belongs to no team of the GPU policy; run GPU pods in a team\'s namespace or add the namespace to a team'`,
			Reason:            "Forbidden",
		},
		{
			Expression:        team + `size(variables.models) == 0 || size(variables.picked) > 0 || variables.claimPod`,
			Message:           "gpuplane GPU policy: allowed-models: the pod selects no GPU model",
			MessageExpression: `variables.refuses + 'allowed-models: team ' + variables.team + ' may use only GPU models ' + variables.models.join(', ') + '; add nodeSelector ` + resource.LabelGPUProduct + `: <one of them>'`,
			Reason:            "Forbidden",
		},
		{
			Expression:        team + `size(variables.models) == 0 || size(variables.badModels) == 0`,
			Message:           "gpuplane GPU policy: allowed-models: a GPU model the team may not use",
			MessageExpression: `variables.refuses + variables.badModels.map(m, 'allowed-models: GPU model "' + m + '" is not allowed for team ' + variables.team + '; select one of ' + variables.models.join(', ') + ' with ` + resource.LabelGPUProduct + `').join('; ')`,
			Reason:            "Forbidden",
		},
		{
			Expression:        team + `variables.teamMaxGPUs[variables.teamIndex] == 0 || variables.gpus <= variables.teamMaxGPUs[variables.teamIndex]`,
			Message:           "gpuplane GPU policy: max-gpus-per-pod: more GPUs than the team allows per pod",
			MessageExpression: `variables.refuses + 'max-gpus-per-pod: the pod asks for ' + string(variables.gpus) + ' GPUs, team ' + variables.team + ' allows at most ' + string(variables.teamMaxGPUs[variables.teamIndex]) + ' per pod; ask for fewer or split the work'`,
			Reason:            "Forbidden",
		},
		{
			Expression:        team + `size(variables.allowedResources) == 0 || size(variables.badResources) == 0`,
			Message:           "gpuplane GPU policy: allowed-resources: a GPU resource the team may not use",
			MessageExpression: `variables.refuses + variables.badResources.map(b, 'allowed-resources: ' + b + ' is not allowed for team ' + variables.team + '; use one of ' + variables.allowedResources.join(', ')).join('; ')`,
			Reason:            "Forbidden",
		},
		{
			Expression:        team + `variables.teamTrainingOnShared[variables.teamIndex] || !variables.training || size(variables.sharedUse) == 0`,
			Message:           "gpuplane GPU policy: training-on-shared: a training pod on time-sliced or fractional GPUs",
			MessageExpression: `variables.refuses + variables.sharedUse.map(s, 'training-on-shared: ' + s).join('; ')`,
			Reason:            "Forbidden",
		},
		{
			Expression:        `variables.gpuPod || variables.claimPod || !variables.toleratesGPU || object.metadata.?ownerReferences.orValue([]).exists(o, o.kind == 'DaemonSet')`,
			Message:           "gpuplane GPU policy: gpu-taint-toleration: a pod that asks for no GPU tolerates the GPU taint",
			MessageExpression: `variables.refuses + "gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint " + variables.taintKey + ':' + variables.taintEffect + ' and would take room on a GPU node; remove that toleration or ask for a GPU'`,
			Reason:            "Forbidden",
		},
		{
			Expression:        team + `!(variables.teamLabel in variables.labels) || variables.labels[variables.teamLabel] == variables.team`,
			Message:           "gpuplane GPU policy: team-label: a GPU pod labelled with another team",
			MessageExpression: `variables.refuses + 'team-label: the pod is labelled ' + variables.teamLabel + '=' + variables.labels[variables.teamLabel] + ', but namespace ' + request.namespace + ' belongs to team ' + variables.team + '; set it to ' + variables.team + ' or leave it out (gpuplane-webhook sets it)'`,
			Reason:            "Forbidden",
		},
	}
}

// Mutation is a MutatingAdmissionPolicy mutation, a JSON Patch.
type Mutation struct {
	PatchType string `yaml:"patchType" json:"patchType"`
	JSONPatch struct {
		Expression string `yaml:"expression" json:"expression"`
	} `yaml:"jsonPatch" json:"jsonPatch"`
}

// MarshalYAML writes the expression in literal style.
func (m Mutation) MarshalYAML() (any, error) {
	n := mapping("patchType", m.PatchType)
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "jsonPatch"}, mapping("expression", m.JSONPatch.Expression))
	return n, nil
}

// Mutations are Policy.Mutate in CEL, for a MutatingAdmissionPolicy: a GPU
// pod of a team gets the GPU taint's toleration unless one it has
// tolerates it, the team's schedulerName, and the team label. Each is a
// JSON Patch, empty when there is nothing to do, so the webhook and the
// policy may both mutate a pod.
func Mutations() []Mutation {
	of := func(e string) Mutation {
		m := Mutation{PatchType: "JSONPatch"}
		m.JSONPatch.Expression = `!variables.gpuPod || variables.team == '' ? [] : ` + e
		return m
	}
	return []Mutation{
		of(`variables.toleratesGPU ? [] : size(object.spec.?tolerations.orValue([])) == 0 ? [JSONPatch{op: 'add', path: '/spec/tolerations', value: [{'key': variables.taintKey, 'operator': 'Exists', 'effect': variables.taintEffect}]}] : [JSONPatch{op: 'add', path: '/spec/tolerations/-', value: {'key': variables.taintKey, 'operator': 'Exists', 'effect': variables.taintEffect}}]`),
		of(`variables.schedulerName == '' || object.spec.?schedulerName.orValue('') == variables.schedulerName ? [] : [JSONPatch{op: 'add', path: '/spec/schedulerName', value: variables.schedulerName}]`),
		of(`variables.labels[?variables.teamLabel].orValue('') == variables.team ? [] : size(variables.labels) == 0 ? [JSONPatch{op: 'add', path: '/metadata/labels', value: {variables.teamLabel: variables.team}}] : [JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey(variables.teamLabel), value: variables.team}]`),
	}
}

// DataVariables names the variables that carry the policy file, in order:
// per team in team order (lists), then the labels and the GPU taint.
var DataVariables = []string{"teamNames", "teamNamespaces", "teamSelectors", "teamAllowedResources", "teamAllowedModels", "teamMaxGPUs", "teamTrainingOnShared", "teamSchedulerNames", "teamLabel", "trainingLabel", "taintKey", "taintValue", "taintEffect"}

// Data returns the data variables of policy p: each a CEL literal, as
// JSON (which CEL reads: strings, lists, maps, ints and bools).
func (p *Policy) Data() ([]Variable, error) {
	n := len(p.Teams)
	names, nss, sels := make([]string, n), make([][]string, n), make([]map[string]string, n)
	res, models := make([][]string, n), make([][]string, n)
	maxGPUs, shared, sched := make([]int64, n), make([]bool, n), make([]string, n)
	for i, t := range p.Teams {
		names[i], maxGPUs[i], shared[i], sched[i] = t.Name, t.MaxGPUsPerPod, t.AllowTrainingOnShared, t.SchedulerName
		nss[i], res[i], models[i] = nonNil(t.Namespaces), nonNil(t.AllowedResources), nonNil(t.AllowedModels)
		sels[i] = map[string]string{}
		if t.NamespaceSelector != nil && t.NamespaceSelector.MatchLabels != nil {
			sels[i] = t.NamespaceSelector.MatchLabels
		}
	}
	vals := []any{names, nss, sels, res, models, maxGPUs, shared, sched, p.TeamLabel, p.TrainingLabel, p.GPUTaint.Key, p.GPUTaint.Value, p.GPUTaint.Effect}
	vars := make([]Variable, len(vals))
	for i, v := range vals {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		vars[i] = Variable{Name: DataVariables[i], Expression: string(b)}
	}
	return vars, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// AdmissionPolicyLogicHeader heads AdmissionPolicyLogic.
const AdmissionPolicyLogicHeader = `# The CEL of gpuplane's GPU policy as a ValidatingAdmissionPolicy
# (docs/webhook.md, "In the API server"): the variables after the policy's
# data variables, and the validations. Generated from
# internal/webhook/policy (AdmissionPolicyLogic); do not edit: after a
# change there, UPDATE=1 go test ./deploy/helm/ -run TestAdmissionPolicyLogicCopy.
# A ValidatingAdmissionPolicy reads no object but the pod, its namespace
# and its paramRef's: it cannot count the GPUs of the pod's resource claims
# (ResourceClaims, ResourceClaimTemplates), which the webhook counts. It
# only sees that a pod has a claim (claimPod), and never refuses a pod for
# what its claims ask. The claim policy (claimVariables, claimValidations)
# checks each ResourceClaimTemplate and ResourceClaim as it is written
# instead: one claim of more GPUs than the team allows a pod, or of a model
# or resource the team may not use, is refused; several claims of one pod
# that exceed the limit together are the webhook's to refuse
# (docs/webhook.md, "DRA claims").
`

// AdmissionPolicyLogic is the YAML of LogicVariables, Validations,
// Mutations, ClaimVariables and ClaimValidations, as the chart ships it (files/gpu-policy-cel.yaml).
func AdmissionPolicyLogic() ([]byte, error) {
	return marshal(AdmissionPolicyLogicHeader, struct {
		Variables   []Variable   `yaml:"variables"`
		Validations []Validation `yaml:"validations"`
		Mutations   []Mutation   `yaml:"mutations"`
		// The claim policy's (ClaimVariables, ClaimValidations).
		ClaimVariables   []Variable   `yaml:"claimVariables"`
		ClaimValidations []Validation `yaml:"claimValidations"`
	}{LogicVariables(), Validations(), Mutations(), ClaimVariables(), ClaimValidations()})
}

// AdmissionPolicyOptions name and scope the admission policy.
type AdmissionPolicyOptions struct {
	// Name of the policy and its binding; default gpuplane-gpu-policy.
	Name string
	// ExcludeNamespaces are not checked, besides the policy's
	// ExcludedNamespaces (kube-system and its excludeNamespaces): e.g.
	// gpuplane's own namespace, as the chart's webhook configurations
	// exclude it.
	ExcludeNamespaces []string
	// ValidationActions of the binding; default [Deny].
	ValidationActions []string
	// Mutating adds a MutatingAdmissionPolicy of the same name and its
	// binding (admissionregistration.k8s.io/v1, Kubernetes 1.36 or later)
	// that mutate as the webhook does (Mutations).
	Mutating bool
}

// The admission policy's objects, as plain structs (the offline tool links
// no Kubernetes package).
type (
	objectMeta struct {
		Name string `yaml:"name"`
	}
	vap struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
		Spec       vapSpec    `yaml:"spec"`
	}
	vapSpec struct {
		FailurePolicy      string `yaml:"failurePolicy"`
		ReinvocationPolicy string `yaml:"reinvocationPolicy,omitempty"`
		MatchConstraints   struct {
			ResourceRules []resourceRule `yaml:"resourceRules"`
		} `yaml:"matchConstraints"`
		Variables   []Variable   `yaml:"variables"`
		Validations []Validation `yaml:"validations,omitempty"`
		Mutations   []Mutation   `yaml:"mutations,omitempty"`
	}
	resourceRule struct {
		APIGroups   []string `yaml:"apiGroups,flow"`
		APIVersions []string `yaml:"apiVersions,flow"`
		Operations  []string `yaml:"operations,flow"`
		Resources   []string `yaml:"resources,flow"`
	}
	binding struct {
		APIVersion string      `yaml:"apiVersion"`
		Kind       string      `yaml:"kind"`
		Metadata   objectMeta  `yaml:"metadata"`
		Spec       bindingSpec `yaml:"spec"`
	}
	bindingSpec struct {
		PolicyName        string   `yaml:"policyName"`
		ValidationActions []string `yaml:"validationActions,flow,omitempty"`
		MatchResources    struct {
			NamespaceSelector struct {
				MatchExpressions []matchExpression `yaml:"matchExpressions"`
			} `yaml:"namespaceSelector"`
		} `yaml:"matchResources"`
	}
	matchExpression struct {
		Key      string   `yaml:"key"`
		Operator string   `yaml:"operator"`
		Values   []string `yaml:"values,flow"`
	}
)

// AdmissionPolicies returns the YAML of the ValidatingAdmissionPolicy
// (pods on CREATE, failurePolicy Fail) and its binding that check the
// rules of p that CEL can say, in every namespace but
// p.ExcludedNamespaces(o.ExcludeNamespaces...); with o.Mutating, the
// MutatingAdmissionPolicy and its binding; last, the claim policy
// (ResourceClaimTemplates and ResourceClaims, claimPolicy) named
// o.Name-claims and its binding, scoped as the pod policy's. Documents
// are separated by "---" lines: 4, or 6 with o.Mutating.
func (p *Policy) AdmissionPolicies(o AdmissionPolicyOptions) ([]byte, error) {
	if o.Name == "" {
		o.Name = "gpuplane-gpu-policy"
	}
	if len(o.ValidationActions) == 0 {
		o.ValidationActions = []string{"Deny"}
	}
	data, err := p.Data()
	if err != nil {
		return nil, err
	}
	v := vap{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy", Metadata: objectMeta{o.Name}}
	v.Spec.FailurePolicy = "Fail"
	v.Spec.MatchConstraints.ResourceRules = []resourceRule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Operations: []string{"CREATE"}, Resources: []string{"pods"}}}
	v.Spec.Variables = append(data, LogicVariables()...)
	v.Spec.Validations = Validations()
	b := binding{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding", Metadata: objectMeta{o.Name}}
	b.Spec.PolicyName = o.Name
	b.Spec.ValidationActions = o.ValidationActions
	b.Spec.MatchResources.NamespaceSelector.MatchExpressions = []matchExpression{{Key: "kubernetes.io/metadata.name", Operator: "NotIn", Values: p.ExcludedNamespaces(o.ExcludeNamespaces...)}}
	head := "# gpuplane's GPU policy in the API server (docs/webhook.md, \"In the API\n# server\"): the rules CEL can say, which hold when gpuplane-webhook is down.\n" +
		"# It cannot read a pod's ResourceClaims and ResourceClaimTemplates; the claim\n# policy checks each of them (docs/webhook.md, \"DRA claims\").\n"
	vb, err := marshal(head, v)
	if err != nil {
		return nil, err
	}
	bb, err := marshal("", b)
	if err != nil {
		return nil, err
	}
	out := append(append(vb, "---\n"...), bb...)
	if o.Mutating {
		if out, err = appendMutating(out, v, b); err != nil {
			return nil, err
		}
	}
	cv, cb := claimPolicy(o.Name+"-claims", data), b
	cb.Metadata.Name, cb.Spec.PolicyName = cv.Metadata.Name, cv.Metadata.Name
	head = "# gpuplane's GPU policy of ResourceClaimTemplates and ResourceClaims: a claim\n# of more GPUs than the team allows a pod is refused when it is written\n# (docs/webhook.md, \"DRA claims\").\n"
	return appendDocs(out, head, cv, cb)
}

// appendMutating appends to out the MutatingAdmissionPolicy and binding
// made of the validating policy v and its binding b.
func appendMutating(out []byte, v vap, b binding) ([]byte, error) {
	// The same variables, the mutations; reinvoked when a webhook changes
	// the pod after it (IfNeeded), as the webhook's mutation is idempotent.
	v.Kind, b.Kind = "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"
	v.Spec.ReinvocationPolicy = "IfNeeded"
	v.Spec.Validations, v.Spec.Mutations = nil, Mutations()
	b.Spec.ValidationActions = nil
	head := "# gpuplane's GPU policy's mutation in the API server: the GPU taint's\n# toleration, the team's schedulerName and the team label, as the webhook's.\n"
	return appendDocs(out, head, v, b)
}

// appendDocs appends to out the policy v, headed by head, and its
// binding b, each after a "---" line.
func appendDocs(out []byte, head string, v vap, b binding) ([]byte, error) {
	for _, x := range []struct {
		head string
		v    any
	}{{head, v}, {"", b}} {
		d, err := marshal(x.head, x.v)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), d...)
	}
	return out, nil
}

// MarshalYAML writes the expression in literal style: CEL as it is, with
// no YAML quoting.
func (v Variable) MarshalYAML() (any, error) {
	return mapping("name", v.Name, "expression", v.Expression), nil
}

// MarshalYAML writes the expressions in literal style.
func (v Validation) MarshalYAML() (any, error) {
	return mapping("expression", v.Expression, "message", v.Message, "messageExpression", v.MessageExpression, "reason", v.Reason), nil
}

// mapping is a YAML mapping of key, value pairs, with the values of keys
// ending in "expression" or "Expression" in literal style.
func mapping(kv ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(kv); i += 2 {
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[i+1]}
		if strings.HasSuffix(strings.ToLower(kv[i]), "expression") {
			v.Style = yaml.LiteralStyle
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[i]}, v)
	}
	return n
}

func marshal(head string, v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(head)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
