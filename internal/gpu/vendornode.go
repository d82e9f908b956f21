// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/resource"
)

// The models of a node whose vendor's components name none: a Gaudi node
// without gpuplane's model label (Intel's Gaudi device plugin labels no
// model), an AMD node without its node labeller's product name.
const (
	UnlabelledGaudi = "unlabelled-gaudi"
	UnlabelledAMD   = "unlabelled-amd"
)

// VendorDevices is what a node's labels say of the accelerators AMD's or
// Intel's device plugin serves on it (amd.com/gpu, habana.ai/gaudi):
// their vendor, model and, for AMD, product name and partition mode.
type VendorDevices struct {
	Vendor Vendor
	// Model is the catalog name ("MI300X", "Gaudi3"), else the name the
	// label gives, else (no label, or an empty one) UnlabelledAMD or
	// UnlabelledGaudi.
	Model string
	// Product is AMD's node labeller's amd.com/gpu.product-name
	// ("AMD_Instinct_MI300X"); "" for Gaudi.
	Product string
	// Partition is the AMD partition mode of a catalogued model that
	// has it (amd.com/gpu.compute-memory-partition, "cpx_nps1"); zero
	// otherwise. Each device the plugin advertises is then one
	// partition.
	Partition Partition
}

// LabelError is a node label ReadVendorDevices refuses: its key and why.
type LabelError struct {
	Label string
	Err   error
}

func (e *LabelError) Error() string { return fmt.Sprintf("label %s: %v", e.Label, e.Err) }

// ReadVendorDevices is the one reading of a vendor node's labels, which
// the snapshot reader and gpuplane-scheduler share:
//   - AMD (amd.com/gpu, ROCm/k8s-device-plugin's node labeller,
//     cmd/k8s-node-labeller/main.go): the model of
//     amd.com/gpu.product-name (ModelOfProduct), the partition mode of
//     amd.com/gpu.compute-memory-partition, which must parse and, for a
//     catalogued model, be one the model has (Partitions);
//   - Intel (habana.ai/gaudi): the model of gpuplane.io/gpu.model, which
//     an admin sets (Intel's plugin labels none) and which must not be
//     another vendor's catalogued model.
//
// The error is a *LabelError; v NVIDIA is a *LabelError too (NVIDIA's
// nodes are read by DevicePluginSetup).
func ReadVendorDevices(v Vendor, labels map[string]string) (VendorDevices, error) {
	d := VendorDevices{Vendor: v}
	switch v {
	case Intel:
		d.Model = UnlabelledGaudi
		if m := labels[resource.LabelGPUModel]; m != "" {
			d.Model = Canonical(m)
		}
		if m, known := Lookup(d.Model); known && m.Vendor != Intel {
			return d, &LabelError{resource.LabelGPUModel, fmt.Errorf("model %s is %s's, and the node serves %s", m.Name, m.Vendor, resource.Gaudi)}
		}
		return d, nil
	case AMD:
		d.Model = UnlabelledAMD
		if p := labels[resource.LabelAMDProductName]; p != "" {
			d.Product, d.Model = p, ModelOfProduct(p)
		}
		part, err := ParsePartition(labels[resource.LabelAMDPartition])
		if _, known := Lookup(d.Model); known && err == nil {
			// A catalogued model's mode must be one it has; another
			// model's devices are what amd.com/gpu counts.
			_, err = Partitions(d.Model, part)
			d.Partition = part
		}
		if err != nil {
			return d, &LabelError{resource.LabelAMDPartition, err}
		}
		return d, nil
	}
	return d, &LabelError{resource.LabelGPUProduct, fmt.Errorf("%s's devices are read by their device plugin's setup, not as another vendor's", v)}
}
