// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// podVendors reads a pod CSV's vendors column: the vendors whose GPUs the
// pod accepts, names joined by '|' ("nvidia", "nvidia|amd";
// cluster.ParseVendorSet), "" for any. A workload built for CUDA says
// nvidia. A pod asking for a vendor's resource (kind, the resource
// column's) accepts that vendor only: a vendors value that excludes it is
// an error.
func podVendors(text string, kind cluster.ResourceKind) (cluster.VendorSet, error) {
	s, err := cluster.ParseVendorSet(text)
	if err != nil || s == 0 || kind == cluster.ResourceAny {
		return s, err
	}
	if !s.Has(kind.Vendor()) {
		return 0, fmt.Errorf("vendors %s with resource %s: the resource is %s's", s, kind.Name(), kind.Vendor())
	}
	return s, nil
}

// WithVendors returns pods with the GPU pods that name no vendor (no
// vendors column value, no vendor's resource: a trace's pods) accepting
// vendors (simulate --pod-vendors), and how many it set; pods is not
// changed. vendors 0 returns pods.
func WithVendors(pods []PodSpec, vendors cluster.VendorSet) ([]PodSpec, int) {
	if vendors == 0 {
		return pods, 0
	}
	out, n := make([]PodSpec, len(pods)), 0
	for i, p := range pods {
		if p.NumGPU > 0 && p.Vendors == 0 && p.Resource == cluster.ResourceAny {
			p.Vendors = vendors
			n++
		}
		out[i] = p
	}
	return out, n
}
