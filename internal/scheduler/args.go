package scheduler

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Args are the plugin's arguments in a KubeSchedulerConfiguration
// profile's pluginConfig (JSON or YAML keys as below).
type Args struct {
	// Policy is a placement policy by the simulator's name ("fgd",
	// "bestfit", ...; placement.Names). Default "fgd".
	Policy string `json:"policy"`
	// TieBreak is "first" (the lexicographically smallest node name among
	// the best, the openb simulator's rule) or "random" (kube-scheduler's
	// own). Default "random".
	TieBreak string `json:"tieBreak"`
	// TargetWorkloadFile is an openb pod CSV whose pod shapes FGD measures
	// fragmentation against; empty means the simulator's built-in workload.
	TargetWorkloadFile string `json:"targetWorkloadFile"`
	// Popularity is the share (0..1] of pods the target workload's most
	// popular shapes cover. Default 0.95 (Weng et al., USENIX ATC 2023).
	Popularity float64 `json:"popularity"`
	// Seed seeds the GPU choice of random policies.
	Seed uint64 `json:"seed"`
}

// build checks the arguments, applies defaults and makes the policy.
func (a *Args) build() (placement.Policy, placement.TieBreak, error) {
	if a.Policy == "" {
		a.Policy = "fgd"
	}
	if a.TieBreak == "" {
		a.TieBreak = "random"
	}
	if a.Popularity == 0 {
		a.Popularity = 0.95
	}
	tie, err := placement.ParseTieBreak(a.TieBreak)
	if err != nil {
		return nil, 0, fmt.Errorf("tieBreak: %w", err)
	}
	if !(a.Popularity > 0 && a.Popularity <= 1) {
		return nil, 0, fmt.Errorf("popularity %v out of range (0, 1]", a.Popularity)
	}
	tw, err := TargetWorkload(a.TargetWorkloadFile, a.Popularity)
	if err != nil {
		return nil, 0, err
	}
	p, err := placement.New(a.Policy, tw)
	if err != nil {
		return nil, 0, fmt.Errorf("policy: %w", err)
	}
	return p, tie, nil
}

// TargetWorkload reads an openb pod list (or takes the built-in
// workload) into FGD's target workload.
func TargetWorkload(file string, popularity float64) (*placement.TargetWorkload, error) {
	var specs []trace.PodSpec
	if file == "" {
		specs = trace.BuiltinPods(20000, 1, 0, 0)
	} else {
		var err error
		if specs, err = trace.ReadPodsFile(file); err != nil {
			return nil, fmt.Errorf("targetWorkloadFile: %w", err)
		}
	}
	pods := make([]cluster.Pod, len(specs))
	for i, s := range specs {
		m, err := gpu.ParseModels(s.GPUSpec)
		models := cluster.ModelSet(m)
		if err != nil {
			return nil, fmt.Errorf("targetWorkloadFile %s:%d: gpu_spec: %w", file, s.Line, err)
		}
		pods[i] = cluster.Pod{CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, NumGPU: int(s.NumGPU), GPUMilli: int64(s.GPUMilli), Models: models}
	}
	return placement.NewTargetWorkload(pods, popularity), nil
}
