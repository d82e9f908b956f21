package sim

// Why a pod failed, in Result.Failed and the per-pod placements file.
const (
	// ReasonNoRoom: the pod fits some node of the empty cluster but none
	// had room for it when it arrived (fill) or before the run ended
	// (replay).
	ReasonNoRoom = "no_room"
	// ReasonTooLarge: the pod is larger than every node of the GPU models
	// it allows, even empty.
	ReasonTooLarge = "too_large"
	// ReasonNoModel: no node has a GPU model that the pod's gpu_spec
	// allows.
	ReasonNoModel = "no_model"
	// ReasonNoGPUNodes: the pod requests GPUs and no node has any.
	ReasonNoGPUNodes = "no_gpu_nodes"
	// ReasonDeleted: replay only; the pod was still waiting at its trace
	// deletion time and left the queue without starting.
	ReasonDeleted = "deleted_waiting"
)

// FailedGroup counts the failed pods of one shape and one reason in a run.
type FailedGroup struct {
	Reason string `json:"reason"`
	// CPUMilli in millicores, MemoryMiB in MiB, GPUMilli in milli-GPU per
	// GPU; GPUSpec as the pod list writes it ("" means any model).
	CPUMilli  int64  `json:"cpu_milli"`
	MemoryMiB int64  `json:"memory_mib"`
	NumGPU    int    `json:"num_gpu"`
	GPUMilli  int64  `json:"gpu_milli"`
	GPUSpec   string `json:"gpu_spec,omitempty"`
	Pods      int    `json:"pods"`
}
