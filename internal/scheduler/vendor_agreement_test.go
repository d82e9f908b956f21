// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/snapshot"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// vendorNodes is a mixed cluster as each vendor's node components
// publish it: NVIDIA nodes as gpuplane's agent labels them, AMD nodes
// with AMD's device plugin's amd.com/gpu and its node labeller's labels
// (ROCm/k8s-device-plugin: amd.com/gpu.product-name,
// amd.com/gpu.compute-memory-partition), two MI300X x 8 in CPX/NPS1 (64
// amd.com/gpu each, 8 partitions a GPU) and an MI325X x 8 in SPX, Gaudi
// nodes with Intel's device plugin's habana.ai/gaudi (HabanaAI's plugin
// labels no model: two carry gpuplane.io/gpu.model, one nothing) and a
// CPU node. Names sort in the list's order, as tie-break "first" reads
// them.
func vendorNodes() []kube.Node {
	mem := int64(2 << 20) // 2 TiB in MiB
	amd := func(product, partition string) map[string]string {
		return map[string]string{gpuresource.LabelAMDProductName: product, gpuresource.LabelAMDPartition: partition}
	}
	return []kube.Node{
		{Name: "n0-h100", CPUMilli: 112000, MemoryMiB: mem, GPUs: 8, Model: "H100-80GB"},
		{Name: "n1-h100", CPUMilli: 112000, MemoryMiB: mem, GPUs: 8, Model: "H100-80GB"},
		{Name: "n2-mi300x", CPUMilli: 192000, MemoryMiB: mem, GPUs: 64, Accelerator: gpuresource.AMDGPU, Labels: amd("AMD_Instinct_MI300X", "cpx_nps1")},
		{Name: "n3-mi300x", CPUMilli: 192000, MemoryMiB: mem, GPUs: 64, Accelerator: gpuresource.AMDGPU, Labels: amd("AMD_Instinct_MI300X", "cpx_nps1")},
		{Name: "n4-mi325x", CPUMilli: 192000, MemoryMiB: mem, GPUs: 8, Accelerator: gpuresource.AMDGPU, Labels: amd("AMD_Instinct_MI325X", "spx_nps1")},
		{Name: "n5-gaudi3", CPUMilli: 160000, MemoryMiB: mem, GPUs: 8, Accelerator: gpuresource.Gaudi, Labels: map[string]string{gpuresource.LabelGPUModel: "Gaudi3"}},
		{Name: "n6-gaudi3", CPUMilli: 160000, MemoryMiB: mem, GPUs: 8, Accelerator: gpuresource.Gaudi, Labels: map[string]string{gpuresource.LabelGPUModel: "Gaudi3"}},
		{Name: "n7-gaudi", CPUMilli: 160000, MemoryMiB: mem, GPUs: 8, Accelerator: gpuresource.Gaudi},
		{Name: "n8-cpu", CPUMilli: 64000, MemoryMiB: 256 << 10},
	}
}

// vendorPods writes n pods drawn from a mix of every vendor's resources
// into a pod CSV (its resource column) and returns its path: a fifth
// nvidia.com/gpu, a seventh shares of gpuplane.io/gpu-milli, about a
// third amd.com/gpu (a quarter of them constrained to MI300X, an eighth
// to MI325X), a fifth habana.ai/gaudi (a quarter constrained to Gaudi3),
// the rest CPU only; whole devices 1, 2, 4 or 8.
func vendorPods(t *testing.T, n int) string {
	rng := rand.New(rand.NewPCG(38, 0))
	var b strings.Builder
	b.WriteString("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,resource\n")
	for i := range n {
		cpu, mem := 1000*(1+rng.IntN(16)), 1024*(1+rng.IntN(64))
		k := 1 << rng.IntN(4)
		row := fmt.Sprintf("v%03d,%d,%d,", i, cpu, mem)
		switch r := rng.IntN(100); {
		case r < 20:
			row += fmt.Sprintf("%d,1000,,%s", k, gpuresource.GPU)
		case r < 34:
			row += fmt.Sprintf("1,%d,,%s", 100*(1+rng.IntN(9)), gpuresource.GPUMilli)
		case r < 67:
			spec := ""
			if m := rng.IntN(8); m < 2 {
				spec = "MI300X"
			} else if m == 2 {
				spec = "MI325X"
			}
			row += fmt.Sprintf("%d,1000,%s,%s", k, spec, gpuresource.AMDGPU)
		case r < 87:
			spec := ""
			if rng.IntN(4) == 0 {
				spec = "Gaudi3"
			}
			row += fmt.Sprintf("%d,1000,%s,%s", k, spec, gpuresource.Gaudi)
		default:
			row += "0,0,,"
		}
		b.WriteString(row + "\n")
	}
	path := filepath.Join(t.TempDir(), "pods.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimAgreementVendors places pods of NVIDIA's, AMD's and Intel's
// resources one at a time on a mixed cluster of kwok nodes labelled as
// each vendor's components label them, with the real scheduler and with
// the placement core as `simulate --snapshot` sees the same cluster: the
// simulator's nodes are the snapshot reader's reading of the API
// server's node list (vendor, model, partition mode, GPU count), its pods
// the pod CSV the scheduler's FGD reads as its target workload. Every
// pod must agree on its node and GPUs.
func TestSimAgreementVendors(t *testing.T) {
	for _, policy := range []string{"fgd", "bestfit", "fgdcm"} {
		t.Run(policy, func(t *testing.T) { testVendorAgreement(t, policy) })
	}
}

func testVendorAgreement(t *testing.T, policy string) {
	nodes := vendorNodes()
	podsFile := vendorPods(t, 160)
	pods, err := trace.ReadPodsFile(podsFile)
	if err != nil {
		t.Fatal(err)
	}
	kc := startCluster(t, nodes)
	c := snapshotCluster(t, kc)
	simWant, _ := simPlaceAll(t, policy, placement.DevicePlugin, c, pods, podsFile)
	sp := startScheduler(t, kc, map[string]any{"policy": policy, "tieBreak": "first", "targetWorkloadFile": podsFile})
	agree, placed := 0, map[gpu.Vendor]int{}
	for i, s := range pods {
		kind, _ := s.Resource.SplitClaim()
		spec := podSpec{name: s.Name, cpu: fmt.Sprintf("%dm", s.CPUMilli), mem: fmt.Sprintf("%dMi", s.MemoryMiB), model: s.GPUSpec}
		switch {
		case kind == cluster.ResourceMilli:
			spec.milli = int64(s.GPUMilli)
		case s.NumGPU > 0:
			spec.gpus, spec.resource = int64(s.NumGPU), v1.ResourceName(kind.Name())
		}
		got := decide(t, kc, sp, spec)
		if got.node != "" && s.NumGPU > 0 {
			placed[kind.Vendor()]++
		}
		if got == simWant[i] {
			agree++
		} else if i-agree < 10 {
			t.Errorf("pod %s (%d x %s, %d milli, models %q): scheduler %v, simulator %v", s.Name, s.NumGPU, kind.Name(), s.GPUMilli, s.GPUSpec, got, simWant[i])
		}
	}
	t.Logf("%s: %d nodes, %d pods: %d agree (%.2f%%); GPU pods placed: NVIDIA %d, AMD %d, Intel %d",
		policy, len(nodes), len(pods), agree, 100*float64(agree)/float64(len(pods)), placed[gpu.NVIDIA], placed[gpu.AMD], placed[gpu.Intel])
}

// snapshotCluster is the empty cluster the simulator makes of kc's nodes
// under `simulate --snapshot`: the API server's node list, as `kubectl
// get nodes -o json` prints it, read by the snapshot reader, each node's
// vendor and partition mode as the simulator's engine sets them
// (engine's vendorNode).
func snapshotCluster(t *testing.T, kc *kube.Cluster) *cluster.Cluster {
	list, err := kc.Client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		list.Items[i].Kind, list.Items[i].APIVersion = "Node", "v1"
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": list.Items})
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Read("nodes.json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.New()
	for _, n := range s.Nodes {
		i, err := c.AddNode(n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model)
		if err != nil {
			t.Fatal(err)
		}
		if n.GPUs > 0 {
			c.Nodes[i].Vendor, c.Nodes[i].Partition = n.Vendor, n.Partition
		}
	}
	return c
}
