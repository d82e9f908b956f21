// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// TestSimAgreementDRA is TestSimAgreement on the DRA path: the same
// sample, its nodes' GPUs published only as ResourceSlices (dra.Build;
// the kwok nodes have no nvidia.com/gpu), placed by gpuplane-scheduler
// (GPUPlacement chooses the node, kube-scheduler's DynamicResources the
// devices) and by the simulator's decision path under --gpu-api dra (the
// core's node, placement.DRAGPUs's devices). Pods of whole GPUs ask
// nvidia.com/gpu (the chart class's extendedResourceName) and, every
// other one, a claim of N devices of class gpu.nvidia.com. Under "shares"
// the slices are published with --dra-shares and a share is a claim of
// its milliGPU (and 1Mi of memory); without, a GPU cannot be shared, so a
// share pod asks a claim of one whole GPU, in the simulator too. Node and
// devices must be the same for every pod.
func TestSimAgreementDRA(t *testing.T) {
	for _, shares := range []bool{false, true} {
		for _, policy := range []string{"fgd", "bestfit"} {
			t.Run(fmt.Sprintf("%s/shares=%v", policy, shares), func(t *testing.T) { testAgreementDRA(t, policy, shares) })
		}
	}
}

func testAgreementDRA(t *testing.T, policy string, shares bool) {
	if testing.Short() {
		t.Skip("starts a control plane and gpuplane-scheduler")
	}
	nodes, pods, constrained, podsFile := agreementSample(t)
	if !shares {
		for i := range pods {
			if pods[i].NumGPU == 1 && pods[i].GPUMilli < 1000 {
				pods[i].GPUMilli = 1000
			}
		}
	}
	simWant, simRatio := simDecisions(t, policy, placement.DRA, nodes, pods, podsFile)

	kwok := make([]kube.Node, len(nodes))
	for i, n := range nodes {
		kwok[i] = kube.Node{Name: n.Name, CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB}
	}
	kc := startCluster(t, kwok)
	installClasses(t, kc.Client)
	var total int64
	for _, n := range nodes {
		publishSlices(t, kc.Client, n.Name, draGPUs(n.GPUs, n.Model, 16<<10), dra.Options{Shares: shares}, nil)
		total += int64(n.GPUs) * 1000
	}
	sp := startScheduler(t, kc, map[string]any{"policy": policy, "tieBreak": "first", "targetWorkloadFile": podsFile})
	templates := map[string]bool{}
	agree, disagree := 0, 0
	var allocated int64
	for i, s := range pods {
		spec := podSpec{name: fmt.Sprintf("p%05d", i), cpu: fmt.Sprintf("%dm", s.CPUMilli), mem: fmt.Sprintf("%dMi", s.MemoryMiB), model: s.GPUSpec}
		got := placeDRAPod(t, kc, sp, spec, s, i, templates)
		if got.node == "" {
			zero := int64(0)
			kc.Client.CoreV1().Pods("default").Delete(t.Context(), spec.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		} else {
			allocated += int64(s.NumGPU) * int64(s.GPUMilli)
		}
		if got == simWant[i] {
			agree++
		} else if disagree++; disagree <= 10 {
			t.Errorf("pod %d (%s: cpu %d, mem %d, %d x %d milli-GPU, models %q): scheduler %v, simulator %v",
				i, s.Name, s.CPUMilli, s.MemoryMiB, s.NumGPU, s.GPUMilli, s.GPUSpec, got, simWant[i])
		}
	}
	t.Logf("%s dra (shares %v): %d nodes, %d pods (%d with a GPU model constraint): %d agree, %d disagree (%.2f%%); GPU allocation ratio: scheduler %.4f, simulator %.4f",
		policy, shares, len(nodes), len(pods), constrained, agree, disagree, 100*float64(agree)/float64(len(pods)), float64(allocated)/float64(total), simRatio)
}

// placeDRAPod creates pod i of the sample in its DRA form and returns
// where it went, its devices as GPU indices (gpu-<minor>, minor = index).
func placeDRAPod(t *testing.T, kc *kube.Cluster, sp *schedulerProc, spec podSpec, s trace.PodSpec, i int, templates map[string]bool) decision {
	t.Helper()
	template := ""
	switch {
	case s.NumGPU == 0:
	case s.GPUMilli < 1000:
		template = fmt.Sprintf("share-%d", s.GPUMilli)
		if !templates[template] {
			createGPUTemplate(t, kc.Client, template, 1, int64(s.GPUMilli))
		}
	case i%2 == 0:
		spec.gpus = int64(s.NumGPU)
	default:
		template = fmt.Sprintf("gpus-%d", s.NumGPU)
		if !templates[template] {
			createGPUTemplate(t, kc.Client, template, int64(s.NumGPU), 0)
		}
	}
	if template != "" {
		templates[template] = true
		createClaimPod(t, kc.Client, spec, template)
	} else {
		createPod(t, kc.Client, spec)
	}
	if s.NumGPU == 0 {
		var got decision
		waitFor(t, sp, "pod "+spec.name+" decided", func() (bool, error) {
			p, err := kc.Client.CoreV1().Pods("default").Get(t.Context(), spec.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got.node = p.Spec.NodeName
			return got.node != "" || unschedulable(p) != "", nil
		})
		return got
	}
	node, devices, _ := waitDRAPod(t, kc.Client, sp, spec.name)
	var idx []string
	for _, d := range strings.Split(devices, ",") {
		if d != "" {
			idx = append(idx, strings.TrimPrefix(d, "gpu-"))
		}
	}
	return decision{node, strings.Join(idx, ",")}
}
