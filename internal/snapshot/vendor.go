// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// unlabelledGaudi is the model of a Gaudi node without gpuplane's model
// label (Intel's Gaudi device plugin labels no model), unlabelledAMD that
// of an AMD node without its node labeller's product name.
const (
	unlabelledGaudi = "unlabelled-gaudi"
	unlabelledAMD   = "unlabelled-amd"
)

// readVendor reads a node whose accelerators another vendor's device
// plugin serves (the node has none of NVIDIA's, nvidia > 0 otherwise):
//   - amd.com/gpu (AMD's device plugin, single naming strategy): one GPU
//     per device it advertises, a partition of a partitioned GPU being
//     one; the model of AMD's node labeller's amd.com/gpu.product-name
//     ("AMD_Instinct_MI300X", gpu.ModelOfProduct), the partition mode of
//     its amd.com/gpu.compute-memory-partition ("cpx_nps1");
//   - habana.ai/gaudi (Intel's Gaudi device plugin): one GPU per Gaudi,
//     the model of gpuplane's gpuplane.io/gpu.model label (Intel's
//     plugin labels none), else unlabelled-gaudi.
//
// It returns false for a node with neither; a node with two vendors'
// resources is an error.
func (n *Node) readVendor(path, rpath string, res, labels map[string]string, nvidia int64) (bool, error) {
	amd, _, err := quantity(rpath, res, resource.AMDGPU, false)
	if err != nil {
		return false, err
	}
	gaudi, _, err := quantity(rpath, res, resource.Gaudi, false)
	if err != nil {
		return false, err
	}
	switch {
	case amd == 0 && gaudi == 0:
		return false, nil
	case nvidia > 0 || amd > 0 && gaudi > 0:
		return true, fmt.Errorf("%s: a node that serves accelerators of two vendors is not simulated", rpath)
	case amd > cluster.MaxGPUsPerNode || gaudi > cluster.MaxGPUsPerNode:
		return true, fmt.Errorf("%s: %d accelerators, more than %d", rpath, amd+gaudi, cluster.MaxGPUsPerNode)
	case gaudi > 0:
		n.Vendor, n.GPUs, n.Model = gpu.Intel, int(gaudi), unlabelledGaudi
		if m, ok := labels[resource.LabelGPUModel]; ok {
			n.Model = gpu.Canonical(m)
		}
		if m, known := gpu.Lookup(n.Model); known && m.Vendor != gpu.Intel {
			return true, fmt.Errorf("%s.metadata.labels%s: model %s is %s's, and the node serves habana.ai/gaudi", path, field(resource.LabelGPUModel), m.Name, m.Vendor)
		}
		return true, nil
	}
	n.Vendor, n.GPUs, n.Model = gpu.AMD, int(amd), unlabelledAMD
	if p, ok := labels[resource.LabelAMDProductName]; ok {
		n.Product, n.Model = p, gpu.ModelOfProduct(p)
	}
	part, err := gpu.ParsePartition(labels[resource.LabelAMDPartition])
	if _, known := gpu.Lookup(n.Model); known && err == nil {
		// The mode of a catalogued model must be one it has; another
		// model's GPUs are what amd.com/gpu counts, unpriced.
		_, err = gpu.Partitions(n.Model, part)
		n.Partition = part
	}
	if err != nil {
		return true, fmt.Errorf("%s.metadata.labels%s: %v", path, field(resource.LabelAMDPartition), err)
	}
	if len(n.Model) > trace.MaxModelLen {
		return true, fmt.Errorf("%s.metadata.labels%s: longer than %d characters", path, field(resource.LabelAMDProductName), trace.MaxModelLen)
	}
	return true, nil
}

// vendorRequest reads a pod's amd.com/gpu or habana.ai/gaudi request
// into p: that many whole devices of the vendor (cluster.ResourceAMD,
// ResourceGaudi). A pod that asks for them with another accelerator
// request is not modelled.
func vendorRequest(path, name string, req map[string]int64, p *Pod) error {
	for _, k := range []string{resource.AMDGPU, resource.Gaudi} {
		v := req[k]
		if v == 0 {
			continue
		}
		if p.NumGPU > 0 || v > cluster.MaxGPUsPerNode {
			return notModelled{fmt.Sprintf("%s.spec.containers: pod %s asks for %s %d with another accelerator request, or more than %d: not simulated", path, trace.Quote(name), k, v, cluster.MaxGPUsPerNode)}
		}
		kind, _ := cluster.ResourceOf(k)
		p.NumGPU, p.GPUMilli, p.Resource = int8(v), cluster.MilliGPU, kind
	}
	return nil
}
