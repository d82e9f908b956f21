package scheduler

import (
	"fmt"
	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// The request form. Whole GPUs are NVIDIA's extended resource
// (nvidia.com/gpu: N). A share of one GPU is the extended resource
// gpuplane.io/gpu-milli (1..1000 milli-GPU, the openb trace's gpu_milli),
// so that the kubelet, ResourceQuota and Kueue account for it like any
// other resource; an annotation would be invisible to all three. The GPU
// model constraint is the openb gpu_spec as an annotation, since it is a
// choice among several label values that a nodeSelector cannot express.
const (
	// ResourceGPU is NVIDIA's whole-GPU resource.
	ResourceGPU v1.ResourceName = configv1.ResourceGPU
	// ResourceGPUMilli is a share of one GPU in milli-GPU (1000 = one GPU).
	ResourceGPUMilli v1.ResourceName = configv1.ResourceGPUMilli
	// AnnotationGPUModel restricts the GPU models a pod may use: catalog
	// names joined by '|', e.g. "A100-80GB|H100-80GB" (openb gpu_spec).
	AnnotationGPUModel = "gpuplane.io/gpu-model"
	// LabelGPUProduct is gpu-feature-discovery's product label, written by
	// the node agent (e.g. "NVIDIA-A100-SXM4-80GB", or a catalog name).
	LabelGPUProduct = "nvidia.com/gpu.product"
)

// The scheduler's choice, written on the pod with its binding and read back when
// the scheduler rebuilds per-GPU state from bound pods (after a restart
// too). The node agent's Allocate gives the container exactly these GPUs.
// Their one home is api/config/v1, which the node agent reads too.
const (
	// AnnotationGPUs lists the chosen GPU indices of the node, e.g. "0,3".
	AnnotationGPUs = configv1.AnnotationGPUs
	// AnnotationGPUUUIDs lists the chosen GPUs' UUIDs in the same order,
	// when the node publishes them (AnnotationNodeGPUUUIDs).
	AnnotationGPUUUIDs = configv1.AnnotationGPUUUIDs
	// AnnotationGPUShare is the milli-GPU the pod holds on each chosen GPU.
	AnnotationGPUShare = configv1.AnnotationGPUShare
	// AnnotationNodeGPUUUIDs on a Node lists its GPUs' UUIDs in index
	// order, comma-separated (written by the node agent).
	AnnotationNodeGPUUUIDs = configv1.AnnotationNodeGPUUUIDs
)

// podRequest translates a pod's requests into the placement core's Pod:
// CPU in millicores and memory in MiB as the kubelet sums them
// (component-helpers' PodRequests: containers, init containers, overhead),
// GPUs from nvidia.com/gpu or gpuplane.io/gpu-milli, models from the
// gpuplane.io/gpu-model annotation. It returns an error for a request the
// scheduler cannot honour; the error text goes into the pod's event.
func podRequest(p *v1.Pod) (cluster.Pod, error) {
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	out := cluster.Pod{Name: p.Namespace + "/" + p.Name}
	if q, ok := req[v1.ResourceCPU]; ok {
		out.CPUMilli = q.MilliValue()
	}
	if q, ok := req[v1.ResourceMemory]; ok {
		out.MemoryMiB = ceilMiB(q)
	}
	whole, hasWhole := req[ResourceGPU]
	milli, hasMilli := req[ResourceGPUMilli]
	switch {
	case hasMilli && hasWhole && whole.Value() > 0:
		return out, fmt.Errorf("%s applies to one GPU, but %s is %s: ask for whole GPUs or a share, not both", ResourceGPUMilli, ResourceGPU, whole.String())
	case hasMilli:
		m := milli.Value()
		if m < 1 || m > cluster.MilliGPU {
			return out, fmt.Errorf("%s %s out of range 1..1000 (a share of one GPU; use %s for more)", ResourceGPUMilli, milli.String(), ResourceGPU)
		}
		out.NumGPU, out.GPUMilli = 1, m
	case hasWhole && whole.Value() > 0:
		n := whole.Value()
		if n > cluster.MaxGPUsPerNode {
			return out, fmt.Errorf("%s %d above %d", ResourceGPU, n, cluster.MaxGPUsPerNode)
		}
		out.NumGPU, out.GPUMilli = int(n), cluster.MilliGPU
	}
	if spec, ok := p.Annotations[AnnotationGPUModel]; ok {
		if out.NumGPU == 0 {
			return out, fmt.Errorf("annotation %s=%q on a pod that asks for no GPU", AnnotationGPUModel, spec)
		}
		models, err := parseModels(spec)
		if err != nil {
			return out, err
		}
		out.Models = models
	}
	return out, nil
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
			return 0, fmt.Errorf("annotation %s: unknown GPU model %q (known: %s)", AnnotationGPUModel, name, strings.Join(catalog.Names(), ", "))
		}
		id, err := gpu.ModelID(name)
		if err != nil {
			return 0, err
		}
		s |= 1 << uint(id)
	}
	if s == 0 {
		return 0, fmt.Errorf("annotation %s is empty", AnnotationGPUModel)
	}
	return s, nil
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

// parseAssignment reads AnnotationGPUs ("0,3"); ok is false when absent.
func parseAssignment(p *v1.Pod) (cluster.GPUSet, bool, error) {
	s, ok := p.Annotations[AnnotationGPUs]
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
			return 0, true, fmt.Errorf("pod %s/%s: annotation %s=%q: bad GPU index %q", p.Namespace, p.Name, AnnotationGPUs, s, f)
		}
		set |= 1 << uint(i)
	}
	return set, true, nil
}

// formatGPUs writes a GPU set as AnnotationGPUs does.
func formatGPUs(s cluster.GPUSet) string {
	idx := s.Indices()
	parts := make([]string, len(idx))
	for i, g := range idx {
		parts[i] = strconv.Itoa(g)
	}
	return strings.Join(parts, ",")
}
