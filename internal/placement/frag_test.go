// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

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
		if m.GPUMilli == 0 || !m.Models.Allows(modelID) {
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

// strandedReference is the idle GPU capacity FragCM adds to Frag: what
// the node's CPU and memory cannot serve at the GPU shapes' CPU and memory
// per milli-GPU, computed from the shapes directly.
func strandedReference(tw *TargetWorkload, cpuFree, memFree int64, gpuFree []int64) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	var cpu, mem, milli float64
	for _, m := range tw.Pods {
		if m.NumGPU > 0 {
			cpu += m.Freq * float64(m.CPUMilli)
			mem += m.Freq * float64(m.MemoryMiB)
			milli += m.Freq * float64(m.NumGPU) * float64(m.GPUMilli)
		}
	}
	served := float64(idle)
	if cpu > 0 {
		served = math.Min(served, float64(cpuFree)*milli/cpu)
	}
	if mem > 0 {
		served = math.Min(served, float64(memFree)*milli/mem)
	}
	return float64(idle) - served
}

func TestFragMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pods []cluster.Pod
	for i := 0; i < 500; i++ {
		p := cluster.Pod{CPUMilli: int64(rng.IntN(8)) * 2000, MemoryMiB: int64(rng.IntN(16)) * 1024}
		if rng.IntN(3) == 0 {
			p.MemoryMiB += 512 // shapes of several memory sizes have a mean of odd MiB
		}
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
		mem := int64(rng.IntN(64)) * 1024
		got, want = tw.FragCM(model, cpu, mem, g), fragReference(tw, model, cpu, g)+strandedReference(tw, cpu, mem, g)
		if math.Abs(got-want) > 1e-6*math.Max(1, want) {
			t.Fatalf("FragCM(model %d, cpu %d, mem %d, %v) = %v, reference %v", model, cpu, mem, g, got, want)
		}
	}
}

// TestNodeFragByHand: target workload of two equally frequent shapes, A (1
// CPU, 500 milli-GPU) and B (1 CPU, one whole GPU).
func TestNodeFragByHand(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000},
	}, 1)
	onlyT4 := NewTargetWorkload([]cluster.Pod{{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500, Models: 1 << 1}}, 1)
	cpuOnly := NewTargetWorkload([]cluster.Pod{{CPUMilli: 1000}}, 1)
	for _, tc := range []struct {
		name    string
		tw      *TargetWorkload
		model   int
		cpu     int64
		gpuFree []int64
		want    float64
	}{
		// A sees no fragment, B sees GPU 0 (600): ½·600.
		{"A fits both, B one", tw, 1, 15000, []int64{600, 1000}, 300},
		// A sees GPU 0 (100), B sees GPU 0 (100): ½·100 + ½·100.
		{"small fragment", tw, 1, 15000, []int64{100, 1000}, 100},
		// B fits nowhere: all 1100 idle for B, nothing for A: ½·1100.
		{"B fits nowhere", tw, 1, 15000, []int64{600, 500}, 550},
		// Too little CPU for either: all 1600 idle.
		{"no CPU left", tw, 1, 999, []int64{600, 1000}, 1600},
		// Shape restricted to T4 (ID 1) on an A10 (ID 4): all idle.
		{"model not allowed", onlyT4, 4, 15000, []int64{1000}, 1000},
		{"model allowed", onlyT4, 1, 15000, []int64{1000, 400}, 400},
		// A shape without GPUs counts all idle GPU capacity.
		{"CPU-only shape", cpuOnly, 1, 15000, []int64{600, 1000}, 1600},
		{"no idle GPU", tw, 1, 15000, []int64{0, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tw.Frag(tc.model, tc.cpu, tc.gpuFree); got != tc.want {
				t.Errorf("Frag = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFragCMByHand: shapes A (4 CPU, 500 milli-GPU) of mean memory 8 GiB
// (pods of 6 and 10 GiB) and B (1 CPU, one whole GPU, 16 GiB), equally
// frequent, on a T4 node (model 1). Per milli-GPU they ask for
// (½·4000 + ½·1000) / (½·500 + ½·1000) = 10/3 millicores and
// (½·8192 + ½·16384) / 750 = 16.384 MiB.
func TestFragCMByHand(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{
		{CPUMilli: 4000, MemoryMiB: 6144, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 4000, MemoryMiB: 10240, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 1000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 1000},
		{CPUMilli: 1000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 1000},
	}, 1)
	if a := tw.Pods[0]; a.GPUMilli != 500 || a.MemoryMiB != 8192 {
		t.Fatalf("shape A = %+v, want mean memory 8192 MiB", a)
	}
	cpuOnly := NewTargetWorkload([]cluster.Pod{{CPUMilli: 1000, MemoryMiB: 1024}}, 1)
	for _, tc := range []struct {
		name      string
		tw        *TargetWorkload
		cpu, mem  int64
		gpus      []int64
		want, frg float64
	}{
		// Served: min(2000, 16000·3/10, 65536/16.384) = min(2000, 4800,
		// 4000): all.
		{"room for all", tw, 16000, 65536, []int64{1000, 1000}, 0, 0},
		// min(2000, 1800, 4000): 200 stranded; A and B both fit: Frag 0.
		{"CPU strands 200", tw, 6000, 65536, []int64{1000, 1000}, 200, 0},
		// A cannot run: Frag ½·2000; min(2000, 900, 4000): 1100 more.
		{"A cannot run", tw, 3000, 65536, []int64{1000, 1000}, 2100, 1000},
		// min(2000, 4800, 20000/16.384 = 1220.703125): 779.296875.
		{"memory strands", tw, 16000, 20000, []int64{1000, 1000}, 779.296875, 0},
		// As Frag: B sees GPU 0 below its share, ½·600; 1600 served.
		{"fragment below a share", tw, 16000, 65536, []int64{600, 1000}, 300, 300},
		{"no idle GPU", tw, 0, 0, []int64{0, 0}, 0, 0},
		// No shape requests GPUs: nothing per milli-GPU, FragCM = Frag = L.
		{"CPU-only workload", cpuOnly, 0, 0, []int64{600, 1000}, 1600, 1600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tw.FragCM(1, tc.cpu, tc.mem, tc.gpus); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("FragCM = %v, want %v", got, tc.want)
			}
			if got := tc.tw.Frag(1, tc.cpu, tc.gpus); got != tc.frg {
				t.Errorf("Frag = %v, want %v", got, tc.frg)
			}
		})
	}
}

func TestTargetWorkloadCut(t *testing.T) {
	var pods []cluster.Pod
	add := func(k int, p cluster.Pod) {
		for i := 0; i < k; i++ {
			pods = append(pods, p)
		}
	}
	add(60, cluster.Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500})
	add(30, cluster.Pod{CPUMilli: 2000, NumGPU: 1, GPUMilli: 1000})
	add(6, cluster.Pod{CPUMilli: 4000})
	add(4, cluster.Pod{CPUMilli: 8000, NumGPU: 8, GPUMilli: 1000})
	// 60 + 30 = 90 < 95, + 6 = 96 ≥ 95: three shapes, renormalised over 96.
	tw := NewTargetWorkload(pods, 0.95)
	if len(tw.Pods) != 3 {
		t.Fatalf("%d shapes, want 3", len(tw.Pods))
	}
	for i, want := range []float64{60.0 / 96, 30.0 / 96, 6.0 / 96} {
		if d := tw.Pods[i].Freq - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("shape %d freq %v, want %v", i, tw.Pods[i].Freq, want)
		}
	}
}
