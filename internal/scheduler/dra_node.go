// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// buildDRANode makes the placement core's state of a DRA node: capacity
// from the NodeInfo's allocatable CPU and memory and from the whole GPUs of
// its gpu.nvidia.com pool (dn, in the allocator's order; the model from
// the first GPU's productName, read as the device plugin's product label
// is: gpu.ModelOfProduct), every pod on it with its CPU and memory, and
// the GPUs' use from the allocated claims: a device allocated whole holds
// its GPU, a shared one the milliGPU its claims consume, a tainted one is
// held whole (unhealthy, never chosen). A pod's nvidia.com/gpu request is
// not counted: DRA serves it through a claim, counted as the claim.
func buildDRANode(ni fwk.NodeInfo, dn *draNode) (*nodeState, error) {
	n := ni.Node()
	alloc := ni.GetAllocatable()
	st := &nodeState{dra: true}
	gpus, model := len(dn.gpus), ""
	switch {
	case gpus > cluster.MaxGPUsPerNode:
		st.reason = fmt.Sprintf("node has %d GPUs, more than %d", gpus, cluster.MaxGPUsPerNode)
		gpus = 0
	case gpus > 0:
		model = nodeModel(dn.gpus[0].product)
	}
	node, err := cluster.NewNode(n.Name, model, alloc.GetMilliCPU(), alloc.GetMemory()>>20, gpus)
	if err != nil {
		return nil, err
	}
	for _, pi := range ni.GetPods() {
		req, _ := podRequest(pi.GetPod())
		req.NumGPU, req.GPUMilli, req.Models = 0, 0, 0
		if err := node.Add(&req, 0); err != nil {
			return nil, err
		}
	}
	for i, g := range dn.gpus[:gpus] {
		st.devices = append(st.devices, g.name)
		st.shares = st.shares || g.shared
		if g.shared {
			st.plain = max(st.plain, g.plain)
		}
		if g.tainted {
			st.unhealthy |= 1 << uint(i)
		}
		if err := holdDRAGPU(&node, i, &g); err != nil {
			return nil, fmt.Errorf("node %s: device %s: %w", n.Name, g.name, err)
		}
	}
	st.node = node
	return st, nil
}

// holdDRAGPU sets GPU i of node from its device g: a GPU of MIG on demand
// (cluster.Node.EnableDynamicMIG) when its MIG placements are published
// and it is healthy, with the placements allocated held where they are;
// its allocated use held; all of it when tainted. A MIG placement the
// core cannot hold (a profile the model's table lacks, an overlap) holds
// the whole GPU.
func holdDRAGPU(node *cluster.Node, i int, g *draGPU) error {
	use := g.used
	if g.tainted {
		use = cluster.MilliGPU
	}
	if g.mig && !g.tainted && len(gpu.MIGProfiles(node.Model)) > 0 {
		if err := node.EnableDynamicMIG(i); err != nil {
			return err
		}
		for _, m := range g.migHeld {
			k, ok := gpu.MIGProfileIndex(node.Model, m.profile)
			if !ok || node.HoldDynamicMIG(i, k, m.start) != nil {
				klog.InfoS("Holding a GPU whole for a MIG device the placement core cannot place", "node", node.Name, "gpu", g.name, "profile", m.profile, "start", m.start)
				return node.Add(&cluster.Pod{Name: "DRA claims on " + g.name, NumGPU: 1, GPUMilli: cluster.MilliGPU}, 1<<uint(i))
			}
		}
		if len(g.migHeld) > 0 {
			return nil // a whole-GPU claim excludes MIG devices
		}
	} else if len(g.migHeld) > 0 {
		use = cluster.MilliGPU
	}
	if use = min(use, node.GPUFree[i]); use > 0 {
		return node.Add(&cluster.Pod{Name: "DRA claims on " + g.name, NumGPU: 1, GPUMilli: use}, 1<<uint(i))
	}
	return nil
}

// devicesOf returns the device names of gpus on a DRA node.
func (st *nodeState) devicesOf(gpus cluster.GPUSet) []string {
	var out []string
	for _, i := range gpus.Indices() {
		if i < len(st.devices) {
			out = append(out, st.devices[i])
		}
	}
	return out
}

// draFilter is Filter's check of what the node's GPU API serves: a pod
// asking its GPUs by ResourceClaims only a DRA node, a share of a GPU on
// a DRA node only GPUs published shared (the node agent's --dra-shares);
// nil when it passes.
func draFilter(s *podState, ns *nodeState) *fwk.Status {
	switch {
	case s.pod.NumGPU == 0:
		return nil
	case s.claimGPUs && !ns.dra:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node serves no GPUs through DRA (no ResourceSlices of "+apidra.DriverName+")")
	case ns.dra && s.pod.IsGPUShare() && s.pod.MIGProfile == 0 && !ns.shares:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node's DRA GPUs are not shared (node agent without --dra-shares)")
	}
	return nil
}

// wireDRA takes the framework's shared DRA manager, when the scheduler
// runs DRA.
func (pl *Plugin) wireDRA(h fwk.Handle) {
	if h == nil || h.SharedDRAManager() == nil {
		return
	}
	pl.dra, pl.draCache = h.SharedDRAManager(), newDRACache()
	pl.claims.claim = pl.dra.ResourceClaims().Get
}
