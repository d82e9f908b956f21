// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	apidra "github.com/gpuplane/gpuplane/api/dra"
	apiresource "github.com/gpuplane/gpuplane/api/resource"
)

// shareKey names one allocated device of one claim: the claim's namespace
// and name, the device and the allocation's share ID ("" when whole).
type shareKey struct {
	namespace, name, device, shareID string
}

// ClaimShare returns the fraction, in [0, 1], of device the prepared claim
// namespace/name holds through share shareID ("" when allocated whole): 0
// for admin access (it holds nothing); 1 for a device allocated whole; for a share of a GPU (--dra-shares), the
// milli-GPU it holds/1000 (heldMilli: the larger of its consumed milliGPU
// and its memory's part of the GPU's). ok is false for a claim or device not prepared on this node. It
// reads a copy taken after each prepare and unprepare, so it never waits on
// one (it is exporter.ClaimShares: the exporter prices DRA pods by it).
func (d *Driver) ClaimShare(namespace, name, device, shareID string) (share float64, ok bool) {
	d.sharesMu.RLock()
	defer d.sharesMu.RUnlock()
	share, ok = d.shares[shareKey{namespace, name, device, shareID}]
	return share, ok
}

// publishShares recomputes ClaimShare's copy from the checkpoint; d.mu is
// held.
func (d *Driver) publishShares() {
	out := map[shareKey]float64{}
	for _, pc := range d.cp.Claims {
		if pc.State != PrepareCompleted {
			continue
		}
		for _, pd := range pc.Devices {
			k := shareKey{pc.Namespace, pc.Name, pd.Device, ""}
			if pd.ShareID != nil {
				k.shareID = string(*pd.ShareID)
			}
			if v, ok := d.deviceShare(pd); ok {
				out[k] = v
			}
		}
	}
	d.sharesMu.Lock()
	d.shares = out
	d.sharesMu.Unlock()
}

// deviceShare is the fraction of its device pd holds.
func (d *Driver) deviceShare(pd PreparedDevice) (float64, bool) {
	if pd.AdminAccess {
		return 0, true // holds nothing
	}
	if pd.ShareID == nil {
		return 1, true
	}
	m := heldMilli(pd, d.gpuMemBytes(pd), d.gpuShares())
	return float64(m) / apiresource.MilliPerGPU, m > 0
}

// gpuMemBytes is the memory of pd's GPU in bytes, 0 when unknown.
func (d *Driver) gpuMemBytes(pd PreparedDevice) int64 {
	e, ok := d.res.Entries[pd.Device]
	if !ok || e.GPU >= len(d.node.GPUs) {
		return 0
	}
	return d.node.GPUs[e.GPU].MemoryMiB << 20
}

// gpuShares is the "shares" capacity of a shared GPU (ShareMode.Shares),
// 0 when none is published.
func (d *Driver) gpuShares() int64 {
	if !d.cfg.Shares {
		return 0
	}
	return d.cfg.ShareMode.Shares
}

// heldMilli is the milli-GPU a share pd holds of its GPU of gpuMem bytes
// and gpuShares shares (apiresource.SharedGPUMilliShares of what it
// consumes).
func heldMilli(pd PreparedDevice, gpuMem, gpuShares int64) int64 {
	var milli, mem, shares int64
	if q, ok := pd.ConsumedCapacity[apidra.CapacityMilliGPU]; ok {
		milli = q.Value()
	}
	if q, ok := pd.ConsumedCapacity[apidra.CapacityMemory]; ok {
		mem = q.Value()
	}
	if q, ok := pd.ConsumedCapacity[apidra.CapacityShares]; ok {
		shares = q.Value()
	}
	return apiresource.SharedGPUMilliShares(milli, mem, gpuMem, shares, gpuShares)
}
