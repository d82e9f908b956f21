// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
)

// The claim policy: a second ValidatingAdmissionPolicy, of
// resource.k8s.io/v1 ResourceClaimTemplates and ResourceClaims (CREATE and
// UPDATE), with the same data variables, binding and exemptions as the pod
// policy. The pod policy cannot read the claims a pod names; this one
// reads each claim when it is written, and refuses one that alone asks
// more GPUs than the team of its namespace allows a pod
// (max-gpus-per-pod), counted as api/dra Asks counts them. A pod naming
// several claims, each within the limit, that exceed it together is the
// webhook's alone (docs/webhook.md, "DRA claims").

// ClaimPolicyResources are the resources the claim policy matches, of
// resource.k8s.io/v1.
var ClaimPolicyResources = []string{"resourceclaimtemplates", "resourceclaims"}

// celAskGPUs is api/dra Ask.GPUs in CEL, of request e (an ExactDeviceRequest
// or a DeviceSubRequest): count (default 1) for classes gpu.nvidia.com and
// mig.nvidia.com, AllCount for allocationMode All, 0 with adminAccess or
// another class.
func celAskGPUs(e string) string {
	return fmt.Sprintf(`(%[1]s.?deviceClassName.orValue('') in ['%[2]s', '%[3]s'] && !%[1]s.?adminAccess.orValue(false) ? (%[1]s.?allocationMode.orValue('') == 'All' ? %[4]d : %[1]s.?count.orValue(1)) : 0)`,
		e, dra.GPUDeviceClass, dra.MIGDeviceClass, dra.AllCount)
}

// perAsk is a list, per request of the claim, of f of the request that
// api/dra Asks reads (exactly, or firstAvailable's first alternative), or
// none for a request of neither; f may name the request's index i.
func perAsk(f func(e string) string, none string) string {
	return `variables.requests.transformList(i, r, has(r.exactly) ? ` + f("r.exactly") + ` : size(r.?firstAvailable.orValue([])) > 0 ? ` + f("r.firstAvailable[0]") + ` : ` + none + `)`
}

// celAttr is, of request e, the values its selectors compare attribute
// attr of the driver with (api/dra ParseSelectorClause: clauses between
// &&, each device.attributes['gpu.nvidia.com'].ATTR == 'VALUE', either
// quote), in order.
func celAttr(e, attr string) string {
	clause := `^device\.attributes\[["']` + regexp.QuoteMeta(dra.DriverName) + `["']\]\.` + attr + `\s*==\s*["'][^"']*["']$`
	lit := strings.ReplaceAll(strings.ReplaceAll(clause, `\`, `\\`), `'`, `\'`)
	return fmt.Sprintf(`%s.?selectors.orValue([]).map(s, s.?cel.?expression.orValue('').split('&&').map(c, c.trim())).flatten().filter(c, c.matches('%s')).map(c, c.find('["\'][^"\']*["\']$')).map(v, v.substring(1, size(v) - 1))`, e, lit)
}

// celAskResource is ClaimAsk.Resource in CEL, of request e of index i:
// the MIG profile's resource (its last profile selector, askProfiles[i],
// + as .), MIGPrefix<any>, gpuplane.io/gpu-milli for
// capacity.requests.milliGPU 1..999, else nvidia.com/gpu.
func celAskResource(e string) string {
	profiles := `variables.askProfiles[i]`
	milli := fmt.Sprintf(`string(%s.?capacity.?requests[?'%s'].orValue(''))`, e, dra.CapacityMilliGPU)
	return fmt.Sprintf(`(%[1]s.?deviceClassName.orValue('') == '%[2]s' ? (size(%[3]s) > 0 ? '%[4]s' + %[3]s[size(%[3]s) - 1].replace('+', '.') : '%[4]s<any>') : %[5]s.matches('^[0-9]{1,3}$') && int(%[5]s) >= 1 && int(%[5]s) < 1000 ? '%[6]s' : '%[7]s')`,
		e, dra.MIGDeviceClass, profiles, resource.MIGPrefix, milli, resource.GPUMilli, resource.GPU)
}

// ClaimVariables are the claim policy's variables after the data
// variables.
func ClaimVariables() []Variable {
	return append(teamVariables(), []Variable{
		{"refuses", `'gpuplane GPU policy refuses ' + request.kind.kind + ' ' + request.namespace + '/' + object.metadata.?name.orValue(object.metadata.?generateName.orValue('')) + ': '`},
		// The claim's requests: a ResourceClaimTemplate's spec.spec, a
		// ResourceClaim's spec (a ResourceClaimSpec both).
		{"requests", `(request.kind.kind == 'ResourceClaimTemplate' ? object.spec.spec : object.spec).?devices.?requests.orValue([])`},
		// The GPUs they ask (api/dra Asks, Ask.GPUs): exactly, or
		// firstAvailable's first alternative.
		{"askGPUs", perAsk(celAskGPUs, "0")},
		{"gpus", `variables.askGPUs.sum()`},
		// allowed-models: the productName selectors' values, as node
		// labels (spaces as hyphens), of every request.
		{"models", `variables.teamAllowedModels[variables.teamIndex]`},
		{"picked", perAsk(func(e string) string { return celAttr(e, dra.AttrProductName) }, "[]") + `.flatten().map(m, m.replace(' ', '-'))`},
		// allowed-resources: the resource of each request that counts
		// GPUs (ClaimAsk.Resource), where the team allows it not.
		{"allowedResources", `variables.teamAllowedResources[variables.teamIndex]`},
		{"askProfiles", perAsk(func(e string) string { return celAttr(e, dra.AttrProfile) }, "[]")},
		{"askResources", perAsk(celAskResource, "''")},
		{"badResources", `variables.requests.transformList(i, r, variables.askGPUs[i] > 0 && !variables.allowedResources.exists(p, p == variables.askResources[i] || (p.endsWith('*') && variables.askResources[i].startsWith(p.substring(0, size(p) - 1)))), 'request ' + r.name + ': resource ' + variables.askResources[i])`},
	}...)
}

// ClaimValidations are the claim policy's rules, with the webhook's
// messages for a pod: "the claim" for "the pod", "request R" for "claim C
// request R" (the claim's name in a pod is not known).
func ClaimValidations() []Validation {
	return []Validation{{
		Expression:        `variables.team == '' || variables.teamMaxGPUs[variables.teamIndex] == 0 || variables.gpus <= variables.teamMaxGPUs[variables.teamIndex]`,
		Message:           "gpuplane GPU policy: max-gpus-per-pod: a claim of more GPUs than the team allows per pod",
		MessageExpression: `variables.refuses + 'max-gpus-per-pod: the claim asks for ' + string(variables.gpus) + ' GPUs, team ' + variables.team + ' allows at most ' + string(variables.teamMaxGPUs[variables.teamIndex]) + ' per pod; ask for fewer or split the work'`,
		Reason:            "Forbidden",
	}, {
		Expression:        `variables.team == '' || size(variables.models) == 0 || variables.picked.all(m, m in variables.models)`,
		Message:           "gpuplane GPU policy: allowed-models: a claim of a GPU model the team may not use",
		MessageExpression: `variables.refuses + variables.picked.filter(m, !(m in variables.models)).map(m, 'allowed-models: GPU model "' + m + '" is not allowed for team ' + variables.team + '; select one of ' + variables.models.join(', ') + ' with ` + resource.LabelGPUProduct + `').join('; ')`,
		Reason:            "Forbidden",
	}, {
		Expression:        `variables.team == '' || size(variables.allowedResources) == 0 || size(variables.badResources) == 0`,
		Message:           "gpuplane GPU policy: allowed-resources: a claim of a GPU resource the team may not use",
		MessageExpression: `variables.refuses + variables.badResources.map(b, 'allowed-resources: ' + b + ' is not allowed for team ' + variables.team + '; use one of ' + variables.allowedResources.join(', ')).join('; ')`,
		Reason:            "Forbidden",
	}}
}

// claimPolicy returns the claim policy named name, its variables after
// data.
func claimPolicy(name string, data []Variable) vap {
	v := vap{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy", Metadata: objectMeta{name}}
	v.Spec.FailurePolicy = "Fail"
	v.Spec.MatchConstraints.ResourceRules = []resourceRule{{APIGroups: []string{"resource.k8s.io"}, APIVersions: []string{"v1"}, Operations: []string{"CREATE", "UPDATE"}, Resources: ClaimPolicyResources}}
	v.Spec.Variables = append(append([]Variable{}, data...), ClaimVariables()...)
	v.Spec.Validations = ClaimValidations()
	return v
}
