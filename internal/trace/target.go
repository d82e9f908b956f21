// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// Pod is the placement core's pod for the row: its CPU, memory and GPUs,
// and the GPU models gpu_spec allows. A gpu_spec that names no model is
// an error "file:line: column gpu_spec: ...".
func (s PodSpec) Pod(file string) (cluster.Pod, error) {
	models, err := gpu.ParseModels(s.GPUSpec)
	if err != nil {
		return cluster.Pod{}, fmt.Errorf("%s:%d: column gpu_spec: %w", file, s.Line, err)
	}
	kind, claim := s.Resource.SplitClaim()
	p := cluster.Pod{Name: s.Name, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, NumGPU: int(s.NumGPU), GPUMilli: int64(s.GPUMilli), Models: cluster.ModelSet(models), Resource: kind, Claim: claim, Filter: s.Filter, Vendors: s.Vendors}
	p.NoteMIGDevice()
	return p, nil
}

// BuiltinTargetPods is the number of pods of the built-in workload that
// ReadTargetPods takes without a file.
const BuiltinTargetPods = 20000

// ReadTargetPods reads the pods whose shapes make FGD's target workload
// (placement.NewTargetWorkload), as the scheduler plugin's
// targetWorkloadFile names them: an openb pod CSV (ReadPodsFile), or with
// file "" the simulator's built-in workload (BuiltinTargetPods pods of
// seed 1).
func ReadTargetPods(file string) ([]cluster.Pod, error) {
	var specs []PodSpec
	if file == "" {
		specs = BuiltinPods(BuiltinTargetPods, 1, 0, 0)
	} else {
		var err error
		if specs, err = ReadPodsFile(file); err != nil {
			return nil, err
		}
	}
	pods := make([]cluster.Pod, len(specs))
	for i, s := range specs {
		p, err := s.Pod(file)
		if err != nil {
			return nil, err
		}
		pods[i] = p
	}
	return pods, nil
}
