// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"math/bits"

	"k8s.io/dynamic-resource-allocation/resourceclaim"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// claimSource finds the specs of a pod's ResourceClaims through claim,
// the framework's claim tracker: a claim by name, or the claim the
// resourceclaim controller made from a template, named in the pod's
// status (resourceclaim.Name, as DynamicResources finds it; until it
// exists DynamicResources does not schedule the pod either). Templates
// are not read: the scheduler's ClusterRole, upstream's
// system:kube-scheduler, has no rights on them.
type claimSource struct {
	claim func(namespace, name string) (*resourceapi.ResourceClaim, error)
}

// claimSpecs returns the specs of p's claims; ok is false when one cannot
// be read (not made yet, or made for another pod), or a claim is
// allocated already (a claim shared with a pod placed before: its devices
// are counted where they are). A claim the controller chose not to make
// (resourceclaim.Name's nil name) asks nothing.
func (cs claimSource) claimSpecs(p *v1.Pod) ([]*resourceapi.ResourceClaimSpec, bool) {
	var out []*resourceapi.ResourceClaimSpec
	for i := range p.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(p, &p.Spec.ResourceClaims[i])
		if err != nil || cs.claim == nil {
			return nil, false
		}
		if name == nil {
			continue
		}
		c, err := cs.claim(p.Namespace, *name)
		if err != nil || c.Status.Allocation != nil || mustCheckOwner && resourceclaim.IsForPod(p, c, false) != nil {
			return nil, false
		}
		out = append(out, &c.Spec)
	}
	return out, true
}

// draAsk is what a pod's claims ask in the placement core's terms: gpus
// GPUs of milli milli-GPU each, or one MIG instance of profile (a profile
// attribute's value, e.g. "1g.10gb").
type draAsk struct {
	gpus    int
	milli   int64
	profile string
	// plain: one GPU of class gpu.nvidia.com asking no capacity, whose
	// share is the defaults of the node's shared GPUs (nodeState.plain).
	plain bool
}

// modelClaims returns what claims of these specs ask in the placement
// core's terms. ok is true only for the shapes the core models: one
// request in all, no constraints, ExactCount (count N, default 1), no
// tolerations or admin access, and either class gpu.nvidia.com without
// selectors (N whole GPUs; a capacity request of milliGPU 1..999, count 1,
// is a share of one GPU; any other capacity, memory, is left to the
// allocator) or class mig.nvidia.com with one selector of the profile
// attribute (apidra.MIGProfileSelector), count 1. Every other shape is upstream's
// alone: the scheduler neither refuses nor places it by GPUs.
func modelClaims(specs []*resourceapi.ResourceClaimSpec) (draAsk, bool) {
	var req *resourceapi.ExactDeviceRequest
	for _, s := range specs {
		if len(s.Devices.Constraints) > 0 {
			return draAsk{}, false
		}
		for i := range s.Devices.Requests {
			if req != nil || s.Devices.Requests[i].Exactly == nil {
				return draAsk{}, false
			}
			req = s.Devices.Requests[i].Exactly
		}
	}
	switch {
	case req == nil, len(req.Tolerations) > 0, req.AdminAccess != nil && *req.AdminAccess,
		req.AllocationMode != "" && req.AllocationMode != resourceapi.DeviceAllocationModeExactCount:
		return draAsk{}, false
	}
	a := draAsk{gpus: 1, milli: cluster.MilliGPU}
	if req.Count > 0 {
		a.gpus = int(req.Count)
	}
	switch req.DeviceClassName {
	case apidra.MIGDeviceClass:
		if a.gpus != 1 || len(req.Selectors) != 1 || req.Selectors[0].CEL == nil || req.Capacity != nil {
			return draAsk{}, false
		}
		p, ok := apidra.MIGProfileSelector(req.Selectors[0].CEL.Expression)
		if !ok {
			return draAsk{}, false
		}
		a.profile = p
		return a, true
	case apidra.GPUDeviceClass:
	default:
		return draAsk{}, false
	}
	if len(req.Selectors) > 0 {
		return draAsk{}, false
	}
	if req.Capacity != nil {
		if q, has := req.Capacity.Requests[apidra.CapacityMilliGPU]; has {
			a.milli = q.Value()
		}
	}
	a.plain = a.gpus == 1 && (req.Capacity == nil || len(req.Capacity.Requests) == 0)
	switch {
	case a.gpus > cluster.MaxGPUsPerNode, a.milli < 1:
		return draAsk{}, false
	case a.milli >= cluster.MilliGPU:
		a.milli = cluster.MilliGPU
	case a.gpus > 1:
		return draAsk{}, false
	}
	return a, true
}

// addClaimGPUs sets req's GPUs from p's claims when p asks none by
// extended resource and its claims have the shape the core models
// (modelClaims), with the model constraint of its annotation. ok reports
// whether it did; migs, for a MIG profile, are the pod per profile index
// (cluster.Pod.MIGProfile), since one profile name may sit at different
// indices of the models' tables (1g.10gb: 0 on A100-80GB, 2 on
// A100-40GB): each restricted to the models of its index. req is then the
// variant of the most models. plain reports one GPU asked with no
// capacity (draAsk.plain): its share is the node's (podState.onNode).
func (cs claimSource) addClaimGPUs(p *v1.Pod, req *cluster.Pod) (migs map[int8]cluster.Pod, plain, ok bool) {
	if req.NumGPU != 0 || len(p.Spec.ResourceClaims) == 0 {
		return nil, false, false
	}
	specs, ok := cs.claimSpecs(p)
	if !ok {
		return nil, false, false
	}
	a, ok := modelClaims(specs)
	if !ok {
		return nil, false, false
	}
	var models cluster.ModelSet
	if spec, has := p.Annotations[gpuresource.AnnotationGPUModel]; has {
		if m, err := parseModels(spec); err == nil {
			models = m
		}
	}
	if a.profile == "" {
		req.NumGPU, req.GPUMilli, req.Models = a.gpus, a.milli, models
		return nil, a.plain, true
	}
	byIndex := migProfileModels(a.profile)
	var best int8 = -1
	for k, mm := range byIndex {
		if models != 0 {
			mm &= models
		}
		if mm == 0 {
			continue
		}
		v := *req
		v.NumGPU, v.MIGProfile, v.GPUMilli, v.Models, v.Resource = 1, int8(k+1), cluster.MIGMilli(k), mm, cluster.ResourceMIG
		if migs == nil {
			migs = map[int8]cluster.Pod{}
		}
		migs[v.MIGProfile] = v
		if best < 0 || bits.OnesCount64(uint64(mm)) > bits.OnesCount64(uint64(migs[best].Models)) ||
			bits.OnesCount64(uint64(mm)) == bits.OnesCount64(uint64(migs[best].Models)) && v.MIGProfile < best {
			best = v.MIGProfile
		}
	}
	if best < 0 {
		return nil, false, false // a profile no model (the pod allows) has: upstream's to refuse
	}
	*req = migs[best]
	return migs, false, true
}

// migProfileModels returns, by index k of gpu.MIGProfiles, the catalog
// models whose MIG table has the profile named profile at k: a 3g.40gb
// is at 4 on A100-80GB and H100-80GB; a 1g.10gb at 0 on those, at 2 on
// A100-40GB (whose 1-slice profile is 1g.5gb).
func migProfileModels(profile string) map[int]cluster.ModelSet {
	out := map[int]cluster.ModelSet{}
	for _, name := range catalog.Names() {
		k, ok := gpu.MIGProfileIndex(name, profile)
		if !ok {
			continue
		}
		if id, err := gpu.ModelID(name); err == nil {
			out[k] |= 1 << uint(id)
		}
	}
	return out
}
