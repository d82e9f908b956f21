// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/testenv"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// agreementSize is the sample of the openb default trace that
// TestSimAgreement places: nodes x pods. The suite runs a small one; the
// figure in docs/scheduler.md comes from GPUPLANE_AGREEMENT=300x1500.
func agreementSize(t *testing.T) (nodes, pods int) {
	nodes, pods = 60, 300
	if s := os.Getenv("GPUPLANE_AGREEMENT"); s != "" {
		a, b, ok := strings.Cut(s, "x")
		n, err1 := strconv.Atoi(a)
		p, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || n < 1 || p < 1 {
			t.Fatalf("GPUPLANE_AGREEMENT=%q: want NODESxPODS, e.g. 300x1500", s)
		}
		nodes, pods = n, p
	}
	return nodes, pods
}

// TestSimAgreement places a sample of the openb default trace one pod at a
// time with the real scheduler on kwok nodes and with the placement core
// as the simulator runs it (a Placer over the same nodes in the same
// order, tie-break "first"), and compares, pod by pod, the node and the
// GPUs chosen. Every pod must agree.
func TestSimAgreement(t *testing.T) {
	for _, policy := range []string{"fgd", "bestfit", "fgdcm"} {
		t.Run(policy, func(t *testing.T) { testAgreement(t, policy) })
	}
}

// agreementSample draws TestSimAgreement's sample: nNodes random nodes of
// the openb GPU node list, named in a random order as the openb
// simulator names them ("%04d-<sn>"), and nPods pods of the default pod
// list drawn with replacement, every tenth GPU pod given the gpu_spec
// "V100M16|V100M32" (the openb pod lists carry none). It returns the pod
// list's path too (the target workload of fgd).
func agreementSample(t *testing.T) (nodes []kube.Node, pods []trace.PodSpec, constrained int, podsFile string) {
	nNodes, nPods := agreementSize(t)
	nodesFile := testenv.Openb(t, "openb_node_list_gpu_node.csv")
	podsFile = testenv.Openb(t, "openb_pod_list_default.csv")
	allNodes, err := trace.ReadNodesFile(nodesFile)
	if err != nil {
		t.Fatal(err)
	}
	allPods, err := trace.ReadPodsFile(podsFile)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 0))
	for i, j := range rng.Perm(len(allNodes))[:nNodes] {
		n := allNodes[j]
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("%04d-%s", i, n.Name), CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, GPUs: n.GPUs, Model: n.Model})
	}
	for len(pods) < nPods {
		p := allPods[rng.IntN(len(allPods))]
		if p.NumGPU > 0 && rng.IntN(10) == 0 {
			p.GPUSpec = "V100M16|V100M32"
			constrained++
		}
		pods = append(pods, p)
	}
	if constrained == 0 {
		t.Fatal("sample has no pod with a GPU model constraint")
	}
	return nodes, pods, constrained, podsFile
}

func testAgreement(t *testing.T, policy string) {
	nodes, pods, constrained, podsFile := agreementSample(t)
	nNodes, nPods := len(nodes), len(pods)

	// The simulator's decisions.
	simWant, simRatio := simDecisions(t, policy, placement.DevicePlugin, nodes, pods, podsFile)

	// The real scheduler's decisions, one pod at a time.
	kc := startCluster(t, nodes)
	sp := startScheduler(t, kc, map[string]any{"policy": policy, "tieBreak": "first", "targetWorkloadFile": podsFile})
	agree, disagree := 0, 0
	var allocated, total int64
	for _, n := range nodes {
		total += int64(n.GPUs) * 1000
	}
	for i, s := range pods {
		spec := podSpec{name: fmt.Sprintf("p%05d", i), cpu: fmt.Sprintf("%dm", s.CPUMilli), mem: fmt.Sprintf("%dMi", s.MemoryMiB), model: s.GPUSpec}
		switch {
		case s.NumGPU == 1 && s.GPUMilli < 1000:
			spec.milli = int64(s.GPUMilli)
		case s.NumGPU > 0:
			spec.gpus = int64(s.NumGPU)
		}
		got := decide(t, kc, sp, spec)
		if got.node != "" {
			allocated += int64(s.NumGPU) * int64(s.GPUMilli)
		}
		if got == simWant[i] {
			agree++
		} else {
			disagree++
			if disagree <= 10 {
				t.Errorf("pod %d (%s: cpu %d, mem %d, %d x %d milli-GPU, models %q): scheduler %v, simulator %v",
					i, s.Name, s.CPUMilli, s.MemoryMiB, s.NumGPU, s.GPUMilli, s.GPUSpec, got, simWant[i])
			}
		}
	}
	realRatio := float64(allocated) / float64(total)
	t.Logf("%s: %d nodes, %d pods (%d with a GPU model constraint): %d agree, %d disagree (%.2f%%); GPU allocation ratio: scheduler %.4f, simulator %.4f",
		policy, nNodes, nPods, constrained, agree, disagree, 100*float64(agree)/float64(len(pods)), realRatio, simRatio)
}

// decide creates the pod of spec and waits for the scheduler's decision:
// bound (with its GPUs' annotation, for a pod of GPUs) or unschedulable.
// A refused pod is deleted, so that no later event binds it out of order.
func decide(t *testing.T, kc *kube.Cluster, sp *schedulerProc, spec podSpec) decision {
	createPod(t, kc.Client, spec)
	var got decision
	waitFor(t, sp, "pod "+spec.name+" decided", func() (bool, error) {
		p, err := kc.Client.CoreV1().Pods("default").Get(t.Context(), spec.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" && (spec.gpus == 0 && spec.milli == 0 || p.Annotations[gpuresource.AnnotationGPUs] != "") {
			got = decision{p.Spec.NodeName, p.Annotations[gpuresource.AnnotationGPUs]}
			return true, nil
		}
		return unschedulable(p) != "", nil
	})
	if got.node == "" {
		zero := int64(0)
		kc.Client.CoreV1().Pods("default").Delete(t.Context(), spec.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}
	return got
}

// decision is where a pod went: its node and GPU indices ("0,3"); zero
// when refused.
type decision struct {
	node string
	gpus string
}

// simDecisions places pods one at a time as the simulator does: a Placer
// of policy (its GPU choice made by api, placement.WithGPUAPI) over the
// nodes in order, tie-break first. It returns each pod's decision and the
// GPU allocation ratio at the end.
func simDecisions(t *testing.T, policy string, api placement.GPUAPI, nodes []kube.Node, pods []trace.PodSpec, podsFile string) ([]decision, float64) {
	c := cluster.New()
	for _, n := range nodes {
		if _, err := c.AddNode(n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model); err != nil {
			t.Fatal(err)
		}
	}
	return simPlaceAll(t, policy, api, c, pods, podsFile)
}

// simPlaceAll is simDecisions on the empty cluster c.
func simPlaceAll(t *testing.T, policy string, api placement.GPUAPI, c *cluster.Cluster, pods []trace.PodSpec, podsFile string) ([]decision, float64) {
	tw, err := scheduler.TargetWorkload(podsFile, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := placement.New(policy, tw)
	if err != nil {
		t.Fatal(err)
	}
	base := pol
	pol = placement.WithGPUAPI(pol, api)
	differ, gpuPods := 0, 0 // under DRA: pods whose GPUs the policy itself would choose otherwise
	pl := placement.NewPlacer(pol, placement.TieFirst, rand.New(rand.NewPCG(1, 0)))
	simWant := make([]decision, len(pods))
	for i, s := range pods {
		p := simPod(t, s)
		ni, gpus, ok := pl.Place(c, &p)
		if !ok {
			continue
		}
		if api == placement.DRA && p.NumGPU > 0 {
			gpuPods++
			if base.SelectGPUs(base.PreScore(&p), &c.Nodes[ni], &p, rand.New(rand.NewPCG(2, 0))) != gpus {
				differ++
			}
		}
		if err := c.Allocate(ni, &p, gpus); err != nil {
			t.Fatal(err)
		}
		simWant[i] = decision{c.Nodes[ni].Name, gpuList(gpus)}
	}
	if api == placement.DRA {
		t.Logf("%s: of %d GPU pods placed, %d get other GPUs from upstream's DRA allocator than %s's own choice would give on the same node", policy, gpuPods, differ, policy)
	}
	return simWant, 1 - float64(c.FreeGPUMilli())/float64(c.TotalGPUMilli())
}

// simPod is a pod list's pod as the simulator places it: its resource
// kind (the pod CSV's resource column) and its gpu_spec's models.
func simPod(t *testing.T, s trace.PodSpec) cluster.Pod {
	m, err := gpu.ParseModels(s.GPUSpec)
	if err != nil {
		t.Fatal(err)
	}
	kind, _ := s.Resource.SplitClaim()
	return cluster.Pod{Name: s.Name, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, NumGPU: int(s.NumGPU), GPUMilli: int64(s.GPUMilli), Models: cluster.ModelSet(m), Resource: kind}
}

func gpuList(s cluster.GPUSet) string {
	idx := s.Indices()
	out := make([]string, len(idx))
	for i, g := range idx {
		out[i] = strconv.Itoa(g)
	}
	return strings.Join(out, ",")
}
