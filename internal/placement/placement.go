// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package placement is gpuplane's placement core: it decides which node and
// which GPUs a pod gets. The simulator and the kube-scheduler plugins both
// call it; it works on internal/cluster state and imports nothing from
// Kubernetes.
//
// A Policy scores every node that fits a pod; the Placer picks the highest
// score, breaking ties as SelectHost says, then asks the policy which GPUs
// of that node to use. Scores are integers in kube-scheduler's range
// [0, 100], so that policies behave as they do inside a real scheduler,
// where rounding creates ties.
//
// One file per policy gives its formula and source. Policies hold no
// mutable state: a scheduler may call Score for many nodes at once.
package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// MaxNodeScore is kube-scheduler's highest node score.
const MaxNodeScore = 100

// Normalising constants of the openb simulator (Weng et al., USENIX ATC
// 2023; github.com/hkust-adsl/kubernetes-scheduler-simulator,
// pkg/type/open-gpu-share/utils/const.go): the largest node it models.
const (
	maxSpecCPU = 128000 // millicores
	maxSpecGPU = 8000   // milli-GPU
)

// State is what a policy computes once per pod and scheduling cycle, in
// PreScore, and reads in Score and SelectGPUs, as kube-scheduler plugins
// keep per-pod data in their CycleState. nil when a policy needs none,
// which is so for every built-in policy today.
type State any

// Policy scores nodes for a pod and chooses GPUs on the chosen node. A
// Policy holds no mutable state: Score and SelectGPUs are safe for
// concurrent use on different nodes with the same State.
type Policy interface {
	// Name is the policy's command-line name, e.g. "fgd".
	Name() string
	// PreScore is called once per pod per scheduling cycle, before Score;
	// its result is passed to Score and SelectGPUs for that pod.
	PreScore(p *cluster.Pod) State
	// Score rates node n for pod p; higher is better. It is called only for
	// nodes that p fits (cluster.Fits), and must depend only on n's free
	// resources and p's request (the Placer caches it by both).
	Score(s State, n *cluster.Node, p *cluster.Pod) int64
	// SelectGPUs picks NumGPU GPUs of n for p; n fits p. rng is used only
	// by policies that choose GPUs at random.
	SelectGPUs(s State, n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet
}

// MIGStarter is implemented by policies that choose the placement of a
// MIG instance on a GPU of MIG on demand (FGD, FGDCM): MIGStart returns
// the start slot (memory slot 0..7) the policy gives the instance of p,
// a pod asking for a MIG profile, on GPU g of n, or -1 to take the first
// free placement (cluster.Node.Add's rule).
type MIGStarter interface {
	MIGStart(s State, n *cluster.Node, p *cluster.Pod, g int) int
}

// Allocate binds p to node i of c on gpus as policy places it: a pod
// asking for a MIG profile on one GPU of MIG on demand at the start the
// policy gives it (MIGStarter; cluster.Node.AddDynamicMIGAt), any other
// pod, or with no start given, by cluster.Cluster.Allocate. The
// simulator's placers call it.
func Allocate(policy Policy, c *cluster.Cluster, i int, p *cluster.Pod, gpus cluster.GPUSet) error {
	ms, ok := policy.(MIGStarter)
	if !ok || p.MIGProfile == 0 || gpus.Count() != 1 || i < 0 || i >= len(c.Nodes) {
		return c.Allocate(i, p, gpus)
	}
	n := &c.Nodes[i]
	g := gpus.Indices()[0]
	var buf cluster.Pod
	if start := ms.MIGStart(nil, n, n.Served(p, &buf), g); start >= 0 {
		return n.AddDynamicMIGAt(p, g, start)
	}
	return c.Allocate(i, p, gpus)
}

// Normalizer is implemented by policies whose raw scores are rescaled over
// the nodes that fit, as kube-scheduler's ScoreExtensions.NormalizeScore:
// NormalizeScores rescales scores (one per fitting node) in place. A score
// must be highest after rescaling exactly when it was highest before (as
// under min-max rescaling): the IndexedPlacer takes the first node of the
// highest raw score under TieFirst without rescaling.
type Normalizer interface {
	NormalizeScores(scores []int64)
}

// UniformRandom is implemented by policies that pick a fitting node
// uniformly at random whatever the tie-break (Random): the Placer does not
// score nodes for them, and draws one of the fitting nodes with its rng.
type UniformRandom interface {
	UniformRandom()
}
