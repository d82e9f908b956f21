// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// A bound pod whose annotation disagrees with the scheduler's record holds
// both the recorded and the claimed GPUs: worked by hand on an 8-GPU node,
// pod a (1 GPU) recorded on GPU 0 and claiming 7, pod b (300 milli-GPU)
// recorded on GPU 1 and claiming 1 and 2 (where pod c already holds 800,
// so 200 are left to hold), pod d (2 GPUs) recorded on 4,5 with its
// annotation removed: free is GPU 0 0, 1 700, 2 0, 3 1000, 4 0, 5 0, 6
// 1000, 7 0. CPU and memory are held once per pod.
func TestBuildNodeConflict(t *testing.T) {
	ni := nodeInfo(gpuNode("n1", "T4", 8, "32", "128Gi"),
		newPod("a", "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "7")),
		newPod("b", "1", "1Gi", withMilli(300), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "1,2")),
		newPod("c", "1", "1Gi", withMilli(800), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "2")),
		newPod("d", "1", "1Gi", withGPUs(2), onNode("n1")),
	)
	nc := newNodeCache()
	nc.reserve("uid-a", "n1", 1<<0)
	nc.reserve("uid-b", "n1", 1<<1)
	nc.reserve("uid-d", "n1", 1<<4|1<<5)
	st, err := buildNode(ni, "", nc.held)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(st.node.GPUFree), "[0 700 0 1000 0 0 1000 0]"; got != want {
		t.Errorf("GPU free %s, want %s", got, want)
	}
	if st.node.CPUFree != 32000-4000 || st.node.MemoryFree != 128*1024-4*1024 {
		t.Errorf("cpu free %d, memory free %d; want 28000, %d", st.node.CPUFree, st.node.MemoryFree, 124*1024)
	}
}

// observePod: the first annotation seen on a bound pod becomes the record;
// a later change that disagrees with it is one conflict, counted once,
// and a change back to the record is none.
func TestObservePodConflict(t *testing.T) {
	pl := newTestPlugin(t, "bestfit", "first")
	registerMetrics.Do(func() { legacyregistry.MustRegister(AnnotationConflicts) }) // as New does
	before, err := testutil.GetCounterMetricValue(AnnotationConflicts)
	if err != nil {
		t.Fatal(err)
	}
	a := newPod("a", "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "0"))
	pl.observePod(nil, a)
	if rec, ok := pl.nodes.held(a.UID); !ok || rec != cluster.GPUSet(1) {
		t.Fatalf("record %v %v, want GPU 0 (first seen)", rec, ok)
	}
	b := a.DeepCopy()
	b.Annotations[gpuresource.AnnotationGPUs] = "7"
	pl.observePod(a, b)
	pl.observePod(b, b.DeepCopy()) // a status update: not a new conflict
	c := b.DeepCopy()
	c.Annotations[gpuresource.AnnotationGPUs] = "0"
	pl.observePod(b, c)
	after, err := testutil.GetCounterMetricValue(AnnotationConflicts)
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := pl.nodes.held(a.UID); rec != cluster.GPUSet(1) {
		t.Errorf("record %v after the change, want GPU 0 still", rec)
	}
	if got := after - before; got != 1 {
		t.Errorf("conflicts counted %v, want 1", got)
	}
}
