package v1

import "strings"

// IsGPUResource reports whether name is an extended resource whose devices
// are GPUs or MIG devices of this node agent: nvidia.com/gpu, a MIG profile's
// nvidia.com/mig-<profile>, either renamed <name>.shared by time-slicing, or
// ResourceGPUMilli. Other device plugins' resources (NICs, FPGAs, e.g.
// rdma/hca_shared_devices_a) are not, even when their device IDs look like
// GPU indices. It is the rule dcgm-exporter applies to the kubelet's
// pod-resources list (internal/pkg/transformation/kubernetes.go: nvidia.com/gpu
// or the nvidia.com/mig- prefix), with gpuplane's own names added.
func IsGPUResource(name string) bool {
	name = strings.TrimSuffix(name, SharedSuffix)
	return name == ResourceGPU || name == ResourceGPUMilli ||
		(strings.HasPrefix(name, migResourcePrefix) && len(name) > len(migResourcePrefix))
}
