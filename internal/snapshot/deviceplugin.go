// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// readSharing reads how NVIDIA's device plugin serves the node's GPUs
// (gpu.ReadDevicePluginSetup) and marks a node whose nvidia.com/gpu
// devices are time-slicing or MPS replicas (NVIDIA's default naming) as
// Shared, as readResources does for nvidia.com/gpu.shared: each of its
// whole devices is one replica, 1/Replicas of a GPU (servedRequests). A
// node that also serves MIG devices or gpu-milli, or whose devices are
// MIG instances (single strategy), is read as before.
func (n *Node) readSharing(labels map[string]string, whole, milli int64) {
	n.Plugin = gpu.ReadDevicePluginSetup(labels)
	if n.Replicas > 1 && whole > 0 && milli == 0 && len(n.MIG) == 0 && n.Plugin.MIGProfile == "" {
		n.Shared = true
	}
	if n.Shared && !n.Renamed {
		// Default naming: each nvidia.com/gpu device is one replica, and
		// a pending pod of k devices is k replicas of one GPU, as a
		// running one (cluster.Node.Served, servedReplicas). Renamed,
		// the node serves no nvidia.com/gpu.
		d, _ := n.Plugin.Devices(gpu.ModelOfProduct(n.Plugin.Product), whole)
		n.ReplicaMilli = d.ReplicaMilli
	}
}

// servedRequests makes each bound pod's GPU request what the kubelet gave
// it on its node: on a Shared node, its nvidia.com/gpu (default naming)
// or nvidia.com/gpu.shared devices are replicas, k of them k/Replicas of
// one GPU (a ResourceShared pod); under the single MIG strategy its one
// nvidia.com/gpu device is one MIG instance of the node's profile (the
// share of one, as if it asked for nvidia.com/mig-<profile>, of
// ResourceAny: the node serves no MIG device, cluster.Node.MIGAsGPU). Pending
// pods keep what they ask for: the simulator gives a pod of nvidia.com/gpu
// the same share on such a node (Node.ReplicaMilli, cluster.Node.Served),
// whole GPUs on the others. Warnings say what is not modelled.
func (s *Snapshot) servedRequests(file string) {
	nodes := map[string]*Node{}
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = &s.Nodes[i]
		s.Warnings = append(s.Warnings, s.Nodes[i].setupWarnings(file)...)
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		n := nodes[p.NodeName]
		switch {
		case n == nil || !p.Bound():
		case n.Shared && (p.Resource == cluster.ResourceShared || p.Resource == cluster.ResourceGPU && !n.Renamed):
			s.Warnings = append(s.Warnings, servedReplicas(file, p, n)...)
		case n.SingleMIG != "" && p.Resource == cluster.ResourceGPU:
			s.Warnings = append(s.Warnings, servedMIG(file, p, n)...)
		}
	}
}

// servedReplicas makes bound pod p's devices replicas of node n's GPUs.
func servedReplicas(file string, p *Pod, n *Node) []string {
	k := p.NumGPU
	p.NumGPU, p.GPUMilli, p.Resource = 1, int16(cluster.ReplicaShare(int(k), n.Plugin.ReplicaMilli())), cluster.ResourceShared
	if k <= 1 {
		return nil
	}
	why := "time-slicing may give them from different GPUs"
	if n.Plugin.FailsRequestsOverOne() {
		why = "under MPS the device plugin fails a request for more than one by default (failRequestsGreaterThanOne), yet it runs"
	}
	return []string{fmt.Sprintf("%s:%d: pod %s asks for %d replicas of node %s (%s): simulated as %d milli-GPU of one GPU", file, p.Line, trace.Quote(p.Name), k, trace.Quote(n.Name), why, p.GPUMilli)}
}

// servedMIG makes bound pod p's nvidia.com/gpu devices MIG instances of
// node n's single-strategy profile, k of them k instances' share of one
// GPU (cluster.ReplicaShare), as the simulator gives a pending pod there
// (cluster.Node.Served).
func servedMIG(file string, p *Pod, n *Node) []string {
	k := p.NumGPU
	c := migSlices(n.SingleMIG)
	if c == 0 {
		return nil
	}
	// ResourceAny, not ResourceMIG: n serves no nvidia.com/mig-<profile>
	// (cluster.Node.MIGAsGPU), and p runs there already.
	p.NumGPU, p.GPUMilli, p.Resource = 1, int16(cluster.ReplicaShare(int(k), gpu.MIGShareMilli(c))), cluster.ResourceAny
	if k <= 1 {
		return nil
	}
	return []string{fmt.Sprintf("%s:%d: pod %s holds %d MIG instances %s of node %s (single strategy; they may be of different GPUs): simulated as %d milli-GPU of one GPU", file, p.Line, trace.Quote(p.Name), k, n.SingleMIG, trace.Quote(n.Name), p.GPUMilli)}
}

// setupWarnings says what of the node's device plugin setup is not
// modelled: GPUs that gpu-feature-discovery labels "-MIG-INVALID", a
// single-strategy profile the GPU's catalog model lacks, sharing of MIG
// instances (single strategy) and of the whole GPUs of a node that also
// serves MIG devices (mixed).
func (n *Node) setupWarnings(file string) []string {
	var w []string
	name := trace.Quote(n.Name)
	switch p := n.Plugin; {
	case p.MIGInvalid:
		w = append(w, fmt.Sprintf("%s:%d: node %s: product %s: its GPUs are MIG-enabled in no layout the single MIG strategy serves (gpu-feature-discovery's -MIG-INVALID): read as its %d allocatable %s", file, n.Line, name, trace.Quote(n.Product), n.GPUs, resource.GPU))
	case p.MIGProfile != "" && n.Renamed:
		w = append(w, fmt.Sprintf("%s:%d: node %s: product %s: its %s devices are replicas of MIG instances %s (single strategy, renamed): not modelled, read as %d whole GPUs, each %d replicas", file, n.Line, name, trace.Quote(n.Product), sharedGPU, p.MIGProfile, n.GPUs, n.Replicas))
	case p.MIGProfile != "" && n.SingleMIG == "":
		w = append(w, fmt.Sprintf("%s:%d: node %s: product %s names MIG profile %s, which the simulator does not lay out on %s: its devices read as whole GPUs", file, n.Line, name, trace.Quote(n.Product), p.MIGProfile, trace.Quote(gpu.ModelOfProduct(p.Product))))
	}
	switch {
	case n.Replicas <= 1 || n.Shared:
	case n.SingleMIG != "":
		// Single: nvidia.com/gpu is the MIG devices, so its replicas
		// are the instances' (internal/rm/device_map.go
		// updateDeviceMapWithReplicas replicates whatever the resource
		// holds).
		w = append(w, fmt.Sprintf("%s:%d: node %s shares its MIG instances %d ways (%s): not modelled, each read as one instance", file, n.Line, name, n.Replicas, n.Plugin.Sharing))
	case len(n.MIG) > 0:
		// Mixed: nvidia.com/gpu.replicas is nvidia.com/gpu's, the whole
		// GPUs' (a MIG profile's replicas are labelled
		// nvidia.com/mig-<profile>.replicas; internal/lm/resource.go key).
		w = append(w, fmt.Sprintf("%s:%d: node %s serves its whole GPUs as %d %s replicas each besides MIG devices: not modelled, a pod's %s devices read as whole GPUs", file, n.Line, name, n.Replicas, n.Plugin.Sharing, resource.GPU))
	}
	return append(w, n.migReplicaWarnings(file)...)
}

// migReplicaWarnings warns of the mixed strategy's MIG devices served as
// replicas: gpu-feature-discovery labels a MIG resource's replicas
// nvidia.com/mig-<profile>.replicas (internal/lm/resource.go key), and the
// plugin serves each instance that many times (internal/rm/device_map.go
// updateDeviceMapWithReplicas); the reader counts each device as an
// instance.
func (n *Node) migReplicaWarnings(file string) []string {
	keys := make([]string, 0, len(n.MIG))
	for k := range n.MIG {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var w []string
	for _, k := range keys {
		if r, err := strconv.Atoi(n.Labels[k+".replicas"]); err == nil && r > 1 {
			w = append(w, fmt.Sprintf("%s:%d: node %s shares its %s instances %d ways (%s.replicas): not modelled, its %d devices read as as many instances", file, n.Line, trace.Quote(n.Name), k, r, k, n.MIG[k]))
		}
	}
	return w
}
