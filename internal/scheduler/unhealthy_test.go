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
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// sickNode is an 8-GPU node as the node agent and the kubelet show it
// with GPU 3 unhealthy: capacity 8, allocatable 7 (the kubelet leaves the
// unhealthy device out), 8 UUIDs, and the agent's unhealthy annotation.
// GPUs 0-2 and 4-6 are held by 1-GPU pods placed by the scheduler.
func sickNode(unhealthy string) fwk.NodeInfo {
	n := gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 8, "64", "512Gi")
	n.Status.Allocatable = n.Status.Allocatable.DeepCopy()
	n.Status.Allocatable[gpuresource.GPU] = resource.MustParse("7")
	var uuids []string
	for i := range 8 {
		uuids = append(uuids, fmt.Sprintf("GPU-%d", i))
	}
	n.Annotations = map[string]string{gpuresource.AnnotationNodeGPUUUIDs: strings.Join(uuids, ",")}
	if unhealthy != "" {
		n.Annotations[gpuresource.AnnotationNodeUnhealthyGPUs] = unhealthy
	}
	var pods []*v1.Pod
	for _, g := range []int{0, 1, 2, 4, 5, 6} {
		pods = append(pods, newPod(fmt.Sprintf("held-%d", g), "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, fmt.Sprint(g))))
	}
	return nodeInfo(n, pods...)
}

// TestUnhealthyGPUNeverChosen is the hand-worked case of "health reaches
// the scheduler": 8 GPUs, GPU 3 unhealthy, GPUs 0-2 and 4-6 held: the only
// GPU a 1-GPU pod can get is GPU 7. Before, the scheduler counted the
// kubelet's allocatable (7), so it saw GPUs 0..6, chose GPU 3, and the agent
// refused the pod at admission while GPU 7 stayed free.
func TestUnhealthyGPUNeverChosen(t *testing.T) {
	none := func(types.UID) (cluster.GPUSet, bool) { return 0, false }
	st, err := buildNode(sickNode("3"), "", none)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.node.GPUFree); got != "[0 0 0 0 0 0 0 1000]" {
		t.Errorf("GPU free %s, want [0 0 0 0 0 0 0 1000]", got)
	}
	if len(st.uuids) != 8 || st.unhealthy != 1<<3 {
		t.Errorf("uuids %v, unhealthy %b", st.uuids, st.unhealthy)
	}
	p := cluster.Pod{Name: "p", NumGPU: 1, GPUMilli: 1000}
	if got := firstFit(&st.node, &p); got != 1<<7 {
		t.Errorf("a 1-GPU pod fits on GPUs %v, want [7]", got.Indices())
	}

	// Without the annotation, or with one that does not fit the node, the
	// old count stands: 7 GPUs, 0..6, of which GPU 3 is free.
	for _, ann := range []string{"", "8", "x", "-1"} {
		st, err := buildNode(sickNode(ann), "", none)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(st.node.GPUFree); got != "[0 0 0 1000 0 0 0]" || st.unhealthy != 0 {
			t.Errorf("annotation %q: GPU free %s, unhealthy %b; want [0 0 0 1000 0 0 0], none", ann, got, st.unhealthy)
		}
	}
}

// TestUnhealthyReason: a pod that would need the unhealthy GPU waits, and
// the reason says why.
func TestUnhealthyReason(t *testing.T) {
	pl := newTestPlugin(t, "bestfit", "first")
	pod := newPod("p", "1", "1Gi", withGPUs(2))
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	st := pl.Filter(context.Background(), cs, pod, sickNode("3"))
	if st.Code() != fwk.Unschedulable || !strings.Contains(st.Message(), "(GPUs 3 unhealthy)") {
		t.Errorf("Filter: %v %q, want Unschedulable with (GPUs 3 unhealthy)", st.Code(), st.Message())
	}
	one := newPod("q", "1", "1Gi", withGPUs(1))
	cs = framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), cs, one, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	if st := pl.Filter(context.Background(), cs, one, sickNode("3")); !st.IsSuccess() {
		t.Errorf("a 1-GPU pod: %v, want it to fit (GPU 7)", st)
	}
}
