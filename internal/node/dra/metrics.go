// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import "github.com/gpuplane/gpuplane/internal/node/drametrics"

// countPrepared sets nvidia_dra_prepared_devices from the checkpoint: the
// devices of every completed claim, a MIG device (created for the claim
// or static) as mig, any other (a whole GPU, a share of one) as gpu, once
// per claim that holds it, as NVIDIA's driver counts its checkpoint's
// (cmd/gpu-kubelet-plugin device_state.go). d.mu is held, or d is not yet
// shared.
func (d *Driver) countPrepared() {
	if d.cfg.Metrics == nil {
		return
	}
	counts := map[string]int{}
	for _, pc := range d.cp.Claims {
		if pc.State != PrepareCompleted {
			continue
		}
		for _, pd := range pc.Devices {
			t := drametrics.TypeGPU
			if pd.MIG != nil || pd.StaticMIG != "" {
				t = drametrics.TypeMIG
			}
			counts[t]++
		}
	}
	d.cfg.Metrics.SetPrepared(counts)
}
