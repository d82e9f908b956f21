package placement

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestFGDCMByHand: target workload of shapes A (1 CPU, 8 GiB, 500
// milli-GPU) and B (1 CPU, 32 GiB, one whole GPU), equally frequent.
func TestFGDCMByHand(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{
		{CPUMilli: 1000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 1000, MemoryMiB: 32768, NumGPU: 1, GPUMilli: 1000},
	}, 1)
	pol, err := New("fgdcm", tw)
	if err != nil {
		t.Fatal(err)
	}
	fgd, _ := New("fgd", tw)
	// T4, 16 cores, 64 GiB, both GPUs free.
	free := node(t, "T4", 16000, 65536, 2)
	// The same with 2 cores, 40 GiB and GPU 0 held: 14 cores, 24 GiB and
	// GPUs [0, 1000] free.
	lowMem := node(t, "T4", 16000, 65536, 2, binding{cluster.Pod{CPUMilli: 2000, MemoryMiB: 40960, NumGPU: 1, GPUMilli: 1000}, 1 << 0})
	// Both GPUs held: no idle GPU.
	full := node(t, "T4", 16000, 65536, 2, binding{cluster.Pod{CPUMilli: 2000, MemoryMiB: 8192, NumGPU: 2, GPUMilli: 1000}, 0b11})
	share := cluster.Pod{CPUMilli: 1000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 500}
	cpu := cluster.Pod{CPUMilli: 4000, MemoryMiB: 4096}
	for _, tc := range []struct {
		name      string
		node      *cluster.Node
		pod       cluster.Pod
		fgd, want int64
		gpus      cluster.GPUSet
	}{
		// Before: B cannot have 32 GiB of 24: FragMem = ½·1000 = 500 (Frag:
		// 0). After [0, 500] and 16 GiB: A sees nothing, B all 500:
		// FragMem = 250, ⌊100·σ(0.25)⌋ = 56 (Frag: 250, ⌊100·σ(−0.25)⌋ =
		// 43).
		{"share where memory strands the GPU", lowMem, share, 43, 56, 1 << 1},
		// [500, 1000] from [1000, 1000], 56 GiB free: both shapes fit,
		// B sees 500: 250 after, 0 before, ⌊100·σ(−0.25)⌋ = 43 for both.
		{"share on a free node", free, share, 43, 43, 1 << 0},
		// No idle GPU: 100 (FGD: fragmentation 0 before and after, 50).
		{"CPU pod on a full node", full, cpu, 50, 100, 0},
		// 12 cores left per 2 idle GPUs: ⌊2·12000/2000⌋ = 12 (FGD: both
		// shapes still fit, nothing changes, 50).
		{"CPU pod beside idle GPUs", free, cpu, 50, 12, 0},
		// 10 cores left per idle GPU: ⌊2·10000/1000⌋ = 20.
		{"CPU pod, fewer idle GPUs", lowMem, cpu, 50, 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok, why := cluster.Fits(tc.node, &tc.pod); !ok {
				t.Fatalf("test pod does not fit: %s", why)
			}
			if got := fgd.Score(nil, tc.node, &tc.pod); got != tc.fgd {
				t.Errorf("fgd score = %d, want %d", got, tc.fgd)
			}
			s := pol.PreScore(&tc.pod)
			if got := pol.Score(s, tc.node, &tc.pod); got != tc.want {
				t.Errorf("fgdcm score = %d, want %d", got, tc.want)
			}
			if got := pol.SelectGPUs(s, tc.node, &tc.pod, nil); got != tc.gpus {
				t.Errorf("GPUs = %b, want %b", uint64(got), uint64(tc.gpus))
			}
		})
	}
	// The cap: a 128-core A10 node with its one GPU idle leaves 127 cores
	// per idle GPU, ⌊2·127⌋ = 254, capped at 99 below a node with no idle
	// GPU.
	a10 := node(t, "A10", 128000, 1<<20, 1)
	if got := pol.Score(nil, a10, &cluster.Pod{CPUMilli: 1000}); got != 99 {
		t.Errorf("fgdcm score on an idle A10 = %d, want 99", got)
	}
}

// TestFGDCMScoreDoesNotAllocate: as FGD's.
func TestFGDCMScoreDoesNotAllocate(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{sharePod, wholePod, {CPUMilli: 1000, NumGPU: 2, GPUMilli: 1000}}, 1)
	f, _ := NewFGDCM(tw)
	n := handNode(t)
	for _, p := range []cluster.Pod{sharePod, wholePod, cpuPod} {
		if a := testing.AllocsPerRun(100, func() { f.Score(nil, n, &p) }); a != 0 {
			t.Errorf("FGDCM Score of %+v allocates %v times", p, a)
		}
	}
}
