// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// GPUResource is the extended resource a pod's GPUs are counted in, named in
// Fits's reasons as kube-scheduler's NodeResourcesFit names an insufficient
// resource: api/resource's GPU (standard library only, so the offline tool
// links no YAML library through it).
const GPUResource = resource.GPU

// misfit is why a pod does not fit a node; fitOK when it does.
type misfit uint8

const (
	fitOK misfit = iota
	fitNoGPUs
	fitModel
	fitCPU
	fitMemory
	fitGPU
	fitSelector
	fitResource
	fitFilter
)

// reasons are the Fits reasons that need no formatting.
var reasons = [...]string{
	fitNoGPUs: "node has no GPUs",
	fitCPU:    "Insufficient cpu",
	fitMemory: "Insufficient memory",
	fitGPU:    "Insufficient " + GPUResource,
	// kube-scheduler's NodeAffinity plugin's ErrReasonPod
	// (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go).
	fitSelector: "node(s) didn't match Pod's node affinity/selector",
}

// check is the fit rule: the one home of what Fits and Feasible decide.
// It tests the resources that rule out most nodes of a busy cluster first,
// and lumps a GPU model the pod may not use, or too few GPUs, in fitGPU;
// Fits tells those apart with never, on failure only.
func check(n *Node, p *Pod) misfit {
	var buf Pod
	p = n.Served(p, &buf)
	if p.Filter != nil {
		if r, _ := p.Filter.Refuses(n); r != RefusedNone {
			return fitFilter
		}
	}
	if p.CPUMilli > n.CPUFree {
		return fitCPU
	}
	if p.MemoryMiB > n.MemoryFree {
		return fitMemory
	}
	if p.NumGPU == 0 {
		// A pod without GPUs may still select a GPU model (a snapshot's
		// nodeSelector on nvidia.com/gpu.product): only nodes of that
		// model carry the label.
		if !ModelAllowed(n, p) {
			return fitSelector
		}
		return fitOK
	}
	if p.NumGPU > len(n.GPUFree) || !ModelAllowed(n, p) || !n.Serves(p) {
		return fitGPU
	}
	k := 0
	if n.Uniform(p) {
		// No MIG: FreeAfter's rule is GPUMilli free.
		for _, f := range n.GPUFree {
			if f >= p.GPUMilli {
				k++
				if k == p.NumGPU {
					return fitOK
				}
			}
		}
		return fitGPU
	}
	for g := range n.GPUFree {
		if n.fitsGPU(p, g) {
			k++
			if k == p.NumGPU {
				return fitOK
			}
		}
	}
	return fitGPU
}

// never returns why GPU pod p can never fit n, whatever is allocated there:
// no GPUs, a GPU model p may not use, or no GPU that serves p's resource
// kind (Node.ServesKind); fitOK otherwise.
func never(n *Node, p *Pod) misfit {
	switch {
	case len(n.GPUFree) == 0:
		return fitNoGPUs
	case !ModelAllowed(n, p):
		return fitModel
	case !n.ServesKind(p):
		return fitResource
	}
	return fitOK
}

// Fits reports whether the pod fits the node's free resources: the node has
// GPUs of a model the pod allows (for a GPU pod), enough free CPU and
// memory, and NumGPU GPUs that fit it (Node.FreeAfter: GPUMilli free, or
// a free instance of its MIG profile). When it does
// not, reason says why, in the style of a kube-scheduler event: "node has
// no GPUs", "GPU model T4 not allowed (pod allows A100-80GB|H100-80GB)",
// "Insufficient cpu", "Insufficient memory" or "Insufficient
// nvidia.com/gpu" (too few GPUs with the requested share free); a pod
// without GPUs that allows some GPU models (Pod.Models) fits only nodes of
// them, else "node(s) didn't match Pod's node affinity/selector"; a GPU
// pod of a trace whose Vendors exclude the node's, "GPU vendor amd not
// accepted (pod accepts nvidia)". A pod
// with a Filter that refuses the node gets that filter's reason first
// (Refusal.Reason). p is taken as n serves it (Node.Served). It
// allocates only to format the GPU-model reason.
func Fits(n *Node, p *Pod) (ok bool, reason string) {
	var buf Pod
	p = n.Served(p, &buf)
	if p.Filter != nil {
		// Kubernetes' own filters run before NodeResourcesFit.
		if r, t := p.Filter.Refuses(n); r != RefusedNone {
			return false, r.Reason(t)
		}
	}
	m := check(n, p)
	if m == fitOK {
		return true, ""
	}
	// A node that can never fit says so, rather than naming a resource
	// that is short today.
	if p.NumGPU > 0 {
		if s := never(n, p); s != fitOK {
			m = s
		}
	} else if !ModelAllowed(n, p) {
		m = fitSelector
	}
	switch m {
	case fitModel:
		return false, fmt.Sprintf("GPU model %s not allowed (pod allows %s)", n.Model, gpu.FormatModels(uint64(p.Models)))
	case fitResource:
		if !p.Claim && p.Resource == ResourceAny && !p.AcceptedVendors().Has(n.Vendor) {
			return false, fmt.Sprintf("GPU vendor %s not accepted (pod accepts %s)", n.Vendor, p.AcceptedVendors())
		}
		if p.Claim {
			// kube-scheduler's DynamicResources plugin.
			return false, "cannot allocate all claims"
		}
		// kube-scheduler's NodeResourcesFit: the node has none of it.
		return false, "Insufficient " + p.Resource.Name()
	default:
		return false, reasons[m]
	}
}

// Feasible is Fits without the reason, for loops over many nodes (the
// simulator decides millions of placements); it never allocates.
func Feasible(n *Node, p *Pod) bool { return check(n, p) == fitOK }

// ModelAllowed reports whether a pod may use the node's GPU model. A pod
// that allows any model may use any node; a pod restricted to some models
// never fits a CPU-only node.
func ModelAllowed(n *Node, p *Pod) bool { return p.Models.Allows(n.ModelID) }
