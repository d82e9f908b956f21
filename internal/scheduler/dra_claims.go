// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// claimSource finds the specs of a pod's ResourceClaims: a claim by name
// from the framework's claim tracker, a template from the informer's
// lister (the claim made from it has the template's spec).
type claimSource struct {
	claim    func(namespace, name string) (*resourceapi.ResourceClaim, error)
	template func(namespace, name string) (*resourceapi.ResourceClaimTemplate, error)
}

// claimSpecs returns the specs of p's claims; ok is false when one cannot
// be read, or a claim is allocated already (a claim shared with a pod
// placed before: its devices are counted where they are).
func (cs claimSource) claimSpecs(p *v1.Pod) ([]*resourceapi.ResourceClaimSpec, bool) {
	var out []*resourceapi.ResourceClaimSpec
	for _, pc := range p.Spec.ResourceClaims {
		switch {
		case pc.ResourceClaimName != nil && cs.claim != nil:
			c, err := cs.claim(p.Namespace, *pc.ResourceClaimName)
			if err != nil || c.Status.Allocation != nil {
				return nil, false
			}
			out = append(out, &c.Spec)
		case pc.ResourceClaimTemplateName != nil && cs.template != nil:
			t, err := cs.template(p.Namespace, *pc.ResourceClaimTemplateName)
			if err != nil {
				return nil, false
			}
			out = append(out, &t.Spec.Spec)
		default:
			return nil, false
		}
	}
	return out, true
}

// modelClaims returns the GPUs that claims of these specs ask in the
// placement core's terms: gpus GPUs of milli milli-GPU each. ok is true
// only for the shape the core models: one request in all, no constraints,
// of DeviceClass gpu.nvidia.com, ExactCount (count N, default 1), no
// selectors, tolerations or admin access; a capacity request of milliGPU
// (1..999, count 1) is a share of one GPU, any other capacity (memory) is
// left to the allocator. Every other shape is upstream's alone: the
// scheduler neither refuses nor places it by GPUs.
func modelClaims(specs []*resourceapi.ResourceClaimSpec) (gpus int, milli int64, ok bool) {
	var req *resourceapi.ExactDeviceRequest
	for _, s := range specs {
		if len(s.Devices.Constraints) > 0 {
			return 0, 0, false
		}
		for i := range s.Devices.Requests {
			if req != nil || s.Devices.Requests[i].Exactly == nil {
				return 0, 0, false
			}
			req = s.Devices.Requests[i].Exactly
		}
	}
	switch {
	case req == nil, req.DeviceClassName != draGPUClass, len(req.Selectors) > 0, len(req.Tolerations) > 0,
		req.AdminAccess != nil && *req.AdminAccess,
		req.AllocationMode != "" && req.AllocationMode != resourceapi.DeviceAllocationModeExactCount:
		return 0, 0, false
	}
	gpus, milli = 1, cluster.MilliGPU
	if req.Count > 0 {
		gpus = int(req.Count)
	}
	if req.Capacity != nil {
		if q, has := req.Capacity.Requests[draMilliGPU]; has {
			milli = q.Value()
		}
	}
	switch {
	case gpus > cluster.MaxGPUsPerNode, milli < 1:
		return 0, 0, false
	case milli >= cluster.MilliGPU:
		milli = cluster.MilliGPU
	case gpus > 1:
		return 0, 0, false
	}
	return gpus, milli, true
}

// addClaimGPUs sets req's GPUs from p's claims when p asks none by
// extended resource and its claims have the shape the core models
// (modelClaims), with the model constraint of its annotation; it reports
// whether it did.
func (cs claimSource) addClaimGPUs(p *v1.Pod, req *cluster.Pod) bool {
	if req.NumGPU != 0 || len(p.Spec.ResourceClaims) == 0 {
		return false
	}
	specs, ok := cs.claimSpecs(p)
	if !ok {
		return false
	}
	gpus, milli, ok := modelClaims(specs)
	if !ok {
		return false
	}
	req.NumGPU, req.GPUMilli = gpus, milli
	if spec, has := p.Annotations[gpuresource.AnnotationGPUModel]; has {
		if m, err := parseModels(spec); err == nil {
			req.Models = m
		}
	}
	return true
}
