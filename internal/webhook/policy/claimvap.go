// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/dra"
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
		{"gpus", `variables.requests.map(r, has(r.exactly) ? ` + celAskGPUs("r.exactly") + ` : size(r.?firstAvailable.orValue([])) > 0 ? ` + celAskGPUs("r.firstAvailable[0]") + ` : 0).sum()`},
	}...)
}

// ClaimValidations are the claim policy's rules, with the webhook's
// messages for a pod, "the claim" for "the pod".
func ClaimValidations() []Validation {
	return []Validation{{
		Expression:        `variables.team == '' || variables.teamMaxGPUs[variables.teamIndex] == 0 || variables.gpus <= variables.teamMaxGPUs[variables.teamIndex]`,
		Message:           "gpuplane GPU policy: max-gpus-per-pod: a claim of more GPUs than the team allows per pod",
		MessageExpression: `variables.refuses + 'max-gpus-per-pod: the claim asks for ' + string(variables.gpus) + ' GPUs, team ' + variables.team + ' allows at most ' + string(variables.teamMaxGPUs[variables.teamIndex]) + ' per pod; ask for fewer or split the work'`,
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
