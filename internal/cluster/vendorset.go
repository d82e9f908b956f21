// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"
	"strings"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// VendorSet is a set of accelerator vendors as a bit mask (bit v: gpu.Vendor
// v). In Pod.Vendors the zero set means "any vendor".
type VendorSet uint8

// AllVendors is every vendor gpuplane knows (gpu.Vendor): NVIDIA, AMD,
// Intel.
const AllVendors = VendorSet(1<<gpu.NVIDIA | 1<<gpu.AMD | 1<<gpu.Intel)

// VendorSetOf returns the set of the given vendors.
func VendorSetOf(vs ...gpu.Vendor) VendorSet {
	var s VendorSet
	for _, v := range vs {
		s |= 1 << v
	}
	return s
}

// Has reports whether v is in the set (the zero set has none).
func (s VendorSet) Has(v gpu.Vendor) bool { return v < 8 && s&(1<<v) != 0 }

// Vendors returns the set's vendors in gpu.Vendor order.
func (s VendorSet) Vendors() []gpu.Vendor {
	var out []gpu.Vendor
	for v := gpu.Vendor(0); v < 8; v++ {
		if s.Has(v) {
			out = append(out, v)
		}
	}
	return out
}

// String writes the set as the pod CSV's vendors column takes it: names
// joined by '|' in gpu.Vendor order ("nvidia|amd"); "" for the zero set.
func (s VendorSet) String() string {
	var names []string
	for _, v := range s.Vendors() {
		names = append(names, v.String())
	}
	return strings.Join(names, "|")
}

// ParseVendorSet reads the vendors a pod accepts: names gpu.ParseVendor
// reads ("nvidia", "amd", "intel", "habana"), joined by '|' or ',', spaces
// and case aside ("nvidia|amd"). "" is the zero set (any vendor); an empty
// name between separators, or an unknown one, is an error.
func ParseVendorSet(text string) (VendorSet, error) {
	if strings.TrimSpace(text) == "" {
		return 0, nil
	}
	var s VendorSet
	for _, name := range strings.Split(strings.ReplaceAll(text, ",", "|"), "|") {
		if strings.TrimSpace(name) == "" {
			return 0, fmt.Errorf("vendors %q: an empty name between separators", text)
		}
		v, err := gpu.ParseVendor(name)
		if err != nil {
			return 0, err
		}
		s |= VendorSetOf(v)
	}
	return s, nil
}

// AcceptedVendors returns the vendors whose GPUs p may use, the one home of
// that rule: those of Vendors (all for the zero set), and of them only the
// vendor of p's resource when p asks for a vendor's resource (amd.com/gpu,
// habana.ai/gaudi, nvidia.com/gpu and NVIDIA's other resources) or by a
// claim (ResourceKind.Vendor). A trace's pod (ResourceAny, no claim, no
// Vendors) accepts every vendor. The zero set means none: Validate
// refuses such a pod.
func (p *Pod) AcceptedVendors() VendorSet {
	s := p.Vendors
	if s == 0 {
		s = AllVendors
	}
	if p.Claim || p.Resource != ResourceAny {
		s &= VendorSetOf(p.Resource.Vendor())
	}
	return s
}
