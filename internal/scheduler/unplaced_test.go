// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// reportingNode is an 8-GPU node of 64 CPUs whose agent reports the pods
// the scheduler did not place as report ("": no report).
func reportingNode(report string) *v1.Node {
	n := gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 8, "64", "512Gi")
	if report != "" {
		n.Annotations = map[string]string{gpuresource.AnnotationNodeUnplacedPods: report}
	}
	return n
}

// TestUnplacedPodsCounted is the case worked by hand: gpuplane
// pods a (GPU 0) and b (GPU 4), each 1 CPU, and "bypass", created with
// spec.nodeName asking 2 GPUs and 2 CPUs, which the kubelet put on GPUs 5
// and 6.
func TestUnplacedPodsCounted(t *testing.T) {
	none := func(types.UID) (cluster.GPUSet, bool) { return 0, false }
	a := newPod("a", "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "0"))
	b := newPod("b", "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "4"))
	bypass := newPod("bypass", "2", "1Gi", withGPUs(2), onNode("n1"))
	failed := newPod("failed", "1", "1Gi", withGPUs(1), onNode("n1"))
	failed.Status.Phase = v1.PodFailed
	liar := newPod("liar", "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "1"))
	share := newPod("share", "1", "1Gi", withMilli(250), onNode("n1"))
	both := newPod("both", "1", "1Gi", withGPUs(1), withMilli(500), onNode("n1"))
	placedShare := newPod("placed-share", "1", "1Gi", withMilli(500), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "3"))
	for _, tc := range []struct {
		name   string
		report string
		pods   []*v1.Pod
		free   string // GPUFree
		cpu    int64  // CPUFree, millicores
	}{
		{"no report: the old guess, bypass on the first free GPUs 1 and 2", "", []*v1.Pod{a, b, bypass},
			"[0 0 0 1000 0 1000 1000 1000]", 60000},
		{"reported on 5 and 6: 1, 2, 3, 7 free", `{"default/bypass":{"5":1000,"6":1000}}`, []*v1.Pod{a, b, bypass},
			"[0 1000 1000 1000 0 0 0 1000]", 60000},
		{"a and b deleted: 5 and 6 stay held", `{"default/bypass":{"5":1000,"6":1000}}`, []*v1.Pod{bypass},
			"[1000 1000 1000 1000 1000 0 0 1000]", 62000},
		{"reporting, bypass not yet reported: every GPU a and b do not hold is held", `{}`, []*v1.Pod{a, b, bypass},
			"[0 0 0 0 0 0 0 0]", 60000},
		{"a failed pod the agent does not report holds nothing", `{}`, []*v1.Pod{a, failed},
			"[0 1000 1000 1000 1000 1000 1000 1000]", 62000},
		{"a pod whose annotation names GPU 1 and the agent reports on GPU 2: both held", `{"default/liar":{"2":1000}}`, []*v1.Pod{liar},
			"[1000 0 0 1000 1000 1000 1000 1000]", 63000},
		{"a reported share of 250 beside a placed share of 500 on GPU 3: 250 left", `{"default/share":{"3":250}}`, []*v1.Pod{share, placedShare},
			"[1000 1000 1000 250 1000 1000 1000 1000]", 62000},
		{"a reported pod not (yet) in the scheduler's cache is held all the same", `{"kube-system/gone":{"7":1000}}`, []*v1.Pod{a},
			"[0 1000 1000 1000 1000 1000 1000 0]", 63000},
		{"reporting, a pod asking whole GPUs and a share at once (refused by the scheduler) not yet reported: all held", `{}`, []*v1.Pod{a, both},
			"[0 0 0 0 0 0 0 0]", 62000},
		{"the same pod reported on GPU 2", `{"default/both":{"2":1000}}`, []*v1.Pod{a, both},
			"[0 1000 0 1000 1000 1000 1000 1000]", 62000},
		{"a malformed report is none: the old guess", `{"default/bypass":[5,6]}`, []*v1.Pod{a, b, bypass},
			"[0 0 0 1000 0 1000 1000 1000]", 60000},
		{"GPU indices and shares out of range are left out", `{"default/bypass":{"5":1000,"x":1000,"64":1000,"6":0,"7":1001}}`, []*v1.Pod{bypass},
			"[1000 1000 1000 1000 1000 0 1000 1000]", 62000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := buildNode(nodeInfo(reportingNode(tc.report), tc.pods...), "", none)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(st.node.GPUFree); got != tc.free || st.node.CPUFree != tc.cpu {
				t.Errorf("GPU free %s, CPU free %d; want %s, %d", got, st.node.CPUFree, tc.free, tc.cpu)
			}
		})
	}
}

// TestUnplacedReportRefreshes: a change of the node's report is a new
// NodeInfo generation, so the cached state is rebuilt; and a node
// annotation change queues the pods the plugin rejected.
func TestUnplacedReportRefreshes(t *testing.T) {
	nc := newNodeCache()
	ni := nodeInfo(reportingNode(`{}`), newPod("bypass", "2", "1Gi", withGPUs(2), onNode("n1")))
	st, err := nc.get(ni)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.node.GPUFree); got != "[0 0 0 0 0 0 0 0]" {
		t.Fatalf("bypass not reported yet: GPU free %s", got)
	}
	ni.SetNode(reportingNode(`{"default/bypass":{"5":1000,"6":1000}}`))
	if st, err = nc.get(ni); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.node.GPUFree); got != "[1000 1000 1000 1000 1000 0 0 1000]" {
		t.Errorf("bypass reported on 5 and 6: GPU free %s", got)
	}

	pl := &Plugin{}
	evs, err := pl.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Event.Resource == fwk.Node && e.Event.ActionType&fwk.UpdateNodeAnnotation != 0 {
			found = true
			if h, err := e.QueueingHintFn(klog.Background(), newPod("next", "1", "1Gi", withGPUs(2)), nil, nil); err != nil || h != fwk.Queue {
				t.Errorf("a GPU pod on a node annotation change: %v, %v; want Queue", h, err)
			}
		}
	}
	if !found {
		t.Error("no node annotation event registered")
	}
}
