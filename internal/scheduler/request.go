// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// The request form. Whole GPUs are NVIDIA's extended resource
// (nvidia.com/gpu: N), AMD's (amd.com/gpu: N, a partition of a
// partitioned GPU being one) or Intel's Gaudi (habana.ai/gaudi: N), as
// their device plugins name them. A share of one NVIDIA GPU is the extended resource
// gpuplane.io/gpu-milli (1..1000 milli-GPU, the openb trace's gpu_milli),
// so that the kubelet, ResourceQuota and Kueue account for it like any
// other resource; an annotation would be invisible to all three. The GPU
// model constraint is the openb gpu_spec as the annotation
// gpuplane.io/gpu-model. The names and the rule live in api/resource,
// which the simulator's snapshot reader shares.

// podRequest translates a pod's requests into the placement core's Pod:
// CPU in millicores and memory in MiB as the kubelet sums them
// (component-helpers' PodRequests: containers, init containers, overhead),
// GPUs from nvidia.com/gpu or gpuplane.io/gpu-milli by api/resource's
// GPURequestOf, or from AMD's amd.com/gpu or Intel's habana.ai/gaudi by its
// VendorRequest (vendorRequest), models from the gpuplane.io/gpu-model
// annotation. It
// returns an error for a request the scheduler cannot honour; the error
// text goes into the pod's event, so it quotes a user's value cut short
// (quote).
func podRequest(p *v1.Pod) (cluster.Pod, error) {
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	out := cluster.Pod{Name: p.Namespace + "/" + p.Name}
	if q, ok := req[v1.ResourceCPU]; ok {
		out.CPUMilli = q.MilliValue()
	}
	if q, ok := req[v1.ResourceMemory]; ok {
		out.MemoryMiB = ceilMiB(q)
	}
	view := gpuresource.PodRequests(gpuView(p))
	g, err := gpuresource.GPURequestOf(view)
	var re *gpuresource.RequestError
	switch {
	case errors.As(err, &re) && re.Reason == gpuresource.ReasonBoth:
		return out, fmt.Errorf("%s applies to one GPU, but %s is %d: ask for whole GPUs or a share, not both", gpuresource.GPUMilli, gpuresource.GPU, re.GPUs)
	case errors.As(err, &re) && re.Reason == gpuresource.ReasonMilliRange:
		// The integer, not the Quantity: 5000, not 5k.
		return out, fmt.Errorf("%s %d out of range 1..%d (a share of one GPU; use %s for more)", gpuresource.GPUMilli, re.Milli, gpuresource.MilliPerGPU, gpuresource.GPU)
	case err != nil:
		return out, err
	}
	out.NumGPU, out.GPUMilli = int(g.GPUs), g.Milli
	if err := vendorRequest(view, &out); err != nil {
		return out, err
	}
	if out.NumGPU > 0 && view[gpuresource.GPU] > 0 {
		// nvidia.com/gpu: k devices, which a node of replicas or
		// single-strategy MIG instances serves as a share of one GPU
		// (cluster.Node.Served); a share of gpuplane.io/gpu-milli fits
		// any GPU by its share.
		out.Resource = cluster.ResourceGPU
	}
	if _, milli := view[gpuresource.GPUMilli]; milli {
		// A share of gpuplane.io/gpu-milli: NVIDIA nodes only, where
		// gpuplane's agent advertises it.
		out.Resource = cluster.ResourceMilli
	}
	if spec, ok := p.Annotations[gpuresource.AnnotationGPUModel]; ok {
		// A pod with ResourceClaims may ask its GPUs there
		// (addClaimGPUs): its annotation is checked, and applied then.
		if out.NumGPU == 0 && len(p.Spec.ResourceClaims) == 0 {
			return out, fmt.Errorf("annotation %s=%s on a pod that asks for no GPU", gpuresource.AnnotationGPUModel, quote(spec))
		}
		models, err := parseModels(spec)
		if err != nil {
			return out, err
		}
		if out.NumGPU > 0 {
			out.Models = models
		}
	}
	return out, nil
}

// vendorRequest reads a pod's amd.com/gpu or habana.ai/gaudi devices, of
// its effective GPU requests view, into out: that many whole devices of
// an AMD or Intel node only (cluster.ResourceAMD, ResourceGaudi), by
// api/resource's VendorRequest, the snapshot reader's rule too.
func vendorRequest(view map[string]int64, out *cluster.Pod) error {
	name, n, err := gpuresource.VendorRequest(view)
	if err != nil || name == "" {
		return err
	}
	kind, _ := cluster.ResourceOf(name)
	out.NumGPU, out.GPUMilli, out.Resource = int(n), cluster.MilliGPU, kind
	return nil
}

// parseModels parses a gpu_spec of catalog model names. A name the catalog
// does not know is an error: it can never match a node.
func parseModels(spec string) (cluster.ModelSet, error) {
	var s cluster.ModelSet
	for _, name := range strings.Split(spec, "|") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := catalog.Get(name); !ok {
			return 0, fmt.Errorf("annotation %s: unknown GPU model %s (known: %s)", gpuresource.AnnotationGPUModel, quote(name), strings.Join(catalog.Names(), ", "))
		}
		id, err := gpu.ModelID(name)
		if err != nil {
			return 0, err
		}
		s |= 1 << uint(id)
	}
	if s == 0 {
		return 0, fmt.Errorf("annotation %s is empty", gpuresource.AnnotationGPUModel)
	}
	return s, nil
}

// gpuView is the accelerator part of pod p's containers and overhead, as
// api/resource's GPURequestOf and VendorRequest read it: the requests of
// every accelerator resource (gpuresource.IsAccelerator: nvidia.com/gpu,
// gpuplane.io/gpu-milli, amd.com/gpu, habana.ai/gaudi, ...;
// Quantity.Value, rounded up), as
// component-helpers' PodRequests reads them (spec requests, which the API
// server defaults from limits).
func gpuView(p *v1.Pod) gpuresource.Pod {
	view := gpuresource.Pod{
		Containers: make([]gpuresource.Container, 0, len(p.Spec.InitContainers)+len(p.Spec.Containers)),
		Overhead:   gpuRequests(p.Spec.Overhead),
	}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		view.Containers = append(view.Containers, gpuresource.Container{Init: true, Sidecar: sidecar, Requests: gpuRequests(c.Resources.Requests)})
	}
	for i := range p.Spec.Containers {
		view.Containers = append(view.Containers, gpuresource.Container{Requests: gpuRequests(p.Spec.Containers[i].Resources.Requests)})
	}
	return view
}

// gpuRequests returns the accelerator resources of l
// (gpuresource.IsAccelerator) in devices, gpuplane.io/gpu-milli in
// milli-GPU; nil when l has none.
func gpuRequests(l v1.ResourceList) map[string]int64 {
	var m map[string]int64
	for name, q := range l {
		if gpuresource.IsAccelerator(string(name)) {
			if m == nil {
				m = map[string]int64{}
			}
			m[string(name)] = q.Value()
		}
	}
	return m
}

// ceilMiB converts a memory quantity to MiB, rounding up so that a pod is
// never accounted smaller than it asked.
func ceilMiB(q resource.Quantity) int64 {
	b := q.Value()
	return (b + (1<<20 - 1)) >> 20
}

// assignment is the scheduler's choice for one pod: the GPUs it holds on
// its node.
type assignment struct {
	gpus cluster.GPUSet
}

// parseAssignment reads gpuresource.AnnotationGPUs ("0,3"); ok is false when absent.
func parseAssignment(p *v1.Pod) (cluster.GPUSet, bool, error) {
	s, ok := p.Annotations[gpuresource.AnnotationGPUs]
	if !ok {
		return 0, false, nil
	}
	var set cluster.GPUSet
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= cluster.MaxGPUsPerNode {
			return 0, true, fmt.Errorf("pod %s/%s: annotation %s=%s: bad GPU index %s", p.Namespace, p.Name, gpuresource.AnnotationGPUs, quote(s), quote(f))
		}
		set |= 1 << uint(i)
	}
	return set, true, nil
}

// formatGPUs writes a GPU set as gpuresource.AnnotationGPUs does.
func formatGPUs(s cluster.GPUSet) string {
	idx := s.Indices()
	parts := make([]string, len(idx))
	for i, g := range idx {
		parts[i] = strconv.Itoa(g)
	}
	return strings.Join(parts, ",")
}
