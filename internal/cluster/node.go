// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"
	"math/bits"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// Node is one node's capacity and free resources.
type Node struct {
	Name string
	// Model is the GPU model name, in the catalog's spelling for a catalog
	// model ("" for a CPU-only node); ModelID its process-wide ID
	// (gpu.ModelID), -1 for a CPU-only node.
	Model   string
	ModelID int
	// Vendor is the maker of the node's GPUs: its catalog model's
	// (gpu.VendorOf; NVIDIA, the zero value, for a CPU-only node), or
	// what its node list says of a model the catalog lacks. A pod asking
	// a vendor's resource fits only that vendor's nodes (Serves).
	Vendor gpu.Vendor
	// Partition is the AMD partition mode of the node's GPUs, each GPU
	// then one partition of a device (gpu.Partitions: an MI300X in CPX is
	// 8 of them); the zero value: whole devices.
	Partition gpu.Partition
	// PerDevice, when not 0, is the GPUs (partitions) one device of the
	// node is, laid out by a sharing mode of partitions (gpuplane simulate
	// --sharing partition:MODE): a pod is then served by its share of a
	// whole device (Served), and its GPU milli count 1/PerDevice of a
	// device (DeviceMilli). 0 (a node as its node list gives it, every
	// node of gpuplane-scheduler): a pod's share is of one GPU.
	PerDevice int
	// CPUMilli and MemoryMiB are the allocatable capacity.
	CPUMilli, MemoryMiB int64
	// CPUFree and MemoryFree are what is not yet allocated.
	CPUFree, MemoryFree int64
	// GPUFree is the free milli-GPU of each GPU, indexed by GPU.
	GPUFree []int64
	// MIGGPUs are the node's MIG-enabled GPUs (EnableMIG) and MIG their
	// instances, indexed by GPU; MIG is nil while no GPU is MIG-enabled.
	// FreeAfter gives the fit rule.
	MIGGPUs GPUSet
	MIG     []MIGGPU
	// MIGOnly are GPUs that are MIG-enabled in the cluster a snapshot
	// read, but simulated whole (a sharing mode other than mig): a pod of
	// nvidia.com/gpu (ResourceGPU) never fits them, as its device plugin
	// serves only their MIG devices.
	MIGOnly GPUSet
	// Shared reports that the node serves its GPUs as time-sliced
	// replicas under nvidia.com/gpu.shared (the device plugin's
	// renameByDefault): only ResourceShared and ResourceAny pods fit them.
	Shared bool
	// Serving is how the node serves its GPUs (GPUServing): by a device
	// plugin's extended resources (the zero value: every node but a
	// snapshot's DRA node), by DRA ResourceSlices, or both. Serves gives
	// the rule.
	Serving GPUServing
	// MIGAsGPU reports that the node's device plugin serves its MIG
	// instances as nvidia.com/gpu (NVIDIA's single MIG strategy) and no
	// nvidia.com/mig-<profile>: a pod asking for a MIG device
	// (ResourceMIG) fits none of its GPUs.
	MIGAsGPU bool
	// ReplicaMilli, when not 0, is the milli-GPU of one nvidia.com/gpu
	// device of the node, a device being less than a GPU: a time-slicing
	// or MPS replica under NVIDIA's default naming (1000/replicas; the
	// device plugin advertises each GPU replicas times, its internal/rm
	// replicas), or a MIG instance under the single strategy (MIGAsGPU;
	// the profile's gpu.MIGShareMilli). A pod asking for nvidia.com/gpu
	// then holds a share of one GPU there (Served). 0 (every node but a
	// snapshot's such node, and every node of gpuplane-scheduler): a
	// device is a GPU.
	ReplicaMilli int64
	// MIGServed, when not 0, are the MIG devices the node's device plugin
	// serves (trace.NodeSpec.MIGServed): bit c for c compute slices. A pod
	// asking for a MIG device (ResourceMIG) of other slices is not served
	// (Serves): NodeResourcesFit finds no such resource on the node. 0:
	// any (every node but a snapshot's mixed-strategy one).
	MIGServed uint8
	// Labels, Taints and Unschedulable (spec.unschedulable, a cordoned
	// node) are what Kubernetes' own filters read (NodeFilter); a pod
	// without a Pod.Filter ignores them.
	Labels        map[string]string
	Taints        []Taint
	Unschedulable bool
	// Pods is the number of pods bound to the node.
	Pods int
	// Affinity counts bound GPU pods by kind, for GPU Clustering:
	// Affinity[0] counts GPU-sharing pods, Affinity[k] pods of k whole GPUs.
	Affinity [MaxGPUsPerNode + 1]int32
	// AffinityKinds is the number of non-zero entries in Affinity.
	AffinityKinds int
	// Version increases on every change of the node's free resources.
	Version uint64
}

// NewNode returns a node with cpuMilli millicores, memoryMiB MiB and gpus
// GPUs of the named model (ignored when gpus is 0), all free, of the
// model's vendor (gpu.VendorOf). A scheduler
// builds a node's state from its allocatable capacity this way, then calls
// Add for every pod bound to it with the GPUs the pod holds.
func NewNode(name, model string, cpuMilli, memoryMiB int64, gpus int) (Node, error) {
	if cpuMilli < 0 || memoryMiB < 0 {
		return Node{}, fmt.Errorf("node %s: negative capacity", name)
	}
	if gpus < 0 || gpus > MaxGPUsPerNode {
		return Node{}, fmt.Errorf("node %s: gpu count %d out of range 0..%d", name, gpus, MaxGPUsPerNode)
	}
	n := Node{Name: name, ModelID: -1, CPUMilli: cpuMilli, MemoryMiB: memoryMiB,
		CPUFree: cpuMilli, MemoryFree: memoryMiB, GPUFree: make([]int64, gpus)}
	if gpus > 0 {
		if model == "" {
			return Node{}, fmt.Errorf("node %s: %d GPUs without a model", name, gpus)
		}
		id, err := gpu.ModelID(model)
		if err != nil {
			return Node{}, fmt.Errorf("node %s: %w", name, err)
		}
		n.Model, n.ModelID, n.Vendor = gpu.ModelName(id), id, gpu.VendorOf(model)
	}
	for i := range n.GPUFree {
		n.GPUFree[i] = MilliGPU
	}
	return n, nil
}

// NewPartitionedNode is NewNode for a node of devices physical devices of
// model in partition mode p: devices × gpu.Partitions(model, p).GPUs GPUs
// (an MI300X in CPX is 8), its Partition p. A mode the model lacks, or
// more than MaxGPUsPerNode GPUs, is an error naming the node.
func NewPartitionedNode(name, model string, p gpu.Partition, cpuMilli, memoryMiB int64, devices int) (Node, error) {
	s, err := gpu.Partitions(model, p)
	if err != nil {
		return Node{}, fmt.Errorf("node %s: %w", name, err)
	}
	if devices > 0 && devices*s.GPUs > MaxGPUsPerNode {
		return Node{}, fmt.Errorf("node %s: %d devices of %d GPUs each (%s %s) are more than %d GPUs", name, devices, s.GPUs, model, p, MaxGPUsPerNode)
	}
	n, err := NewNode(name, model, cpuMilli, memoryMiB, devices*s.GPUs)
	n.Partition = p
	return n, err
}

// DeviceMilli returns m milli-GPU of the node's GPUs in milli of whole
// devices: m/PerDevice on a node of PerDevice partitions per device (1000
// milli of a CPX partition of an MI300X are 125 of the device), else m.
func (n *Node) DeviceMilli(m int64) int64 {
	if n.PerDevice > 1 {
		return m / int64(n.PerDevice)
	}
	return m
}

// GPUs returns the node's GPU count.
func (n *Node) GPUs() int { return len(n.GPUFree) }

// GPUFreeTotal returns the node's free milli-GPU summed over its GPUs.
func (n *Node) GPUFreeTotal() int64 {
	var t int64
	for _, f := range n.GPUFree {
		t += f
	}
	return t
}

// FullyFreeGPUs returns the number of GPUs with nothing allocated.
func (n *Node) FullyFreeGPUs() int {
	c := 0
	for _, f := range n.GPUFree {
		if f == MilliGPU {
			c++
		}
	}
	return c
}

// validSet reports whether gpus holds exactly p.NumGPU GPUs, all of n.
func (n *Node) validSet(p *Pod, gpus GPUSet) bool {
	return gpus.Count() == p.NumGPU && (len(n.GPUFree) >= 64 || uint64(gpus)>>uint(len(n.GPUFree)) == 0)
}

// Add binds pod p to the node on the given GPUs. It returns an error, and
// changes nothing, if p is invalid, if that would over-commit CPU, memory or
// any GPU, if p may not use the node's GPU model, or if gpus does not hold
// exactly NumGPU GPUs of the node. p is taken as the node serves it
// (Served): a pod of nvidia.com/gpu replicas holds one GPU.
func (n *Node) Add(p *Pod, gpus GPUSet) error {
	var buf Pod
	p = n.Served(p, &buf)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	if p.CPUMilli > n.CPUFree || p.MemoryMiB > n.MemoryFree {
		return fmt.Errorf("pod %s does not fit node %s: cpu %d/%d millicores, memory %d/%d MiB free",
			p.Name, n.Name, p.CPUMilli, n.CPUFree, p.MemoryMiB, n.MemoryFree)
	}
	if !n.validSet(p, gpus) {
		return fmt.Errorf("pod %s wants %d GPUs, got set %b on node %s with %d GPUs", p.Name, p.NumGPU, uint64(gpus), n.Name, len(n.GPUFree))
	}
	if p.NumGPU > 0 && !ModelAllowed(n, p) {
		return fmt.Errorf("pod %s may not use GPU model %q of node %s", p.Name, n.Model, n.Name)
	}
	for m := uint64(gpus); m != 0; m &= m - 1 {
		if g := bits.TrailingZeros64(m); !n.fitsGPU(p, g) {
			if p.MIGProfile != 0 {
				return fmt.Errorf("pod %s wants MIG profile %d or a whole GPU on GPU %d of node %s, %d milli-GPU free", p.Name, p.MIGProfile-1, g, n.Name, n.GPUFree[g])
			}
			return fmt.Errorf("pod %s wants %d milli-GPU on GPU %d of node %s, %d free", p.Name, p.GPUMilli, g, n.Name, n.GPUFree[g])
		}
	}
	for m := uint64(gpus); m != 0; m &= m - 1 {
		n.take(p, bits.TrailingZeros64(m), 1)
	}
	n.CPUFree -= p.CPUMilli
	n.MemoryFree -= p.MemoryMiB
	n.Pods++
	n.addAffinity(p, 1)
	n.Version++
	return nil
}

// Remove returns pod p's resources to the node; gpus must be the set Add
// was given. It returns an error, and changes nothing, if that would free
// more than the node's capacity or gpus does not hold exactly NumGPU GPUs of
// the node. p is taken as the node serves it (Served), as Add took it.
func (n *Node) Remove(p *Pod, gpus GPUSet) error {
	var buf Pod
	p = n.Served(p, &buf)
	if n.CPUFree+p.CPUMilli > n.CPUMilli || n.MemoryFree+p.MemoryMiB > n.MemoryMiB || n.Pods == 0 {
		return fmt.Errorf("release of pod %s would exceed node %s capacity", p.Name, n.Name)
	}
	if !n.validSet(p, gpus) {
		return fmt.Errorf("release of pod %s: GPU set %b does not match %d GPUs", p.Name, uint64(gpus), p.NumGPU)
	}
	for m := uint64(gpus); m != 0; m &= m - 1 {
		if g := bits.TrailingZeros64(m); !n.canRelease(p, g) {
			return fmt.Errorf("release of pod %s would free GPU %d of node %s beyond %d milli-GPU or a MIG instance it does not hold", p.Name, g, n.Name, MilliGPU)
		}
	}
	for m := uint64(gpus); m != 0; m &= m - 1 {
		n.take(p, bits.TrailingZeros64(m), -1)
	}
	n.CPUFree += p.CPUMilli
	n.MemoryFree += p.MemoryMiB
	n.Pods--
	n.addAffinity(p, -1)
	n.Version++
	return nil
}

func (n *Node) addAffinity(p *Pod, d int32) {
	k, ok := AffinityKey(p)
	if !ok {
		return
	}
	before := n.Affinity[k]
	n.Affinity[k] += d
	switch {
	case before == 0 && n.Affinity[k] != 0:
		n.AffinityKinds++
	case before != 0 && n.Affinity[k] == 0:
		n.AffinityKinds--
	}
}
