// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"sort"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// AMD Instinct and Intel Gaudi nodes run no gpuplane node agent, so no
// allocation series names their pods. Where the vendor's exporter names a
// pod (exporter.go), that prices it; else its requests do, as
// kube-state-metrics publishes them
// (kubernetes/kube-state-metrics internal/store/pod.go and node.go): an
// extended resource's request with its name sanitised as a Prometheus
// label value ('.' and '/' as '_': amd.com/gpu is amd_com_gpu, unit
// "integer"), and a node's labels as label_<sanitised key>, which
// kube-state-metrics writes only for the keys its
// --metric-labels-allowlist names (nodes=[amd.com/gpu.product-name,
// amd.com/gpu.compute-memory-partition,gpuplane.io/gpu.model]).
const (
	// KSMPodRequests is kube-state-metrics' per-container request,
	// labelled namespace, pod, container, node, resource, unit.
	KSMPodRequests = "kube_pod_container_resource_requests"
	// KSMNodeLabels is kube-state-metrics' node labels, labelled node and
	// label_<key> per allowed key.
	KSMNodeLabels = "kube_node_labels"
	// KSMContainerRunning is 1 while a container runs, labelled
	// namespace, pod, container: a request counts only then, as a
	// finished pod's requests stay published until the pod is deleted.
	KSMContainerRunning = "kube_pod_container_status_running"
)

// vendorResources are the requests read, by kube-state-metrics' resource
// label: AMD's device plugin's amd.com/gpu and Intel's habana.ai/gaudi.
var vendorResources = map[string]string{"amd_com_gpu": resource.AMDGPU, "habana_ai_gaudi": resource.Gaudi}

// The node labels read, as kube-state-metrics names them.
const (
	ksmAMDProduct   = "label_amd_com_gpu_product_name"
	ksmAMDPartition = "label_amd_com_gpu_compute_memory_partition"
	ksmModel        = "label_gpuplane_io_gpu_model"
)

// vendorNode is a node's model and partition mode, from its labels.
type vendorNode struct {
	model string
	part  gpu.Partition
}

// request is one container's request series of a vendor resource, on the
// grid: v[i] devices at grid index idx[i].
type request struct {
	ns, pod, container, node, res string
	idx                           []int64
	v                             []float64
}

// addVendor takes a kube-state-metrics series: a node's labels, or a
// container's request of amd.com/gpu or habana.ai/gaudi (others are
// skipped).
func (b *builder) addVendor(metric, key string, l map[string]string, t []int64, v []float64) {
	if metric == KSMContainerRunning {
		c := l["namespace"] + "/" + l["pod"] + "/" + l["container"]
		for i, x := range t {
			if j := b.w.index(x); v[i] == 1 && j >= 0 && j < int64(b.n) {
				if b.running[c] == nil {
					b.running[c] = map[int64]bool{}
				}
				b.running[c][j] = true
			}
		}
		return
	}
	if metric == KSMNodeLabels {
		n := vendorNode{model: l[ksmModel]}
		if m, ok := gpu.FromLabel(l[ksmAMDProduct]); ok {
			n.model = m.Name
		}
		if p, err := gpu.ParsePartition(l[ksmAMDPartition]); err == nil {
			n.part = p
		} else {
			b.warn(fmt.Sprintf("node %s: %s %q: %v; its GPUs priced as whole devices", l["node"], resource.LabelAMDPartition, l[ksmAMDPartition], err))
		}
		if n.model != "" {
			b.vendorNodes[l["node"]] = n
		}
		return
	}
	res, ok := vendorResources[l["resource"]]
	if !ok || l["node"] == "" {
		return // another resource, or a pod not bound to a node
	}
	r := b.requests[key]
	if r == nil {
		r = &request{ns: l["namespace"], pod: l["pod"], container: l["container"], node: l["node"], res: res}
		b.requests[key] = r
		b.requestOrder = append(b.requestOrder, key)
	}
	for i, x := range t {
		if j := b.w.index(x); j >= 0 && j < int64(b.n) {
			r.idx, r.v = append(r.idx, j), append(r.v, v[i])
		}
	}
}

// vendorHoldings returns the GPUs and holdings of the vendor requests: per
// run of consecutive steps at which a running container
// (KSMContainerRunning 1) requests n > 0 devices,
// n GPUs of its node's model that live for the run and that the pod holds
// whole for it, so that each costs its price over the run and none is
// idle (kube-state-metrics tells no node's free devices). A step at which
// a vendor's exporter names the pod (b.named, exporter.go) is the
// exporter's, not the request's. A request on a node whose model is not
// known is left out, with a warning.
func (b *builder) vendorHoldings() ([]alloc.GPU, []alloc.Holding) {
	var gpus []alloc.GPU
	var hs []alloc.Holding
	sort.Strings(b.requestOrder)
	for _, key := range b.requestOrder {
		r := b.requests[key]
		n, ok := b.vendorNodes[r.node]
		if !ok {
			b.warn(fmt.Sprintf("%s/%s requests %s on node %s, whose model kube-state-metrics does not label (%s or %s): not priced", r.ns, r.pod, r.res, r.node, ksmAMDProduct, ksmModel))
			continue
		}
		run := b.running[r.ns+"/"+r.pod+"/"+r.container]
		var idx []int64
		var v []float64
		for i, j := range r.idx {
			if run[j] && r.v[i] > 0 && !b.named[r.ns+"/"+r.pod][j] {
				idx, v = append(idx, j), append(v, r.v[i])
			}
		}
		r.idx, r.v = idx, v
		for i := 0; i < len(r.idx); {
			j := i
			for j+1 < len(r.idx) && r.idx[j+1] == r.idx[j]+1 && r.v[j+1] == r.v[i] {
				j++
			}
			start, end := b.w.From+r.idx[i]*b.w.Step, b.w.From+(r.idx[j]+1)*b.w.Step
			for k := 0; k < int(r.v[i]); k++ {
				uuid := fmt.Sprintf("%s/%s/%s/%s@%d#%d", r.node, r.res, r.ns, r.pod, start, k)
				gpus = append(gpus, alloc.GPU{Node: r.node, UUID: uuid, Model: n.model, Partition: n.part, Start: start, End: min(end, b.w.To)})
				hs = append(hs, alloc.Holding{Namespace: r.ns, Pod: r.pod, GPU: uuid, Share: alloc.Share{Kind: alloc.Whole}, Start: start, End: min(end, b.w.To)})
			}
			i = j + 1
		}
	}
	return gpus, hs
}
