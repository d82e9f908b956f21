// Package resource holds the GPU extended-resource names and the rule that
// tells a GPU resource from another device plugin's. It imports only the
// standard library, so that the offline tool (cmd/gpuplane, which links no
// Kubernetes package, not even sigs.k8s.io/yaml) can share the rule with the
// in-cluster roles; api/config/v1 re-exports it.
package resource

import "strings"

// Extended-resource names, as NVIDIA's device plugin advertises them.
const (
	// GPU is the resource of whole GPUs, and of MIG devices under the
	// single MIG strategy.
	GPU = "nvidia.com/gpu"
	// MIGPrefix starts the resource name of a MIG profile under the mixed
	// MIG strategy, e.g. nvidia.com/mig-1g.10gb.
	MIGPrefix = "nvidia.com/mig-"
	// SharedSuffix ends the name of a time-sliced resource under
	// sharing.timeSlicing.renameByDefault, e.g. "nvidia.com/gpu.shared".
	SharedSuffix = ".shared"
	// GPUMilli is gpuplane's resource for a share of one GPU, in milli-GPU
	// (1000 = one GPU). A gpuplane extension: NVIDIA has no such resource.
	GPUMilli = "gpuplane.io/gpu-milli"
)

// IsGPU reports whether name is an extended resource whose devices are GPUs
// or MIG devices of gpuplane's node agent: nvidia.com/gpu, a MIG profile's
// nvidia.com/mig-<profile>, either renamed <name>.shared by time-slicing, or
// GPUMilli. Other device plugins' resources (NICs, FPGAs, e.g.
// rdma/hca_shared_devices_a) are not, even when their device IDs look like
// GPU indices. It is the rule dcgm-exporter applies to the kubelet's
// pod-resources list (internal/pkg/transformation/kubernetes.go: nvidia.com/gpu
// or the nvidia.com/mig- prefix), with gpuplane's own names added.
func IsGPU(name string) bool {
	name = strings.TrimSuffix(name, SharedSuffix)
	return name == GPU || name == GPUMilli ||
		(strings.HasPrefix(name, MIGPrefix) && len(name) > len(MIGPrefix))
}
