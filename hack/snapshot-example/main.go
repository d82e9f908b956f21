// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command snapshot-example writes docs/examples/snapshot.json, the
// `kubectl get nodes,pods -A -o json` List that docs/simulate.md simulates
// with --snapshot, built with the Kubernetes API types as the API server
// lists them (requests defaulted from limits).
//
//	go run ./hack/snapshot-example > docs/examples/snapshot.json
//
// Three GPU nodes: a100-0 (8 A100-80GB, 6 of them held by team-a/train on
// GPUs 2..7), t4-0 and t4-1 (2 T4 each; one of t4-0's held by
// team-b/infer-0). Pending: team-c/big (4 GPUs, A100 or H100 by node
// affinity: only 2 A100s are free, so it waits), team-a/pair (2 GPUs of
// any model), team-b/infer-1 (1 T4 by nodeSelector) and team-b/etl (CPU
// only, with an init container). One pod has ended.
//
// With -nodes and -pods (openb CSV files, or the Alibaba 2025 pod list)
// it writes those instead: every node with its model as the
// nvidia.com/gpu.product label, every pod pending, whole GPUs as
// nvidia.com/gpu, a share as gpuplane.io/gpu-milli, gpu_spec as required
// node affinity (In) on nvidia.com/gpu.product.
//
//	go run ./hack/snapshot-example -nodes NODES.csv -pods PODS.csv > snap.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/trace"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func node(name, product, cpu, mem, gpus string) *v1.Node {
	res := rl("cpu", cpu, "memory", mem, "pods", "110", gpuresource.GPU, gpus)
	return &v1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{gpuresource.LabelGPUProduct: product, gpuresource.LabelGPUCount: gpus}},
		Status:     v1.NodeStatus{Capacity: res, Allocatable: res}}
}

func pod(ns, name string, phase v1.PodPhase, nodeName string, req v1.ResourceList) *v1.Pod {
	return &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:   v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}},
		Status: v1.PodStatus{Phase: phase}}
}

func main() {
	nodesFile := flag.String("nodes", "", "openb node CSV")
	podsFile := flag.String("pods", "", "openb pod CSV or Alibaba 2025 pod list")
	flag.Parse()
	if (*nodesFile == "") != (*podsFile == "") {
		fmt.Fprintln(os.Stderr, "snapshot-example: -nodes and -pods go together")
		os.Exit(2)
	}
	if *nodesFile != "" {
		list, err := fromTrace(*nodesFile, *podsFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "snapshot-example:", err)
			os.Exit(1)
		}
		write(list)
		return
	}
	nodes := []*v1.Node{
		node("a100-0", "NVIDIA-A100-SXM4-80GB", "127500m", "2000Gi", "8"),
		node("t4-0", "Tesla-T4", "103", "500Gi", "2"),
		node("t4-1", "Tesla-T4", "103", "500Gi", "2"),
	}
	train := pod("team-a", "train", v1.PodRunning, "a100-0", rl("cpu", "48", "memory", "600Gi", gpuresource.GPU, "6"))
	train.Annotations = map[string]string{gpuresource.AnnotationGPUs: "2,3,4,5,6,7"}
	infer0 := pod("team-b", "infer-0", v1.PodRunning, "t4-0", rl("cpu", "8", "memory", "32Gi", gpuresource.GPU, "1"))
	big := pod("team-c", "big", v1.PodPending, "", rl("cpu", "32", "memory", "256Gi", gpuresource.GPU, "4"))
	big.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: gpuresource.LabelGPUProduct, Operator: v1.NodeSelectorOpIn, Values: []string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"}}}}}}}}
	pair := pod("team-a", "pair", v1.PodPending, "", rl("cpu", "16", "memory", "128Gi", gpuresource.GPU, "2"))
	infer1 := pod("team-b", "infer-1", v1.PodPending, "", rl("cpu", "8", "memory", "32Gi", gpuresource.GPU, "1"))
	infer1.Spec.NodeSelector = map[string]string{gpuresource.LabelGPUProduct: "Tesla-T4"}
	etl := pod("team-b", "etl", v1.PodPending, "", rl("cpu", "2", "memory", "8Gi"))
	etl.Spec.InitContainers = []v1.Container{{Name: "fetch", Resources: v1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "1Gi")}}}
	done := pod("team-a", "prep", v1.PodSucceeded, "t4-1", rl("cpu", "4", "memory", "16Gi", gpuresource.GPU, "1"))

	list := v1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, n := range nodes {
		list.Items = append(list.Items, runtime.RawExtension{Object: n})
	}
	for _, p := range []*v1.Pod{train, infer0, big, pair, infer1, etl, done} {
		list.Items = append(list.Items, runtime.RawExtension{Object: p})
	}
	write(list)
}

func write(list v1.List) {
	data, err := json.MarshalIndent(&list, "", "    ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(append(data, '\n'))
}

// fromTrace makes a List of a trace's nodes and pods, every pod pending.
func fromTrace(nodesFile, podsFile string) (v1.List, error) {
	list := v1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	nodes, err := trace.ReadNodesFile(nodesFile)
	if err != nil {
		return list, err
	}
	pods, err := trace.ReadPodsAnyFile(podsFile)
	if err != nil {
		return list, err
	}
	for _, n := range nodes {
		gpus := strconv.Itoa(n.GPUs)
		res := rl("cpu", strconv.FormatInt(n.CPUMilli, 10)+"m", "memory", strconv.FormatInt(n.MemoryMiB, 10)+"Mi", "pods", "110", gpuresource.GPU, gpus)
		node := &v1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(n.Name)},
			Status: v1.NodeStatus{Capacity: res, Allocatable: res}}
		if n.GPUs > 0 {
			node.Labels = map[string]string{gpuresource.LabelGPUProduct: n.Model, gpuresource.LabelGPUCount: gpus}
		}
		list.Items = append(list.Items, runtime.RawExtension{Object: node})
	}
	for _, p := range pods {
		req := rl("cpu", strconv.FormatInt(p.CPUMilli, 10)+"m", "memory", strconv.FormatInt(p.MemoryMiB, 10)+"Mi")
		switch {
		case p.NumGPU == 1 && p.GPUMilli < 1000:
			req[gpuresource.GPUMilli] = resource.MustParse(strconv.Itoa(int(p.GPUMilli)))
		case p.NumGPU > 0:
			req[gpuresource.GPU] = resource.MustParse(strconv.Itoa(int(p.NumGPU)))
		}
		pod := pod("default", strings.ToLower(p.Name), v1.PodPending, "", req)
		if p.GPUSpec != "" && p.NumGPU > 0 {
			pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: gpuresource.LabelGPUProduct, Operator: v1.NodeSelectorOpIn, Values: strings.Split(p.GPUSpec, "|")}}}}}}}
		}
		list.Items = append(list.Items, runtime.RawExtension{Object: pod})
	}
	return list, nil
}
