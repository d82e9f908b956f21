package placement

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// fragReference transcribes the paper's definition shape by shape, without
// grouping: Weng et al. 2023 §3.2 / NodeGpuShareFragAmount.
func fragReference(tw *TargetWorkload, modelID int, cpuFree int64, gpuFree []int64) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	frag := 0.0
	for _, m := range tw.Pods {
		all := m.Freq * float64(idle)
		if m.GPUMilli == 0 || !modelOK(m.Models, modelID) {
			frag += all
			continue
		}
		cnt := 0
		var below int64
		for _, f := range gpuFree {
			if f >= m.GPUMilli {
				cnt++
			} else {
				below += f
			}
		}
		if cnt >= m.NumGPU && cpuFree >= m.CPUMilli {
			frag += m.Freq * float64(below)
		} else {
			frag += all
		}
	}
	return frag
}

func TestFragMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pods []cluster.Pod
	for i := 0; i < 500; i++ {
		p := cluster.Pod{CPUMilli: int64(rng.IntN(8)) * 2000}
		switch rng.IntN(4) {
		case 0:
		case 1:
			p.NumGPU, p.GPUMilli = 1, int64(100*(1+rng.IntN(9)))
		case 2:
			p.NumGPU, p.GPUMilli = 1, 1000
		default:
			p.NumGPU, p.GPUMilli = 1<<rng.IntN(4), 1000
		}
		if rng.IntN(5) == 0 {
			p.Models = cluster.ModelSet(1 << rng.IntN(3))
		}
		pods = append(pods, p)
	}
	tw := NewTargetWorkload(pods, 0.95)
	for trial := 0; trial < 2000; trial++ {
		g := make([]int64, 1+rng.IntN(8))
		for i := range g {
			g[i] = int64(rng.IntN(11)) * 100
		}
		model := rng.IntN(4) - 1
		cpu := int64(rng.IntN(20)) * 1000
		got, want := tw.Frag(model, cpu, g), fragReference(tw, model, cpu, g)
		if math.Abs(got-want) > 1e-6*math.Max(1, want) {
			t.Fatalf("Frag(model %d, cpu %d, %v) = %v, reference %v", model, cpu, g, got, want)
		}
	}
}
