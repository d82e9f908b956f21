// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// shareKey names one allocated device of one claim: the claim's namespace
// and name, the device and the allocation's share ID ("" when whole).
type shareKey struct {
	namespace, name, device, shareID string
}

// ClaimShare returns the fraction, in (0, 1], of device the prepared claim
// namespace/name holds through share shareID ("" when allocated whole): 1
// for a device allocated whole; for a share of a GPU (--dra-shares), its
// consumed milliGPU/1000, or without one its consumed memory over the
// GPU's. ok is false for a claim or device not prepared on this node. It
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
	if pd.ShareID == nil {
		return 1, true
	}
	if q, ok := pd.ConsumedCapacity[CapacityMilliGPU]; ok {
		return min(float64(q.Value())/1000, 1), q.Sign() > 0
	}
	e, ok := d.res.Entries[pd.Device]
	q, has := pd.ConsumedCapacity[CapacityMemory]
	if !ok || !has || q.Sign() <= 0 {
		return 0, false
	}
	total := resource.NewQuantity(d.node.GPUs[e.GPU].MemoryMiB<<20, resource.BinarySI)
	return min(q.AsApproximateFloat64()/total.AsApproximateFloat64(), 1), total.Sign() > 0
}
