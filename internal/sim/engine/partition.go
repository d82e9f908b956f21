// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// PartitionUse is the AMD nodes of one model in a run of a partition mode
// (--sharing partition:MODE).
type PartitionUse struct {
	// Sharing is the run's mode (Sharing.String).
	Sharing string `json:"sharing"`
	Model   string `json:"model"`
	Nodes   int    `json:"nodes"`
	// Partition is the mode the nodes are laid out in ("CPX/NPS1"); ""
	// when the model has not the run's mode (NoMode says why) and its
	// nodes are as the node list gives them.
	Partition string `json:"partition"`
	NoMode    string `json:"no_mode,omitempty"`
	// DevicesPerNode physical devices, GPUsPerNode schedulable GPUs
	// (partitions), each of GPUMemoryMiB MiB and priced USDPerGPUHour
	// (its share of the device's price).
	DevicesPerNode int     `json:"devices_per_node"`
	GPUsPerNode    int     `json:"gpus_per_node"`
	GPUMemoryMiB   int64   `json:"gpu_memory_mib"`
	USDPerGPUHour  float64 `json:"usd_per_gpu_hour" round:"cent"`
	// MaxShareMilli is the largest share of one device (milli-GPU) a
	// partition holds, 1000 / partitions per device; SharesTooLarge the
	// workload's pods asking a larger share of one GPU, which cannot run
	// on these nodes; WholePods the pods of whole GPUs, each of which
	// takes GPUs per device × its GPUs partitions here.
	MaxShareMilli  int64 `json:"max_share_milli"`
	SharesTooLarge int   `json:"shares_too_large"`
	WholePods      int   `json:"whole_pods"`
	// Pods is the workload's pods.
	Pods int `json:"pods"`
}

// partitioned lays out every AMD node of v's template whose model has
// partition mode p in p: its devices (its GPUs over the GPUs per device
// of its node list's mode) × gpu.Partitions(model, p).GPUs GPUs
// (cluster.Node.PerDevice), each priced at its share of the device
// (cost.Prices.PartitionUSDPerHour). There a pod is served by its share of
// a whole device as AMD's device plugin serves partitions
// (cluster.Node.Served). The nodes of an AMD model without the mode keep
// the node list's layout. v.partitions says what was done, by model. It
// is an error when no node takes the mode, when an AMD node is given
// partitioned already (its pods' amd.com/gpu count its partitions) and
// when a pod claims AMD devices by DRA.
func (v *Workload) partitioned(p gpu.Partition) error {
	idx := map[int]int{} // model ID -> v.partitions index
	v.partitions = nil
	for i := range v.template.Nodes {
		n := &v.template.Nodes[i]
		if n.ModelID < 0 || n.Vendor != gpu.AMD {
			continue
		}
		was, err := gpu.Partitions(n.Model, n.Partition)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		if whole, _ := gpu.Partitions(n.Model, gpu.Partition{}); was.GPUs > whole.GPUs {
			// Its pods' amd.com/gpu count partitions of the given
			// layout, which a share of a whole device cannot express.
			return fmt.Errorf("node %s: its %s are given in %s, each amd.com/gpu a partition, and a partition mode lays out whole devices: give the AMD nodes whole (SPX/NPS1) to compare partition modes", n.Name, n.Model, n.Partition)
		}
		u, ok := idx[n.ModelID]
		if !ok {
			u = len(v.partitions)
			idx[n.ModelID] = u
			v.partitions = append(v.partitions, PartitionUse{Sharing: Sharing{Mode: "exclusive", Partition: p}.String(), Model: n.Model})
		}
		use := &v.partitions[u]
		use.Nodes++
		s, err := gpu.Partitions(n.Model, p)
		if err != nil {
			use.NoMode = err.Error()
			continue
		}
		devices := n.GPUs() / was.GPUs
		if devices*s.GPUs > cluster.MaxGPUsPerNode {
			return fmt.Errorf("node %s: %d devices of %s in %s are %d GPUs, more than %d", n.Name, devices, n.Model, p, devices*s.GPUs, cluster.MaxGPUsPerNode)
		}
		n.GPUFree = make([]int64, devices*s.GPUs)
		for g := range n.GPUFree {
			n.GPUFree[g] = cluster.MilliGPU
		}
		n.Partition, n.PerDevice = p, s.GPUs
		use.Partition, use.DevicesPerNode, use.GPUsPerNode, use.GPUMemoryMiB = p.String(), devices, devices*s.GPUs, s.MemoryMiB
		use.MaxShareMilli = cluster.MilliGPU / int64(s.GPUs)
	}
	laid := 0
	for _, u := range v.partitions {
		laid += min(len(u.Partition), 1) * u.Nodes
	}
	if laid == 0 {
		return fmt.Errorf("no node of the cluster is of an AMD model that has partition mode %s", p)
	}
	for _, q := range v.askedPods() {
		if q.Claim && q.Resource.Vendor() == gpu.AMD {
			return fmt.Errorf("a partition mode models AMD's device plugin, and pod %s claims AMD devices by DRA (gpu.amd.com publishes its own partitions)", q.Name)
		}
	}
	v.prices = modelPrices(v.template, v.priceList)
	v.countPartitionPods()
	return nil
}

// countPartitionPods fills each laid-out PartitionUse's USD per GPU-hour
// and counts of the workload's pods (as asked) that no partition holds
// and of whole GPUs.
func (v *Workload) countPartitionPods() {
	for k := range v.partitions {
		u := &v.partitions[k]
		if u.Partition == "" {
			continue
		}
		id, _ := gpu.ModelID(u.Model)
		u.USDPerGPUHour, u.Pods = v.price(id), len(v.askedPods())
		for _, p := range v.askedPods() {
			switch {
			case p.NumGPU == 0:
			case p.IsGPUShare() && p.GPUMilli > u.MaxShareMilli:
				u.SharesTooLarge++
			case !p.IsGPUShare():
				u.WholePods++
			}
		}
	}
}

// Partitions returns the AMD nodes by model of a workload made by
// WithSharing with a partition mode (nil otherwise).
func (w *Workload) Partitions() []PartitionUse { return w.partitions }
