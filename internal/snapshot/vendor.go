// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"fmt"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
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
//     plugin labels none), else unlabelled-gaudi
//
// (gpu.ReadVendorDevices, which gpuplane-scheduler shares).
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
		n.Vendor, n.GPUs = gpu.Intel, int(gaudi)
	default:
		n.Vendor, n.GPUs = gpu.AMD, int(amd)
	}
	d, err := gpu.ReadVendorDevices(n.Vendor, labels)
	n.Model, n.Product, n.Partition = d.Model, d.Product, d.Partition
	var le *gpu.LabelError
	if errors.As(err, &le) {
		return true, fmt.Errorf("%s.metadata.labels%s: %v", path, field(le.Label), le.Err)
	}
	if len(n.Model) > trace.MaxModelLen {
		label := resource.LabelAMDProductName
		if n.Vendor == gpu.Intel {
			label = resource.LabelGPUModel
		}
		return true, fmt.Errorf("%s.metadata.labels%s: longer than %d characters", path, field(label), trace.MaxModelLen)
	}
	return true, nil
}

// vendorRequest reads a pod's amd.com/gpu or habana.ai/gaudi request
// into p: that many whole devices of the vendor (cluster.ResourceAMD,
// ResourceGaudi). A pod that asks for them with another accelerator
// request is not modelled.
func vendorRequest(path, name string, req map[string]int64, p *Pod) error {
	k, v, err := resource.VendorRequest(req)
	if err != nil {
		return notModelled{fmt.Sprintf("%s.spec.containers: pod %s asks for %v: not simulated", path, trace.Quote(name), err)}
	}
	if k != "" {
		kind, _ := cluster.ResourceOf(k)
		p.NumGPU, p.GPUMilli, p.Resource = int8(v), cluster.MilliGPU, kind
	}
	return nil
}

// amdLayoutWarning says when an AMD node's amd.com/gpu count does not
// match its layout as read: a count that is not a whole number of
// devices in the node's partition mode (gpu.Partitions: 7 in CPX, 8 a
// device), or, without AMD's partition label (the node labeller writes
// it only when every GPU is in one mode), more GPUs than the model's
// typical server has devices: partitions read as whole devices, each
// priced as one. "" when neither.
func (n *Node) amdLayoutWarning() string {
	if n.Vendor != gpu.AMD || n.GPUs == 0 {
		return ""
	}
	s, err := gpu.Partitions(n.Model, n.Partition)
	if err != nil {
		return ""
	}
	if n.GPUs%s.GPUs != 0 {
		return fmt.Sprintf("node %s: %d amd.com/gpu in %s are not a whole number of %s devices (%d GPUs each): simulated as %d GPUs", trace.Quote(n.Name), n.GPUs, n.Partition, n.Model, s.GPUs, n.GPUs)
	}
	if srv, ok := gpu.TypicalServer(n.Model); ok && n.Partition == (gpu.Partition{}) && n.GPUs > srv.GPUs {
		return fmt.Sprintf("node %s: %d amd.com/gpu of %s and no %s label: simulated as %d whole devices, each priced as one, though a %s server has %d (partitions in mixed modes?)", trace.Quote(n.Name), n.GPUs, n.Model, resource.LabelAMDPartition, n.GPUs, n.Model, srv.GPUs)
	}
	return ""
}
