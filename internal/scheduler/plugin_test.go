// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// gpuNode is a Node as the node agent (or the kwok harness) makes it.
func gpuNode(name, product string, gpus int, cpu, mem string) *v1.Node {
	alloc := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse(mem),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	labels := map[string]string{}
	if gpus > 0 {
		alloc[gpuresource.GPU] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	if product != "" {
		labels[gpuresource.LabelGPUProduct] = product
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status:     v1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
}

type podOpt func(*v1.Pod)

func withGPUs(n int64) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests[gpuresource.GPU] = *resource.NewQuantity(n, resource.DecimalSI)
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpuresource.GPU: *resource.NewQuantity(n, resource.DecimalSI)}
	}
}

func withMilli(m int64) podOpt {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests[gpuresource.GPUMilli] = *resource.NewQuantity(m, resource.DecimalSI)
	}
}

func withAnnotation(k, v string) podOpt {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func onNode(n string) podOpt { return func(p *v1.Pod) { p.Spec.NodeName = n } }

func newPod(name, cpu, mem string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse(cpu),
				v1.ResourceMemory: resource.MustParse(mem),
			}},
		}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func nodeInfo(n *v1.Node, pods ...*v1.Pod) fwk.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(n)
	return ni
}

func TestPodRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want cluster.Pod
		err  string
	}{
		{name: "cpu only, memory rounded up to MiB", pod: newPod("a", "1500m", "1025Ki"),
			want: cluster.Pod{CPUMilli: 1500, MemoryMiB: 2}},
		{name: "two whole GPUs", pod: newPod("a", "8", "32Gi", withGPUs(2)),
			want: cluster.Pod{CPUMilli: 8000, MemoryMiB: 32768, NumGPU: 2, GPUMilli: 1000, Resource: cluster.ResourceGPU}},
		{name: "a share of 300 milli-GPU", pod: newPod("a", "4", "15258Mi", withMilli(300)),
			want: cluster.Pod{CPUMilli: 4000, MemoryMiB: 15258, NumGPU: 1, GPUMilli: 300, Resource: cluster.ResourceMilli}},
		{name: "a share of 1000 is one GPU", pod: newPod("a", "1", "1Gi", withMilli(1000)),
			want: cluster.Pod{CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, Resource: cluster.ResourceMilli}},
		{name: "share of 0", pod: newPod("a", "1", "1Gi", withMilli(0)),
			err: "gpuplane.io/gpu-milli 0 out of range 1..1000"},
		{name: "share above 1000", pod: newPod("a", "1", "1Gi", withMilli(1500)),
			err: "gpuplane.io/gpu-milli 1500 out of range 1..1000"},
		{name: "share with two GPUs", pod: newPod("a", "1", "1Gi", withMilli(500), withGPUs(2)),
			err: "gpuplane.io/gpu-milli applies to one GPU, but nvidia.com/gpu is 2"},
		{name: "unknown GPU model", pod: newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, "A100-80GB|B300")),
			err: `unknown GPU model "B300"`},
		{name: "model on a pod without GPUs", pod: newPod("a", "1", "1Gi", withAnnotation(gpuresource.AnnotationGPUModel, "T4")),
			err: "on a pod that asks for no GPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := podRequest(tc.pod)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Name = ""
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The node state is capacity minus the bound pods, each on the GPUs its
// annotation names; a GPU pod without one (bound by another scheduler) is
// counted on the first GPUs that hold it.
func TestBuildNode(t *testing.T) {
	n := gpuNode("n1", "Tesla-V100-SXM2-16GB", 4, "32", "128Gi")
	ni := nodeInfo(n,
		newPod("a", "2", "4Gi", withMilli(300), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "2")),
		newPod("b", "4", "8Gi", withGPUs(2), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "0,3")),
		newPod("c", "1", "1Gi", withMilli(500), onNode("n1")), // no annotation: first GPU with 500 free is GPU 1
		newPod("d", "1", "1Gi", onNode("n1")),
	)
	st, err := buildNode(ni, "", func(types.UID) (cluster.GPUSet, bool) { return 0, false })
	if err != nil {
		t.Fatal(err)
	}
	if st.reason != "" {
		t.Fatalf("reason %q", st.reason)
	}
	if st.node.Model != "V100M16" {
		t.Errorf("model %q, want V100M16 (from the NVML product name)", st.node.Model)
	}
	wantGPU := []int64{0, 500, 700, 0}
	for i, f := range st.node.GPUFree {
		if f != wantGPU[i] {
			t.Errorf("GPU %d free %d, want %d (all %v)", i, f, wantGPU[i], st.node.GPUFree)
		}
	}
	if st.node.CPUFree != 32000-8000 || st.node.MemoryFree != 128*1024-14*1024 {
		t.Errorf("cpu free %d, memory free %d; want 24000, %d", st.node.CPUFree, st.node.MemoryFree, 114*1024)
	}
}

// A malformed choice on a bound pod (edited by hand) counts the pod on the
// first GPUs that hold it instead of failing every cycle on the node.
func TestBuildNodeBadAnnotation(t *testing.T) {
	ni := nodeInfo(gpuNode("n1", "T4", 2, "8", "32Gi"),
		newPod("a", "1", "1Gi", withMilli(400), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "x")))
	st, err := buildNode(ni, "", func(types.UID) (cluster.GPUSet, bool) { return 0, false })
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.node.GPUFree); got != "[600 1000]" {
		t.Errorf("GPU free %s, want [600 1000]", got)
	}
}

func TestFilterReasons(t *testing.T) {
	pl := newTestPlugin(t, "bestfit", "first")
	full := gpuNode("full", "T4", 1, "8", "32Gi")
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		ni     fwk.NodeInfo
		code   fwk.Code
		reason string
	}{
		{"GPU node without labels", newPod("p", "1", "1Gi", withGPUs(1)),
			nodeInfo(gpuNode("bare", "", 8, "8", "32Gi")), fwk.UnschedulableAndUnresolvable, "node has no GPU labels (nvidia.com/gpu.product)"},
		{"GPU taken", newPod("p", "1", "1Gi", withMilli(600)),
			nodeInfo(full, newPod("q", "1", "1Gi", withMilli(500), onNode("full"), withAnnotation(gpuresource.AnnotationGPUs, "0"))),
			fwk.Unschedulable, "Insufficient nvidia.com/gpu"},
		{"model not allowed", newPod("p", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, "A100-80GB")),
			nodeInfo(full), fwk.Unschedulable, "not allowed"},
		{"fits", newPod("p", "1", "1Gi", withMilli(400)),
			nodeInfo(full, newPod("q", "1", "1Gi", withMilli(500), onNode("full"), withAnnotation(gpuresource.AnnotationGPUs, "0"))),
			fwk.Success, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkFilter(t, pl, tc.pod, tc.ni, tc.code, tc.reason) })
	}
}

// checkFilter runs PreFilter and Filter of pod on node ni and wants code
// with a message containing reason.
func checkFilter(t *testing.T, pl *Plugin, pod *v1.Pod, ni fwk.NodeInfo, code fwk.Code, reason string) {
	t.Helper()
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	st := pl.Filter(context.Background(), cs, pod, ni)
	if st.Code() != code || !strings.Contains(st.Message(), reason) {
		t.Errorf("got %v %q, want %v containing %q", st.Code(), st.Message(), code, reason)
	}
}

func TestPreFilterRefusesBadRequests(t *testing.T) {
	pl := newTestPlugin(t, "fgd", "random")
	st := func(p *v1.Pod) *fwk.Status {
		_, s := pl.PreFilter(context.Background(), framework.NewCycleState(), p, nil)
		return s
	}
	if s := st(newPod("p", "1", "1Gi", withMilli(1001))); s.Code() != fwk.UnschedulableAndUnresolvable {
		t.Errorf("share above 1000: %v", s)
	}
	if s := st(newPod("p", "1", "1Gi", withGPUs(3))); !s.IsSuccess() {
		t.Errorf("3 GPUs: %v", s)
	}
}

// Under tie-break "first" exactly one node keeps the top score: the
// smallest name among the best, as the openb simulator's selectHost.
func TestNormalizeScoreFirst(t *testing.T) {
	pl := newTestPlugin(t, "fgd", "first")
	scores := fwk.NodeScoreList{{Name: "0003-b", Score: 90}, {Name: "0001-c", Score: 90}, {Name: "0002-a", Score: 100}, {Name: "0000-d", Score: 100}}
	if st := pl.NormalizeScore(context.Background(), nil, nil, scores); !st.IsSuccess() {
		t.Fatal(st)
	}
	want := []int64{90, 90, 99, 100}
	for i, s := range scores {
		if s.Score != want[i] {
			t.Errorf("%s: %d, want %d", s.Name, s.Score, want[i])
		}
	}
	// All zero: the first name wins.
	// BestFit rescales over the feasible nodes first (min-max: 50 -> 0,
	// 70 -> 100, 60 -> 50), then the tie-break leaves one 100.
	pl = newTestPlugin(t, "bestfit", "first")
	scores = fwk.NodeScoreList{{Name: "b", Score: 50}, {Name: "c", Score: 70}, {Name: "a", Score: 60}, {Name: "d", Score: 70}}
	pl.NormalizeScore(context.Background(), nil, nil, scores)
	if got := fmt.Sprint(scores); got != "[{b 0} {c 100} {a 50} {d 99}]" {
		t.Errorf("bestfit: %s", got)
	}
	scores = fwk.NodeScoreList{{Name: "b", Score: 0}, {Name: "a", Score: 0}}
	pl.NormalizeScore(context.Background(), nil, nil, scores)
	if scores[0].Score != 0 || scores[1].Score != 100 {
		t.Errorf("all zero: %v", scores)
	}
}

func newTestPlugin(t testing.TB, policy, tie string) *Plugin {
	t.Helper()
	args := Args{Policy: policy, TieBreak: tie}
	p, tb, err := args.build()
	if err != nil {
		t.Fatal(err)
	}
	return &Plugin{policy: p, tie: tb, nodes: newNodeCache(), rng: nil}
}

// The placement core names the GPU resource in its reasons without
// importing the configuration package; both must say the same.
func TestGPUResourceName(t *testing.T) {
	if cluster.GPUResource != string(gpuresource.GPU) {
		t.Errorf("cluster.GPUResource %q, api/resource GPU %q", cluster.GPUResource, gpuresource.GPU)
	}
}
