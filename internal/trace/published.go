// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

// Published is the result Weng et al. published for one public openb pod
// list: the mean over 10 seeds of the GPU allocation ratio, in %, when the
// arrived GPU demand reaches 130% of the capacity of the openb GPU node
// list (openb_node_list_gpu_node.csv: 1,213 nodes, 6,212 GPUs), by policy.
type Published struct {
	// File is the pod list's file name in the openb trace; SHA256 the hex
	// digest of its contents (github.com/alibaba/clusterdata,
	// cluster-trace-gpu-v2023/csv, commit 7a6c496e).
	File, SHA256 string
	Alloc        map[string]float64
}

// PublishedResults are the openb pod lists with published results. Values:
// Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
// with Fragmentation Gradient Descent", USENIX ATC 2023, Fig. 7 and Fig. 9
// at 130% arrived demand, as the paper's repository
// (github.com/hkust-adsl/kubernetes-scheduler-simulator) lists them and
// ../shared/traces/README.md copies them. internal/sim/engine's
// TestReproducesPaper checks the simulator against them; the HTML report
// draws them when it recognises the pod list by its SHA-256.
var PublishedResults = []Published{
	{"openb_pod_list_default.csv", "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8",
		map[string]float64{"random": 87.47, "dotproduct": 90.85, "gpuclustering": 91.88, "gpupacking": 92.00, "bestfit": 93.08, "fgd": 95.39}},
	{"openb_pod_list_cpu200.csv", "b7e9d8a1a601da84d6e0b4110b19ef5001be5e4796d33e7b82f166ba95161f87",
		map[string]float64{"random": 83.77, "dotproduct": 87.70, "gpuclustering": 89.92, "gpupacking": 90.22, "bestfit": 92.40, "fgd": 95.05}},
	{"openb_pod_list_gpushare100.csv", "12dbc07d6a49bf8641e2275a2ff5bf7be74b5df7d148d531e135b140b95f9a3d",
		map[string]float64{"random": 79.44, "dotproduct": 82.42, "gpuclustering": 82.65, "gpupacking": 82.57, "bestfit": 85.01, "fgd": 86.90}},
	{"openb_pod_list_gpushare40.csv", "d83ce79a4eb6987524bedbb0c65e41aed3a36bf6c1b78b86234c3687a07e1d40",
		map[string]float64{"random": 86.00, "dotproduct": 89.56, "gpuclustering": 90.02, "gpupacking": 90.03, "bestfit": 91.69, "fgd": 94.15}},
}

// PublishedFor returns the published result of the pod list with the
// given file name, if there is one.
func PublishedFor(file string) (Published, bool) {
	for _, p := range PublishedResults {
		if p.File == file {
			return p, true
		}
	}
	return Published{}, false
}
