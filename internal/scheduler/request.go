package scheduler

import (
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
	whole, hasWhole := req[gpuresource.GPU]
	milli, hasMilli := req[gpuresource.GPUMilli]
	switch {
	case hasMilli && hasWhole && whole.Value() > 0:
		return out, fmt.Errorf("%s applies to one GPU, but %s is %s: ask for whole GPUs or a share, not both", gpuresource.GPUMilli, gpuresource.GPU, whole.String())
	case hasMilli:
		m := milli.Value()
		if m < 1 || m > cluster.MilliGPU {
			return out, fmt.Errorf("%s %s out of range 1..1000 (a share of one GPU; use %s for more)", gpuresource.GPUMilli, milli.String(), gpuresource.GPU)
		}
		out.NumGPU, out.GPUMilli = 1, m
	case hasWhole && whole.Value() > 0:
		n := whole.Value()
		if n > cluster.MaxGPUsPerNode {
			return out, fmt.Errorf("%s %d above %d", gpuresource.GPU, n, cluster.MaxGPUsPerNode)
		}
		out.NumGPU, out.GPUMilli = int(n), cluster.MilliGPU
	}
	if spec, ok := p.Annotations[gpuresource.AnnotationGPUModel]; ok {
		if out.NumGPU == 0 {
			return out, fmt.Errorf("annotation %s=%q on a pod that asks for no GPU", gpuresource.AnnotationGPUModel, spec)
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
			return 0, fmt.Errorf("annotation %s: unknown GPU model %q (known: %s)", gpuresource.AnnotationGPUModel, name, strings.Join(catalog.Names(), ", "))
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
			return 0, true, fmt.Errorf("pod %s/%s: annotation %s=%q: bad GPU index %q", p.Namespace, p.Name, gpuresource.AnnotationGPUs, s, f)
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
