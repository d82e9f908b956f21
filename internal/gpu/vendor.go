// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"strings"
)

// Vendor is the maker of an accelerator. The zero value is NVIDIA, so
// that every model, node and pod gpuplane built before it knew other
// vendors stays NVIDIA's.
type Vendor uint8

const (
	// NVIDIA GPUs: whole, shared by time-slicing or MPS, or split by MIG.
	NVIDIA Vendor = iota
	// AMD Instinct GPUs: whole, or split by compute and memory
	// partitioning (Partition), each partition a GPU of its own.
	AMD
	// Intel Gaudi accelerators (formerly Habana Labs): whole devices.
	Intel
	numVendors
)

// vendorNames are the vendors' names as gpuplane writes them (the cluster
// YAML's vendor field, the node CSV's vendor column, reports).
var vendorNames = [numVendors]string{"nvidia", "amd", "intel"}

// String returns the vendor's name: "nvidia", "amd" or "intel".
func (v Vendor) String() string {
	if v < numVendors {
		return vendorNames[v]
	}
	return fmt.Sprintf("vendor#%d", uint8(v))
}

// ParseVendor reads a vendor name, case aside: "nvidia", "amd", "intel"
// (or "habana", the Gaudi's maker before Intel bought it). Other names are
// an error that lists the known ones.
func ParseVendor(s string) (Vendor, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "habana" {
		return Intel, nil
	}
	for v, n := range vendorNames {
		if l == n {
			return Vendor(v), nil
		}
	}
	return 0, fmt.Errorf("vendor %q: want one of %s", s, strings.Join(vendorNames[:], ", "))
}

// VendorOf returns the vendor of a catalog model (Lookup), and NVIDIA
// for a name the catalog lacks: an uncatalogued model is NVIDIA's unless
// its node says otherwise (the cluster YAML's vendor field).
func VendorOf(model string) Vendor {
	m, _ := Lookup(model)
	return m.Vendor
}
