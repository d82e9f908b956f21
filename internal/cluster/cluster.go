// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package cluster holds node and GPU allocation state: CPU (millicores),
// memory (MiB) and, per GPU, the free share in milli-GPU (1000 = one whole
// GPU). It is the state that internal/placement decides on and that the
// simulator and the scheduler plugins mutate; it refuses any allocation that
// would over-commit a node.
//
// GPU models are identified by the process-wide IDs of internal/gpu
// (gpu.ModelID), so nodes and pods built anywhere in the process agree.
package cluster

import (
	"fmt"
)

// Cluster is a set of nodes.
type Cluster struct {
	Nodes []Node
}

// New returns an empty cluster.
func New() *Cluster { return &Cluster{} }

// AddNode adds a node with the given capacity (millicores, MiB) and gpus
// GPUs of one model, all free (see NewNode). It returns the node's index.
func (c *Cluster) AddNode(name string, cpuMilli, memoryMiB int64, gpus int, model string) (int, error) {
	n, err := NewNode(name, model, cpuMilli, memoryMiB, gpus)
	if err != nil {
		return 0, err
	}
	c.Nodes = append(c.Nodes, n)
	return len(c.Nodes) - 1, nil
}

// TotalGPUMilli returns the cluster's GPU capacity in milli-GPU, a node
// of partitions laid out by a sharing mode in whole devices
// (Node.DeviceMilli).
func (c *Cluster) TotalGPUMilli() int64 {
	var t int64
	for i := range c.Nodes {
		t += c.Nodes[i].DeviceMilli(int64(len(c.Nodes[i].GPUFree)) * MilliGPU)
	}
	return t
}

// FreeGPUMilli returns the cluster's unallocated GPU capacity in
// milli-GPU, as TotalGPUMilli counts it.
func (c *Cluster) FreeGPUMilli() int64 {
	var t int64
	for i := range c.Nodes {
		t += c.Nodes[i].DeviceMilli(c.Nodes[i].GPUFreeTotal())
	}
	return t
}

// Allocate binds the pod to node i on the given GPUs: Node.Add on node i.
func (c *Cluster) Allocate(i int, p *Pod, gpus GPUSet) error {
	if i < 0 || i >= len(c.Nodes) {
		return fmt.Errorf("node index %d out of range", i)
	}
	return c.Nodes[i].Add(p, gpus)
}

// Release returns a pod's resources to node i: Node.Remove on node i.
func (c *Cluster) Release(i int, p *Pod, gpus GPUSet) error {
	if i < 0 || i >= len(c.Nodes) {
		return fmt.Errorf("node index %d out of range", i)
	}
	return c.Nodes[i].Remove(p, gpus)
}
