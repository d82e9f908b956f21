package v1

import "github.com/gpuplane/gpuplane/api/resource"

// IsGPUResource reports whether name is an extended resource whose devices
// are GPUs or MIG devices of this node agent: nvidia.com/gpu, a MIG
// profile's nvidia.com/mig-<profile>, either renamed <name>.shared by
// time-slicing, or ResourceGPUMilli. The rule lives in api/resource
// (resource.IsGPU), which the offline tool links without this package.
func IsGPUResource(name string) bool { return resource.IsGPU(name) }
