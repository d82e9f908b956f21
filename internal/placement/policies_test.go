package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// handNode is a 2-GPU T4 node with 16 cores and 64 GiB: 4 cores, 16 GiB and
// 600 milli-GPU of GPU 0 allocated to one GPU-sharing pod.
func handNode(t *testing.T) (*cluster.Cluster, *cluster.Node) {
	t.Helper()
	c := cluster.New()
	if _, err := c.AddNode("t4", 16000, 65536, 2, "T4"); err != nil {
		t.Fatal(err)
	}
	if err := c.Allocate(0, &cluster.Pod{Name: "x", CPUMilli: 4000, MemoryMiB: 16384, NumGPU: 1, GPUMilli: 600}, 1); err != nil {
		t.Fatal(err)
	}
	return c, &c.Nodes[0]
}

// Scores worked out by hand from each policy's formula (see the policy's
// doc comment) for the node of handNode.
func TestScoresByHand(t *testing.T) {
	_, n := handNode(t)
	share := &cluster.Pod{CPUMilli: 2000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 300}
	whole := &cluster.Pod{CPUMilli: 2000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 1000}
	cases := []struct {
		policy Policy
		pod    *cluster.Pod
		want   int64
	}{
		// dot = (12000/128000·2000/128000 + 1400/8000·300/8000)/2 = 0.0035644…; 100·(1−dot) = 99.64
		{DotProduct{}, share, 99},
		// s = 10000/128000·½ + 1100/8000·½ = 0.1078125; 100·(1−s) = 89.22
		{BestFit{}, share, 89},
		// shared GPU 0 with 40% free: 100 − 40/10
		{GPUPacking{}, share, 96},
		// a free GPU on a used node: 50 − 1
		{GPUPacking{}, whole, 49},
		// u = 25·(8000−1400)/8000 = 20; only GPU-sharing pods on the node: +75
		{GPUClustering{}, share, 95},
		// other kinds only: u
		{GPUClustering{}, whole, 20},
		// CPU (16000−6000)·100/16000 = 62, memory (65536−24576)·100/65536 = 62, GPU (2000−900)·100/2000 = 55; (62+62+55)/3
		{LeastAllocated{}, share, 59},
		// CPU 37, memory 37, GPU 45; 119/3
		{MostAllocated{}, share, 39},
	}
	for _, tc := range cases {
		if got := tc.policy.Score(n, tc.pod); got != tc.want {
			t.Errorf("%s score for %+v = %d, want %d", tc.policy.Name(), *tc.pod, got, tc.want)
		}
	}
	if got := (GPUPacking{}).Score(n, &cluster.Pod{CPUMilli: 1}); got != 0 {
		t.Errorf("gpupacking score of a CPU pod = %d, want 0", got)
	}
}

func TestGPUPackingFreeNodes(t *testing.T) {
	c := cluster.New()
	for _, g := range []int{8, 1} {
		if _, err := c.AddNode("n", 96000, 393216, g, "G2"); err != nil {
			t.Fatal(err)
		}
	}
	p := &cluster.Pod{NumGPU: 1, GPUMilli: 1000}
	// max(33 − 8, 8) = 25 and max(33 − 1, 1) = 32.
	if got := (GPUPacking{}).Score(&c.Nodes[0], p); got != 25 {
		t.Errorf("8 free GPUs: %d, want 25", got)
	}
	if got := (GPUPacking{}).Score(&c.Nodes[1], p); got != 32 {
		t.Errorf("1 free GPU: %d, want 32", got)
	}
}

func TestBestFitNormalize(t *testing.T) {
	s := []int64{40, 90, 65, 40}
	minMaxNormalize(s)
	// (s−40)·100/50
	want := []int64{0, 100, 50, 0}
	for i := range s {
		if s[i] != want[i] {
			t.Fatalf("normalize = %v, want %v", s, want)
		}
	}
	s = []int64{7, 7}
	minMaxNormalize(s)
	if s[0] != 0 || s[1] != 0 {
		t.Fatalf("equal scores normalize to %v, want zeros", s)
	}
}

// TestFGDByHand: target workload of two equally frequent shapes, A (1 CPU,
// 500 milli-GPU) and B (1 CPU, one whole GPU); node with GPUs free [600,
// 1000]. Before: A sees no fragment, B sees GPU 0 (600): F = ½·600 = 300.
// A 500 milli-GPU pod on GPU 0 leaves [100, 1000]: F = ½·100 + ½·100 = 100,
// score ⌊100·σ(0.2)⌋ = 54. On GPU 1 it leaves [600, 500]: B fits nowhere,
// F = ½·1100 = 550, score ⌊100·σ(−0.25)⌋ = 43. FGD takes GPU 0.
func TestFGDByHand(t *testing.T) {
	tw := NewTargetWorkload([]cluster.Pod{
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500},
		{CPUMilli: 1000, NumGPU: 1, GPUMilli: 1000},
	}, 1)
	c := cluster.New()
	c.AddNode("n", 16000, 65536, 2, "T4")
	if err := c.Allocate(0, &cluster.Pod{CPUMilli: 6000, NumGPU: 1, GPUMilli: 400}, 1); err != nil {
		t.Fatal(err)
	}
	n := &c.Nodes[0]
	if got := tw.NodeFrag(n); got != 300 {
		t.Fatalf("frag before = %v, want 300", got)
	}
	f := &FGD{Target: tw}
	p := &cluster.Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: 500}
	if got := f.Score(n, p); got != 54 {
		t.Errorf("FGD score = %d, want 54", got)
	}
	if got := f.SelectGPUs(n, p, nil); got != 1 {
		t.Errorf("FGD GPUs = %b, want GPU 0", uint64(got))
	}
	// A CPU-only shape counts all idle GPU capacity as fragmented.
	cpuOnly := NewTargetWorkload([]cluster.Pod{{CPUMilli: 1000}}, 1)
	if got := cpuOnly.NodeFrag(n); got != 1600 {
		t.Errorf("frag for a CPU-only workload = %v, want all 1600 idle", got)
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

func TestSelectHost(t *testing.T) {
	s := []int64{3, 9, 1, 9, 9}
	if got := selectHost(s, TieFirst, nil); got != 1 {
		t.Fatalf("TieFirst = %d, want 1", got)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[int]int{}
	for i := 0; i < 3000; i++ {
		seen[selectHost(s, TieRandom, rng)]++
	}
	for _, i := range []int{1, 3, 4} {
		// Each of the three tied nodes is expected 1000 times; 800 is over
		// 7 standard deviations below.
		if seen[i] < 800 {
			t.Errorf("TieRandom chose node %d %d times of 3000, want about 1000: %v", i, seen[i], seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("TieRandom chose a node without the highest score: %v", seen)
	}
}

// TestPlacerMemoMatchesDirectScoring places random pods on a changing
// cluster and checks that the cached scores give the same choice as scoring
// every node afresh.
func TestPlacerMemoMatchesDirectScoring(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var shapes []cluster.Pod
	for i := 0; i < 12; i++ {
		p := cluster.Pod{CPUMilli: int64(1+rng.IntN(8)) * 1000, MemoryMiB: int64(1+rng.IntN(8)) * 4096}
		switch rng.IntN(3) {
		case 1:
			p.NumGPU, p.GPUMilli = 1, int64(100*(1+rng.IntN(9)))
		case 2:
			p.NumGPU, p.GPUMilli = 1<<rng.IntN(3), 1000
		}
		shapes = append(shapes, p)
	}
	tw := NewTargetWorkload(shapes, 0.95)
	for _, name := range Names {
		if name == "random" {
			continue
		}
		pol, _ := New(name, tw)
		c := cluster.New()
		for i := 0; i < 20; i++ {
			c.AddNode("n", 32000, 131072, []int{1, 2, 4, 8}[i%4], "T4")
		}
		pl := NewPlacer(pol, TieFirst, rng)
		for step := 0; step < 300; step++ {
			p := shapes[rng.IntN(len(shapes))]
			node, gpus, ok := pl.Place(c, &p)
			// Direct: score every fitting node, normalise, take the first max.
			var cand []int
			var scores []int64
			for i := range c.Nodes {
				if ok, _ := cluster.Fits(&c.Nodes[i], &p); ok {
					cand = append(cand, i)
					scores = append(scores, pol.Score(&c.Nodes[i], &p))
				}
			}
			if !ok {
				if len(cand) != 0 {
					t.Fatalf("%s step %d: Place failed with %d fitting nodes", name, step, len(cand))
				}
				continue
			}
			if nz, ok := pol.(normalizer); ok {
				nz.normalize(scores)
			}
			if want := cand[selectHost(scores, TieFirst, nil)]; want != node {
				t.Fatalf("%s step %d: Place chose node %d, direct scoring node %d", name, step, node, want)
			}
			if err := c.Allocate(node, &p, gpus); err != nil {
				t.Fatalf("%s step %d: %v", name, step, err)
			}
		}
	}
}

func TestParseNames(t *testing.T) {
	got, err := ParseNames("fgd, bestfit,fgd")
	if err != nil || len(got) != 2 || got[0] != "bestfit" || got[1] != "fgd" {
		t.Fatalf("ParseNames = %v, %v", got, err)
	}
	if all, _ := ParseNames("all"); len(all) != 8 {
		t.Fatalf("all = %v", all)
	}
	if _, err := ParseNames("fgd,nope"); err == nil {
		t.Fatal("unknown policy accepted")
	}
}
