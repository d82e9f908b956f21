// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// Random picks a fitting node uniformly at random (it is UniformRandom, and
// scores every node 0), and for a GPU-sharing pod a GPU uniformly at random
// among those it fits; a pod of whole GPUs takes the first free GPUs.
// Source: the openb simulator's RandomScore plugin (which scores one random
// fitting node 100, the others 0) with its "random" GPU selection
// (github.com/hkust-adsl/kubernetes-scheduler-simulator).
type Random struct{}

// UniformRandom marks Random as choosing nodes uniformly at random.
func (Random) UniformRandom() {}

func (Random) Name() string                                         { return "random" }
func (Random) PreScore(*cluster.Pod) State                          { return nil }
func (Random) Score(_ State, n *cluster.Node, p *cluster.Pod) int64 { return 0 }
func (Random) SelectGPUs(_ State, n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	return randomFitGPUs(n, p, rng)
}
