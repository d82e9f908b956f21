// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"fmt"
	"strings"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
)

// Claim is one entry of a pod's spec.resourceClaims: its name in the pod,
// the ResourceClaim (ClaimName) or ResourceClaimTemplate (TemplateName) it
// names, and that object's spec where it was read.
type Claim struct {
	Name         string `yaml:"name"`
	ClaimName    string `yaml:"resourceClaimName"`
	TemplateName string `yaml:"resourceClaimTemplateName"`
	// Spec is the claim's spec (the template's spec.spec), nil where it
	// could not be read: the webhook GETs it, gpuplane policy check finds
	// it among its input files. A claim without it counts no device
	// (Notes says so): the pod may come before its template, which the
	// resource claim controller waits for.
	Spec *dra.ClaimSpec `yaml:"-"`
	// Unread says why Spec is nil where it is not that the object does
	// not exist.
	Unread string `yaml:"-"`
}

// Object names the ResourceClaim or ResourceClaimTemplate the claim
// names, with its kind.
func (c Claim) Object() string {
	if c.TemplateName != "" {
		return "ResourceClaimTemplate " + c.TemplateName
	}
	return "ResourceClaim " + c.ClaimName
}

// ClaimAsk is one request of one of a pod's claims.
type ClaimAsk struct {
	// Claim is the claim's name in the pod.
	Claim string
	dra.Ask
}

// ClaimAsks are the requests of the pod's claims that were read, in
// order (api/dra Asks).
func (p *Pod) ClaimAsks() []ClaimAsk {
	var out []ClaimAsk
	for _, c := range p.Claims {
		if c.Spec == nil {
			continue
		}
		for _, a := range dra.Asks(*c.Spec) {
			out = append(out, ClaimAsk{Claim: c.Name, Ask: a})
		}
	}
	return out
}

// Resource is the extended resource the request is counted as by
// allowed-resources and training-on-shared: a milliGPU share is
// gpuplane.io/gpu-milli, a MIG device of profile P nvidia.com/mig-P (the
// +me profile as .me, the device plugin's spelling), one of any profile
// nvidia.com/mig-<any>, a whole GPU nvidia.com/gpu.
func (a ClaimAsk) Resource() string {
	switch {
	case a.Type == dra.TypeMIG && a.Profile != "":
		return resource.MIGResource(strings.ReplaceAll(a.Profile, "+", "."))
	case a.Type == dra.TypeMIG:
		return resource.MIGResource("<any>")
	case a.MilliGPU > 0:
		return resource.GPUMilli
	}
	return resource.GPU
}

// Notes say what the policy could not know of the pod's claims and what
// it assumed: a claim whose object was not read, and its requests' notes
// (api/dra Ask.Notes), each naming its claim.
func (p *Pod) Notes() []string {
	var out []string
	for _, c := range p.Claims {
		if c.Spec == nil {
			why := c.Unread
			if why == "" {
				why = "not found"
			}
			out = append(out, fmt.Sprintf("claim %s: %s %s: its devices are not counted", c.Name, c.Object(), why))
		}
	}
	for _, a := range p.ClaimAsks() {
		for _, n := range a.Notes {
			out = append(out, "claim "+a.Claim+": "+n)
		}
	}
	return out
}

// countedNote is what the max-gpus-per-pod message adds where the count
// rests on an assumption: " (" + the notes + ")", or "".
func (p *Pod) countedNote() string {
	if n := p.Notes(); len(n) > 0 {
		return " (" + strings.Join(n, "; ") + ")"
	}
	return ""
}
