// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The built-in scenario is generated from published statistics of the
// Alibaba openb trace (github.com/alibaba/clusterdata,
// cluster-trace-gpu-v2023; Weng et al., USENIX ATC 2023): its GPU node
// types with their counts, and its most frequent pod shapes with their
// counts in openb_pod_list_default.csv (98% of its 8,152 pods). They are
// frequencies, not trace rows: no pod or node of the trace is copied.

// builtinNodeTypes: count, GPU model, GPUs per node, CPU millicores, MiB.
var builtinNodeTypes = []struct {
	count     int
	model     string
	gpus      int
	cpuMilli  int64
	memoryMiB int64
}{
	{549, "G2", 8, 96000, 393216},
	{387, "T4", 2, 104000, 524288},
	{107, "P100", 2, 16000, 122880},
	{39, "G3", 8, 128000, 786432},
	{28, "V100M16", 4, 32000, 131072},
	{22, "P100", 2, 64000, 262144},
	{21, "V100M32", 8, 96000, 786432},
	{19, "V100M16", 1, 8000, 32768},
	{17, "T4", 4, 96000, 393216},
	{9, "V100M32", 4, 48000, 376832},
	{7, "V100M16", 8, 64000, 262144},
	{3, "P100", 1, 8000, 61440},
	{2, "P100", 2, 8000, 61440},
	{2, "A10", 1, 128000, 1048576},
	{1, "V100M16", 8, 82000, 344064},
}

// builtinPodShapes: count, CPU millicores, MiB, GPUs, milli-GPU per GPU.
var builtinPodShapes = [][5]int64{
	{1047, 3152, 5600, 1, 810}, {857, 11300, 49152, 1, 1000}, {534, 11400, 48128, 1, 1000},
	{470, 3152, 5600, 1, 1000}, {388, 11908, 47104, 1, 470}, {364, 12500, 57344, 0, 0},
	{360, 8000, 30517, 1, 470}, {284, 32000, 49152, 0, 0}, {255, 18708, 64512, 1, 1000},
	{237, 11908, 47104, 1, 650}, {195, 9810, 41560, 1, 1000}, {163, 8000, 30517, 0, 0},
	{158, 15700, 58368, 1, 1000}, {158, 12000, 24576, 1, 1000}, {153, 11908, 47104, 1, 1000},
	{120, 15400, 51200, 0, 0}, {111, 4000, 22888, 1, 320}, {108, 16000, 32768, 1, 1000},
	{104, 8000, 16384, 1, 1000}, {104, 4000, 24576, 1, 1000}, {99, 12000, 16384, 1, 1000},
	{95, 16500, 51200, 0, 0}, {93, 14200, 58368, 1, 1000}, {84, 4000, 30517, 1, 230},
	{84, 24200, 93184, 1, 1000}, {78, 4000, 15258, 1, 320}, {75, 3152, 5600, 1, 590},
	{72, 8000, 30517, 1, 320}, {72, 4152, 10600, 1, 550}, {65, 11400, 77824, 1, 1000},
	{55, 8000, 32768, 1, 1000}, {53, 4000, 15258, 1, 160}, {51, 6000, 6144, 1, 460},
	{51, 11900, 77824, 1, 1000}, {45, 4152, 10600, 1, 370}, {44, 12000, 15360, 1, 1000},
	{43, 4000, 30517, 1, 320}, {41, 8200, 33792, 1, 1000}, {40, 4000, 31250, 1, 1000},
	{36, 15200, 80896, 1, 1000}, {33, 16000, 65536, 1, 1000}, {31, 4152, 10600, 1, 810},
	{29, 6000, 12288, 1, 460}, {27, 16400, 125952, 1, 1000}, {26, 4000, 22888, 1, 230},
	{24, 4000, 15258, 1, 220}, {22, 1000, 2048, 1, 320}, {20, 6000, 22888, 1, 160},
	{19, 8000, 30517, 1, 220}, {18, 88000, 327680, 8, 1000}, {18, 8000, 30517, 1, 230},
	{18, 64200, 263168, 8, 1000}, {18, 6000, 18432, 1, 460}, {18, 4000, 22888, 1, 480},
	{16, 11300, 37888, 1, 1000}, {15, 1000, 6144, 1, 1000}, {12, 8000, 30517, 1, 650},
	{12, 4000, 15258, 1, 230}, {11, 8000, 15625, 0, 0}, {11, 7000, 30000, 1, 1000},
	{11, 4000, 22888, 1, 220}, {11, 11400, 57344, 0, 0}, {9, 32200, 132096, 4, 1000},
	{7, 16200, 66560, 2, 1000}, {3, 60200, 320512, 4, 1000}, {3, 6000, 65536, 2, 1000},
	{3, 120000, 737280, 8, 1000},
}

// BuiltinNodes returns a cluster with the openb trace's GPU node types, each
// type's count divided by scale (rounded, at least one node of each type).
// scale 1 gives the trace's 1,213 nodes; the default scenario uses 4.
func BuiltinNodes(scale int) []NodeSpec {
	if scale < 1 {
		scale = 1
	}
	var out []NodeSpec
	for _, t := range builtinNodeTypes {
		n := int(math.Round(float64(t.count) / float64(scale)))
		n = max(n, 1)
		for i := 0; i < n; i++ {
			out = append(out, NodeSpec{
				Name:     fmt.Sprintf("builtin-%s-%dgpu-%03d-%d", t.model, t.gpus, len(out), i),
				CPUMilli: t.cpuMilli, MemoryMiB: t.memoryMiB, GPUs: t.gpus, Model: t.model,
			})
		}
	}
	return out
}

// BuiltinPods draws n pods from the openb pod-shape frequencies with the
// given seed. For the replay mode, pods arrive every interarrivalSeconds and
// run for an exponentially distributed time with mean meanRunSeconds.
func BuiltinPods(n int, seed uint64, interarrivalSeconds, meanRunSeconds float64) []PodSpec {
	rng := rand.New(rand.NewPCG(seed, 0x6770757061726b))
	var total int64
	for _, s := range builtinPodShapes {
		total += s[0]
	}
	out := make([]PodSpec, n)
	for i := range out {
		x := rng.Int64N(total)
		var s [5]int64
		for _, s = range builtinPodShapes {
			if x < s[0] {
				break
			}
			x -= s[0]
		}
		created := float64(i) * interarrivalSeconds
		run := rng.ExpFloat64() * meanRunSeconds
		out[i] = PodSpec{
			Name:     fmt.Sprintf("builtin-pod-%05d", i),
			CPUMilli: s[1], MemoryMiB: s[2], NumGPU: int8(s[3]), GPUMilli: int16(s[4]),
			Creation: created, Scheduled: created, Deletion: created + math.Max(run, 1),
			Line: int32(i + 2),
		}
	}
	return out
}
