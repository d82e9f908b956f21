// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// TestPublishUnplaced: the reports {} (written: the first), an error,
// {} again (unchanged: not written), {bypass} (written), then the first
// write fails and the next tick's succeeds: 4 patches, the last one's
// value on the Node. The loop ends when its context does, after the
// seventh report.
func TestPublishUnplaced(t *testing.T) {
	bypass := gpuresource.UnplacedPods{"default/bypass": {"5": 1000, "6": 1000}}
	other := gpuresource.UnplacedPods{"default/ds": {"0": 1000}}
	reports := []struct {
		v   gpuresource.UnplacedPods
		err error
	}{{v: gpuresource.UnplacedPods{}}, {err: errors.New("pod-resources: List: unavailable")}, {v: gpuresource.UnplacedPods{}}, {v: bypass}, {v: other}, {v: other}, {v: other}}
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	patches, failOnce := 0, true
	c.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		patches++
		if patches == 3 && failOnce {
			failOnce = false
			return true, nil, errors.New("the API server is away")
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	i := 0
	report := func(context.Context) (gpuresource.UnplacedPods, error) {
		r := reports[i]
		if i++; i == len(reports) {
			cancel()
		}
		return r.v, r.err
	}
	publishUnplaced(ctx, c, "n", report, time.Millisecond) // returns when ctx is done
	if i != len(reports) || patches != 4 {
		t.Errorf("%d reports, %d patches; want %d and 4 ({}, bypass, other failed, other)", i, patches, len(reports))
	}
	n, err := c.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
	if err != nil || n.Annotations["gpuplane.io/unplaced-pods"] != `{"default/ds":{"0":1000}}` {
		t.Errorf("node annotations %v, %v", n.Annotations, err)
	}
}

// TestClearUnplaced: an agent that does not report removes an earlier
// run's report, and keeps the Node's other annotations.
func TestClearUnplaced(t *testing.T) {
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
		"gpuplane.io/unplaced-pods": `{"default/gone":{"3":1000}}`, "gpuplane.io/gpu-uuids": "GPU-0"}}})
	clearUnplaced(context.Background(), c, "n")
	n, err := c.CoreV1().Nodes().Get(context.Background(), "n", metav1.GetOptions{})
	if _, ok := n.Annotations["gpuplane.io/unplaced-pods"]; err != nil || ok || n.Annotations["gpuplane.io/gpu-uuids"] != "GPU-0" {
		t.Errorf("annotations %v, %v; want gpuplane.io/unplaced-pods gone, gpu-uuids kept", n.Annotations, err)
	}
}
