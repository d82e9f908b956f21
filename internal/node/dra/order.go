// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"cmp"
	"math"
	"slices"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// The order of the MIG devices (Options.Rank). Upstream's allocator
// (kube-scheduler v1.37) gives a claim the first free device that
// matches, walking a ResourceSlice's devices in their published order; a
// claim of a MIG profile matches that profile's placements alone. So the
// order of each profile's placements decides where its next instance
// goes: in the table's order, the first free GPU and start; ranked, where
// gpuplane's placement core would put it (placement.TargetWorkload
// RankMIG, the order gpuplane simulate's --dra-mig-order=core assumes).

// placementKey names a MIG placement of a node: the GPU's index in
// device.Node.GPUs, the profile's index in gpu.MIGProfiles and the start.
type placementKey struct{ gpu, profile, start int }

// rankNode returns node n as the placement core sees it for ranking its
// MIG placements (placement.TargetWorkload.RankMIG): a cluster.Node of
// len(n.GPUs) GPUs, GPU i being n.GPUs[i], of the model of n's first
// MIG-enabled GPU, with CPU and memory that never bind (RankMIG leaves
// them out); each MIG-enabled GPU of that model is a GPU of MIG on
// demand (EnableDynamicMIG) holding, by GPU UUID, the live MIG devices
// made outside DRA (static, GPU instances without a compute instance
// included: their placement is taken) and the MIG devices of the claims
// prepared (held). MIG-enabled GPUs of another model are left as whole
// GPUs, unranked; an instance that does not fit its GPU (a profile the
// table lacks, an overlap) is left out. ok is false when n has no
// MIG-enabled GPU, or more GPUs than a cluster.Node has
// (cluster.MaxGPUsPerNode).
func rankNode(n device.Node, static map[string][]device.MIGInstance, held map[string][]PreparedMIG) (_ *cluster.Node, ok bool) {
	i := slices.IndexFunc(n.GPUs, func(g device.GPU) bool { return g.MIGEnabled })
	if i < 0 {
		return nil, false
	}
	model := n.GPUs[i].Model
	cn, err := cluster.NewNode("this node", model, math.MaxInt32, math.MaxInt32, len(n.GPUs))
	if err != nil {
		return nil, false
	}
	for i, g := range n.GPUs {
		if !g.MIGEnabled || g.Model != model || cn.EnableDynamicMIG(i) != nil {
			continue
		}
		for _, in := range static[g.UUID] {
			hold(&cn, i, in.GIProfile, in.Placement.Start)
		}
		for _, m := range held[g.UUID] {
			hold(&cn, i, m.GIProfile, m.Start)
		}
	}
	return &cn, true
}

// hold holds MIG profile name at start on GPU g of n; an instance of a
// profile n's model lacks, or that does not fit, is left out (rankNode).
func hold(n *cluster.Node, g int, name string, start int) {
	if k, ok := gpu.MIGProfileIndex(n.Model, name); ok {
		_ = n.HoldDynamicMIG(g, k, start)
	}
}

// rankMIG returns the rank of each free MIG placement of node n
// (rankNode) among its profile's, 0 the best: tw.RankMIG's order. Empty
// when n cannot be ranked.
func rankMIG(tw *placement.TargetWorkload, n device.Node, static map[string][]device.MIGInstance, held map[string][]PreparedMIG) map[placementKey]int {
	cn, ok := rankNode(n, static, held)
	if !ok {
		return nil
	}
	out := map[placementKey]int{}
	for k := range gpu.MIGProfiles(cn.Model) {
		for r, p := range tw.RankMIG(cn, k) {
			out[placementKey{p.GPU, k, p.Start}] = r
		}
	}
	return out
}

// orderMIG returns devs with its MIG devices (entries) reordered: by
// profile (gpu.MIGProfiles' index), within a profile the free placements
// by rank, then the others (taken, or made outside DRA) in the table's
// order, GPU then start. The other devices keep their places. devs is
// not changed.
func orderMIG(devs []resourceapi.Device, entries map[string]Entry, n device.Node, rank map[placementKey]int) []resourceapi.Device {
	type mig struct {
		dev  resourceapi.Device
		key  placementKey
		rank int
	}
	var migs []mig
	var at []int // the MIG devices' places in devs
	for i, d := range devs {
		e := entries[d.Name]
		if e.MIG == nil {
			continue
		}
		k, ok := gpu.MIGProfileIndex(n.GPUs[e.GPU].Model, e.MIG.GIProfile)
		if !ok {
			k = -1
		}
		key := placementKey{e.GPU, k, e.MIG.Start}
		r, ok := rank[key]
		if !ok {
			r = math.MaxInt
		}
		migs = append(migs, mig{dev: d, key: key, rank: r})
		at = append(at, i)
	}
	slices.SortStableFunc(migs, func(a, b mig) int {
		return cmp.Or(cmp.Compare(a.key.profile, b.key.profile), cmp.Compare(a.rank, b.rank), cmp.Compare(a.key.gpu, b.key.gpu), cmp.Compare(a.key.start, b.key.start))
	})
	out := slices.Clone(devs)
	for j, i := range at {
		out[i] = migs[j].dev
	}
	return out
}

// sameOrder reports whether a and b list the same device names in the
// same order.
func sameOrder(a, b []resourceapi.Device) bool {
	return slices.EqualFunc(a, b, func(x, y resourceapi.Device) bool { return x.Name == y.Name })
}
