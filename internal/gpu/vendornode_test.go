// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"errors"
	"testing"

	"github.com/gpuplane/gpuplane/api/resource"
)

// The labels AMD's node labeller writes (ROCm/k8s-device-plugin,
// cmd/k8s-node-labeller: amd.com/gpu.product-name, and
// amd.com/gpu.compute-memory-partition in lower case, "cpx_nps1") and
// the model label an admin gives a Gaudi node. An MI300X in DPX cannot
// be in NPS4 (AMD's partitioning docs: NPS4 needs QPX or CPX).
func TestReadVendorDevices(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      Vendor
		labels map[string]string
		want   VendorDevices
		label  string // the label refused, if any
	}{
		{"MI300X in CPX/NPS1", AMD, map[string]string{resource.LabelAMDProductName: "AMD_Instinct_MI300X", resource.LabelAMDPartition: "cpx_nps1"},
			VendorDevices{Vendor: AMD, Model: "MI300X", Product: "AMD_Instinct_MI300X", Partition: Partition{Compute: "CPX", Memory: "NPS1"}}, ""},
		{"MI300X, no partition label", AMD, map[string]string{resource.LabelAMDProductName: "AMD_Instinct_MI300X"},
			VendorDevices{Vendor: AMD, Model: "MI300X", Product: "AMD_Instinct_MI300X"}, ""},
		{"MI300X in DPX/NPS4", AMD, map[string]string{resource.LabelAMDProductName: "AMD_Instinct_MI300X", resource.LabelAMDPartition: "dpx_nps4"},
			VendorDevices{}, resource.LabelAMDPartition},
		{"a partition label that does not parse", AMD, map[string]string{resource.LabelAMDPartition: "xpx"},
			VendorDevices{}, resource.LabelAMDPartition},
		{"AMD without labels", AMD, nil, VendorDevices{Vendor: AMD, Model: UnlabelledAMD}, ""},
		{"Gaudi3 by gpuplane's label", Intel, map[string]string{resource.LabelGPUModel: "gaudi3"}, VendorDevices{Vendor: Intel, Model: "Gaudi3"}, ""},
		{"Gaudi without a label", Intel, nil, VendorDevices{Vendor: Intel, Model: UnlabelledGaudi}, ""},
		{"empty labels are none", Intel, map[string]string{resource.LabelGPUModel: ""}, VendorDevices{Vendor: Intel, Model: UnlabelledGaudi}, ""},
		{"an empty product name is none", AMD, map[string]string{resource.LabelAMDProductName: ""}, VendorDevices{Vendor: AMD, Model: UnlabelledAMD}, ""},
		{"Gaudi labelled an NVIDIA model", Intel, map[string]string{resource.LabelGPUModel: "H100-80GB"}, VendorDevices{}, resource.LabelGPUModel},
		{"NVIDIA is not read here", NVIDIA, nil, VendorDevices{}, resource.LabelGPUProduct},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadVendorDevices(tc.v, tc.labels)
			var le *LabelError
			if tc.label != "" {
				if !errors.As(err, &le) || le.Label != tc.label {
					t.Fatalf("error %v, want a LabelError of %s", err, tc.label)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
