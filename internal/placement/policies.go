package placement

import (
	"math/rand/v2"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// Normalising constants of the openb simulator (Weng et al., USENIX ATC
// 2023; github.com/hkust-adsl/kubernetes-scheduler-simulator,
// pkg/type/open-gpu-share/utils/const.go): the largest node it models.
const (
	maxSpecCPU = 128000 // millicores
	maxSpecGPU = 8000   // milli-GPU
)

// Random picks a fitting node uniformly at random, and a random fitting GPU
// for a shared GPU. Source: the openb simulator's RandomScore plugin (which
// scores one random fitting node 100, the others 0) with its "random" GPU
// selection.
type Random struct{}

func (Random) uniform() {}

func (Random) Name() string                                { return "random" }
func (Random) Score(n *cluster.Node, p *cluster.Pod) int64 { return 0 }
func (Random) SelectGPUs(n *cluster.Node, p *cluster.Pod, rng *rand.Rand) cluster.GPUSet {
	return randomFitGPUs(n, p, rng)
}

// DotProduct is the Tetris-style alignment score of the openb simulator
// (DotProductScore with "merge" dimensions and "max" normalisation):
//
//	dot   = (cpuFree/128000 · cpu/128000 + gpuFree/8000 · gpu/8000) / 2
//	score = ⌊100 · (1 − dot)⌋
//
// where cpuFree and gpuFree are the node's free millicores and milli-GPU and
// cpu and gpu the pod's requests. GPUs are chosen best-fit.
type DotProduct struct{}

func (DotProduct) Name() string { return "dotproduct" }
func (DotProduct) Score(n *cluster.Node, p *cluster.Pod) int64 {
	dot := float64(n.CPUFree)/maxSpecCPU*float64(p.CPUMilli)/maxSpecCPU +
		float64(n.GPUFreeTotal())/maxSpecGPU*float64(p.TotalGPUMilli())/maxSpecGPU
	dot /= 2
	return int64(MaxNodeScore * (1 - dot))
}
func (DotProduct) SelectGPUs(n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}

// GPUPacking prefers, in order: GPUs already partly used (score 100 minus a
// tenth of their free percent, at least 50); then free GPUs on a node in use
// (50 minus the free GPUs taken, at least 33); then a wholly free node (33
// minus its GPU count, at least its GPU count). A pod without GPUs scores 0
// everywhere. Source: the openb simulator's GpuPackingScore plugin.
type GPUPacking struct{}

func (GPUPacking) Name() string { return "gpupacking" }
func (GPUPacking) Score(n *cluster.Node, p *cluster.Pod) int64 {
	if p.NumGPU == 0 {
		return 0
	}
	free := n.FullyFreeGPUs()
	if free == n.GPUs() {
		return max(int64(MaxNodeScore/3-free), int64(free))
	}
	// Take the fitting GPUs with the least free share first.
	var used [cluster.MaxGPUsPerNode]bool
	need, freeTaken := p.NumGPU, 0
	var ratio int64
	for need > 0 {
		pick := -1
		for i, f := range n.GPUFree {
			if !used[i] && f >= p.GPUMilli && (pick < 0 || f < n.GPUFree[pick]) {
				pick = i
			}
		}
		if pick < 0 {
			return 0
		}
		used[pick] = true
		need--
		if n.GPUFree[pick] == cluster.MilliGPU {
			freeTaken++
		}
		ratio += n.GPUFree[pick] * 100 / cluster.MilliGPU
	}
	if freeTaken > 0 {
		return max(int64(MaxNodeScore/2-freeTaken), MaxNodeScore/3)
	}
	return max(MaxNodeScore-ratio/10, MaxNodeScore/2)
}
func (GPUPacking) SelectGPUs(n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}

// GPUClustering puts pods of the same kind (shared GPU, or k whole GPUs)
// together. With u = 25 · (8000 − gpuFree) / 8000 (integer arithmetic):
// u+75 on a node holding only that kind, u+50 on a node holding that kind
// among others, u+25 on a node holding no GPU pod, u on a node holding other
// kinds only. A pod without GPUs scores 0 everywhere. Source: the openb
// simulator's GpuClusteringScore plugin.
type GPUClustering struct{}

func (GPUClustering) Name() string { return "gpuclustering" }
func (GPUClustering) Score(n *cluster.Node, p *cluster.Pod) int64 {
	k, ok := cluster.AffinityKey(p)
	if !ok {
		return 0
	}
	u := int64(MaxNodeScore/4) * (maxSpecGPU - n.GPUFreeTotal()) / maxSpecGPU
	switch {
	case n.Affinity[k] > 0 && n.AffinityKinds == 1:
		return u + MaxNodeScore*3/4
	case n.Affinity[k] > 0:
		return u + MaxNodeScore*2/4
	case n.AffinityKinds == 0:
		return u + MaxNodeScore/4
	}
	return u
}
func (GPUClustering) SelectGPUs(n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}

// BestFit prefers the node left with the least free CPU and GPU:
//
//	raw   = ⌊100 · (1 − ((cpuFree−cpu)/128000 · ½ + (gpuFree−gpu)/8000 · ½))⌋
//	score = (raw − min) · 100 / (max − min)   over the fitting nodes
//
// (0 everywhere when max = min). Source: the openb simulator's BestFitScore
// plugin and its min-max NormalizeScore.
type BestFit struct{}

func (BestFit) Name() string { return "bestfit" }
func (BestFit) Score(n *cluster.Node, p *cluster.Pod) int64 {
	s := float64(n.CPUFree-p.CPUMilli)/maxSpecCPU*0.5 +
		float64(n.GPUFreeTotal()-p.TotalGPUMilli())/maxSpecGPU*0.5
	return int64((1 - s) * MaxNodeScore)
}
func (BestFit) SelectGPUs(n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
func (BestFit) normalize(scores []int64) { minMaxNormalize(scores) }

func minMaxNormalize(scores []int64) {
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi == lo {
			scores[i] = 0
		} else {
			scores[i] = (s - lo) * MaxNodeScore / (hi - lo)
		}
	}
}

// allocatedScore is kube-scheduler's NodeResourcesFit scoring over CPU,
// memory and GPU with equal weights: per resource, least = (capacity −
// requested) · 100 / capacity or most = requested · 100 / capacity, where
// requested includes the pod; a resource of capacity 0 scores 0; the node
// score is the integer mean. Source: kube-scheduler
// pkg/scheduler/framework/plugins/noderesources/{least,most}_allocated.go.
func allocatedScore(n *cluster.Node, p *cluster.Pod, most bool) int64 {
	res := [3][2]int64{
		{n.CPUMilli - n.CPUFree + p.CPUMilli, n.CPUMilli},
		{n.MemoryMiB - n.MemoryFree + p.MemoryMiB, n.MemoryMiB},
		{int64(n.GPUs())*cluster.MilliGPU - n.GPUFreeTotal() + p.TotalGPUMilli(), int64(n.GPUs()) * cluster.MilliGPU},
	}
	var sum int64
	for _, r := range res {
		req, capa := r[0], r[1]
		if capa == 0 || req > capa {
			continue
		}
		if most {
			sum += req * MaxNodeScore / capa
		} else {
			sum += (capa - req) * MaxNodeScore / capa
		}
	}
	return sum / int64(len(res))
}

// LeastAllocated is kube-scheduler's default spreading score
// (NodeResourcesFit, LeastAllocated) on CPU, memory and GPU; GPUs best-fit.
type LeastAllocated struct{}

func (LeastAllocated) Name() string { return "leastallocated" }
func (LeastAllocated) Score(n *cluster.Node, p *cluster.Pod) int64 {
	return allocatedScore(n, p, false)
}
func (LeastAllocated) SelectGPUs(n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}

// MostAllocated is kube-scheduler's bin-packing score (NodeResourcesFit,
// MostAllocated) on CPU, memory and GPU; GPUs best-fit.
type MostAllocated struct{}

func (MostAllocated) Name() string { return "mostallocated" }
func (MostAllocated) Score(n *cluster.Node, p *cluster.Pod) int64 {
	return allocatedScore(n, p, true)
}
func (MostAllocated) SelectGPUs(n *cluster.Node, p *cluster.Pod, _ *rand.Rand) cluster.GPUSet {
	return bestFitGPUs(n, p)
}
