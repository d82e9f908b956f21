// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	apimetrics "github.com/gpuplane/gpuplane/api/metrics"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// TestRealKubeletSchedulerChoice: 20 pods are bound at once to one real
// kubelet node, each with a choice as gpuplane-scheduler writes it in
// PreBind (gpuplane.io/gpus, gpuplane.io/gpu-share), and the agent runs
// with --scheduler-choice. Three pods take whole GPUs (1, 2 and 3 GPUs:
// 5; 0 and 3; 1, 2 and 7), 17 take shares of GPUs 4 and 6 (9 of GPU 4,
// 10 to 90 milli-GPU, 450 in all; 8 of GPU 6, 15 to 85, 400 in all),
// none of them the kubelet's preferred GPUs: for 1 GPU the kubelet's
// preference would be GPU 0, for 2 GPUs 5 and 6, and for every share GPU
// 0 (best fit, ties to the lowest index). Every request differs, so each
// pod's choice is the only one that matches its container's request:
// every container is created with exactly its pod's chosen GPUs
// (NVIDIA_VISIBLE_DEVICES their UUIDs, GPUPLANE_GPU_SHARE its milli-GPU
// for a share), and the agent marks all 20 gpuplane.io/allocated.
func TestRealKubeletSchedulerChoice(t *testing.T) {
	e := startRealEnv(t, realProfile, "version: v1\ngpuplane: {milliGPU: true}\n")
	e.startAgent("--scheduler-choice", "--kubeconfig", e.c.Kubeconfig)
	e.waitResource(gpuresource.GPU, 8, 8)
	e.waitResource(gpuresource.GPUMilli, 8000, 8000)

	type want struct {
		name  string
		res   corev1.ResourceName
		n     int
		gpus  []int
		share int
	}
	wants := []want{
		{"w1", gpuresource.GPU, 1, []int{5}, 1000},
		{"w2", gpuresource.GPU, 2, []int{0, 3}, 1000},
		{"w3", gpuresource.GPU, 3, []int{1, 2, 7}, 1000},
	}
	for i := 1; i <= 9; i++ {
		wants = append(wants, want{fmt.Sprintf("s4-%d", 10*i), gpuresource.GPUMilli, 10 * i, []int{4}, 10 * i})
	}
	for i := 1; i <= 8; i++ {
		wants = append(wants, want{fmt.Sprintf("s6-%d", 10*i+5), gpuresource.GPUMilli, 10*i + 5, []int{6}, 10*i + 5})
	}
	if len(wants) != 20 {
		t.Fatalf("%d pods", len(wants))
	}
	for _, w := range wants {
		var idx []string
		for _, g := range w.gpus {
			idx = append(idx, strconv.Itoa(g))
		}
		e.createPod(w.name, map[corev1.ResourceName]string{w.res: strconv.Itoa(w.n)}, map[string]string{
			gpuresource.AnnotationGPUs:     strings.Join(idx, ","),
			gpuresource.AnnotationGPUShare: strconv.Itoa(w.share),
		})
	}
	for _, w := range wants {
		e.waitRunning(w.name)
	}
	for _, w := range wants {
		if v, want := e.visible(w.name), realUUIDs(w.gpus...); !slices.Equal(v, want) {
			t.Errorf("%s (%s: %d, choice %v): NVIDIA_VISIBLE_DEVICES %v, want %v", w.name, w.res, w.n, w.gpus, v, want)
		}
		share, ok := e.record(w.name).Env[configv1.EnvGPUShare]
		if w.res == gpuresource.GPUMilli && share != strconv.Itoa(w.share) {
			t.Errorf("%s: %s %q, want %d", w.name, configv1.EnvGPUShare, share, w.share)
		}
		if w.res == gpuresource.GPU && ok {
			t.Errorf("%s: %s %q on whole GPUs", w.name, configv1.EnvGPUShare, share)
		}
		p, err := e.pod(w.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Annotations[gpuresource.AnnotationAllocated] != "true" {
			t.Errorf("%s: not marked %s: %v", w.name, gpuresource.AnnotationAllocated, p.Annotations)
		}
	}
	if n := len(e.records()); n != 20 {
		t.Errorf("%d CreateContainer records, want 20", n)
	}
	// The metrics follow the chosen GPUs, not the kubelet's device IDs
	// (none of the choices is what the kubelet picked): each pod's
	// allocation share series are on exactly its chosen GPUs, with its
	// share (w3: 1 on GPUs 1, 2, 7; s4-30: 0.03 on GPU 4).
	shares := func(mfs map[string]*dto.MetricFamily) map[string]map[string]float64 {
		out := map[string]map[string]float64{}
		for _, m := range mfs[apimetrics.DeviceAllocationShare].GetMetric() {
			ls := metricLabels(m)
			if out[ls[apimetrics.LabelPod]] == nil {
				out[ls[apimetrics.LabelPod]] = map[string]float64{}
			}
			out[ls[apimetrics.LabelPod]][ls[apimetrics.LabelUUID]] = m.GetGauge().GetValue()
		}
		return out
	}
	wantShares := map[string]map[string]float64{}
	for _, w := range wants {
		wantShares[w.name] = map[string]float64{}
		for _, u := range realUUIDs(w.gpus...) {
			wantShares[w.name][u] = float64(w.share) / 1000
		}
	}
	var got map[string]map[string]float64
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last allocation shares %v, want %v", got, wantShares)
		}
	})
	e.a.eventually(t, "allocation shares on the chosen GPUs", func(mfs map[string]*dto.MetricFamily) bool {
		got = shares(mfs)
		return reflect.DeepEqual(got, wantShares)
	})
	if l, err := e.c.Client.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 20 {
		t.Errorf("pods: %v", err)
	}
}
