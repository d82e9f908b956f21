// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"errors"
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// FGDCM is FGD (Weng et al., USENIX ATC 2023) with fragmentation measured
// by TargetWorkload.FragCM, which also counts the GPUs a node will strand
// for want of CPU or memory:
//
//	score = ⌊100 · σ((F_before − F_after) / 1000)⌋,  F = FragCM
//
// GPUs are chosen as FGD chooses them, with FragCM. Score depends only on
// the node's free resources and the pod. This project's policy; its
// measurements against FGD are in docs/simulate.md, "Beyond FGD".
type FGDCM struct {
	fgd FGD
}

// NewFGDCM returns FGDCM for target workload tw.
func NewFGDCM(tw *TargetWorkload) (Policy, error) {
	if tw == nil {
		return nil, errors.New("policy fgdcm needs a target workload")
	}
	return FGDCM{fgd: FGD{Target: tw, cm: true}}, nil
}

func (FGDCM) Name() string                { return "fgdcm" }
func (FGDCM) PreScore(*cluster.Pod) State { return nil }

func (f FGDCM) Score(s State, n *cluster.Node, p *cluster.Pod) int64 {
	return f.fgd.Score(s, n, p)
}

func (f FGDCM) SelectGPUs(s State, n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	return f.fgd.SelectGPUs(s, n, p, rng)
}

// MIGStart is FGD's, with FragCM.
func (f FGDCM) MIGStart(s State, n *cluster.Node, p *cluster.Pod, g int) int {
	return f.fgd.MIGStart(s, n, p, g)
}
