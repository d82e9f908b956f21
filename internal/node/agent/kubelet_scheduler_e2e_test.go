// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestRealKubeletGpuplaneScheduler: gpuplane-scheduler (built from
// cmd/gpuplane-scheduler, the shipped deploy/scheduler/config.yaml, as
// internal/scheduler's e2e tests run it) places 20 pods created at once
// on one real kubelet node whose agent runs with --label-node and
// --scheduler-choice (milli-GPU on): 2 pods of 1 GPU, 2 of 2 GPUs and 16
// of 100 milli-GPU. Every container runs with the GPUs the scheduler
// wrote on its pod (gpuplane.io/gpus), as UUIDs in NVIDIA_VISIBLE_DEVICES,
// and GPUPLANE_GPU_SHARE 100 for the shares; the whole GPUs of the 4 whole
// pods are 6 distinct GPUs, none of them shared; no GPU holds more than
// 1000 milli-GPU. Pods of equal requests are told apart by the
// kubelet's pod-resources view of the pod under admission
// (deviceplugin.Assignments.UseKubelet), so every pod gets exactly its
// own set; before that, 12 of 20 did (equal requests swapped sets).
func TestRealKubeletGpuplaneScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuplane-scheduler and runs a kubelet")
	}
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	e := startRealEnvOn(t, c, realProfile, "version: v1\ngpuplane: {milliGPU: true}\n")
	e.startAgent("--scheduler-choice", "--label-node", "--kubeconfig", c.Kubeconfig)
	e.waitResource(gpuresource.GPU, 8, 8)
	e.waitResource(gpuresource.GPUMilli, 8000, 8000)
	e.poll("the Node's GPU UUIDs", func() error {
		n, err := c.Client.CoreV1().Nodes().Get(e.ctx, e.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Annotations[gpuresource.AnnotationNodeGPUUUIDs] != strings.Join(func() []string {
			var u []string
			for i := range 8 {
				u = append(u, realUUID(i))
			}
			return u
		}(), ",") {
			return fmt.Errorf("annotations %v", n.Annotations)
		}
		return nil
	})

	kube.StartGPUplaneSchedulerT(t, c, kube.Shipped)

	type spec struct {
		name string
		res  corev1.ResourceName
		n    int
	}
	var specs []spec
	for i := range 2 {
		specs = append(specs, spec{fmt.Sprintf("w1-%d", i), gpuresource.GPU, 1}, spec{fmt.Sprintf("w2-%d", i), gpuresource.GPU, 2})
	}
	for i := range 16 {
		specs = append(specs, spec{fmt.Sprintf("s-%d", i), gpuresource.GPUMilli, 100})
	}
	for _, s := range specs {
		if _, err := c.Client.CoreV1().Pods("default").Create(e.ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: s.name},
			Spec: corev1.PodSpec{SchedulerName: "gpuplane", Containers: []corev1.Container{{
				Name: "main", Image: "example.com/work:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{s.res: resource.MustParse(strconv.Itoa(s.n))}},
			}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	for _, s := range specs {
		e.waitRunning(s.name)
	}
	t.Logf("20 pods Running %v after they were created", time.Since(t0).Round(time.Millisecond))

	chosen := map[string][]string{} // request -> the scheduler's sets, as sorted UUID lists joined
	got := map[string][]string{}
	own := 0
	wholeGPUs := map[string]string{}
	milli := map[string]int{}
	for _, s := range specs {
		p, err := e.pod(s.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != e.node {
			t.Errorf("%s on node %q", s.name, p.Spec.NodeName)
		}
		ann := p.Annotations[gpuresource.AnnotationGPUs]
		var want []int
		for _, f := range strings.Split(ann, ",") {
			i, err := strconv.Atoi(f)
			if err != nil {
				e.fail("%s: %s %q", s.name, gpuresource.AnnotationGPUs, ann)
			}
			want = append(want, i)
		}
		key := fmt.Sprintf("%s=%d", s.res, s.n)
		w := strings.Join(realUUIDs(want...), ",")
		v := e.visible(s.name)
		g := strings.Join(v, ",")
		chosen[key] = append(chosen[key], w)
		got[key] = append(got[key], g)
		if w == g {
			own++
		} else {
			t.Errorf("%s: container got %s, the scheduler chose %s for it", s.name, g, w)
		}
		for _, u := range v {
			if s.res == gpuresource.GPU {
				if prev, ok := wholeGPUs[u]; ok {
					t.Errorf("GPU %s given whole to %s and %s", u, prev, s.name)
				}
				wholeGPUs[u] = s.name
			} else {
				milli[u] += s.n
			}
		}
		if s.res == gpuresource.GPUMilli {
			if sh := e.record(s.name).Env[configv1.EnvGPUShare]; sh != "100" {
				t.Errorf("%s: %s %q, want 100", s.name, configv1.EnvGPUShare, sh)
			}
			if len(v) != 1 {
				t.Errorf("%s: %d GPUs for a share", s.name, len(v))
			}
		}
		if p.Annotations[gpuresource.AnnotationAllocated] != "true" {
			t.Errorf("%s not marked %s", s.name, gpuresource.AnnotationAllocated)
		}
	}
	for key := range chosen {
		slices.Sort(chosen[key])
		slices.Sort(got[key])
		if !slices.Equal(chosen[key], got[key]) {
			t.Errorf("%s: containers got %v, the scheduler chose %v", key, got[key], chosen[key])
		}
	}
	if len(wholeGPUs) != 6 {
		t.Errorf("%d whole GPUs given, want 6: %v", len(wholeGPUs), wholeGPUs)
	}
	for u, m := range milli {
		if m > 1000 {
			t.Errorf("GPU %s: %d milli-GPU", u, m)
		}
		if pod, ok := wholeGPUs[u]; ok {
			t.Errorf("GPU %s both whole to %s and shared", u, pod)
		}
	}
	t.Logf("%d of 20 pods got exactly their own choice; shares per GPU %v", own, milli)
}

// TestRealKubeletSchedulerAvoidsUnhealthy is the hand-worked case of
// "health reaches the scheduler" on a real kubelet with gpuplane-scheduler:
// 8 GPUs, pods bound with the choices 0, 1, 2, 4, 5, 6 hold those GPUs; an
// XID 79 on GPU 3 makes the agent drop it from the kubelet's allocatable
// (8 to 7) and write gpuplane.io/unhealthy-gpus=3 on the Node. A 1-GPU pod
// placed by gpuplane-scheduler then gets GPU 7, the only healthy free one
// (before, the scheduler counted 7 GPUs, 0..6, chose GPU 3 and the agent
// refused the pod at admission). A second 1-GPU pod waits, unschedulable;
// when GPU 3 recovers the annotation goes and it runs on GPU 3.
func TestRealKubeletSchedulerAvoidsUnhealthy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuplane-scheduler and runs a kubelet")
	}
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	e := startRealEnvOn(t, c, realProfile, "version: v1\n")
	e.startAgent("--scheduler-choice", "--label-node", "--kubeconfig", c.Kubeconfig)
	e.waitResource(gpuresource.GPU, 8, 8)
	for _, g := range []int{0, 1, 2, 4, 5, 6} {
		name := fmt.Sprintf("held-%d", g)
		e.createPod(name, gpuLimit("1"), map[string]string{gpuresource.AnnotationGPUs: strconv.Itoa(g), gpuresource.AnnotationGPUShare: "1000"})
		e.waitRunning(name)
		if v, want := e.visible(name), realUUIDs(g); !slices.Equal(v, want) {
			t.Fatalf("%s: %v, want %v", name, v, want)
		}
	}
	unhealthy := func(want string) {
		e.poll("gpuplane.io/unhealthy-gpus="+want, func() error {
			n, err := c.Client.CoreV1().Nodes().Get(e.ctx, e.node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got, ok := n.Annotations[gpuresource.AnnotationNodeUnhealthyGPUs]; got != want || ok != (want != "") {
				return fmt.Errorf("annotation %q (present %v)", got, ok)
			}
			return nil
		})
	}
	e.setFaults("faults:\n  - uuid: " + realUUID(3) + "\n    xid: 79\n")
	e.waitResource(gpuresource.GPU, 7, 8)
	unhealthy("3")
	kube.StartGPUplaneSchedulerT(t, c, kube.Shipped)

	scheduled := func(name string) {
		if _, err := c.Client.CoreV1().Pods("default").Create(e.ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{SchedulerName: "gpuplane", Containers: []corev1.Container{{
				Name: "main", Image: "example.com/work:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("1")}},
			}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	scheduled("p")
	e.waitRunning("p")
	if p, _ := e.pod("p"); p.Annotations[gpuresource.AnnotationGPUs] != "7" {
		t.Errorf("p: the scheduler chose %q, want 7", p.Annotations[gpuresource.AnnotationGPUs])
	}
	if v, want := e.visible("p"), realUUIDs(7); !slices.Equal(v, want) {
		t.Errorf("p: %v, want %v", v, want)
	}

	scheduled("q")
	e.poll("q unschedulable", func() error {
		p, err := e.pod("q")
		if err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return nil
			}
		}
		return fmt.Errorf("conditions %v, node %q", p.Status.Conditions, p.Spec.NodeName)
	})
	e.setFaults("faults: []\n")
	e.waitResource(gpuresource.GPU, 8, 8)
	unhealthy("")
	e.waitRunning("q")
	if v, want := e.visible("q"), realUUIDs(3); !slices.Equal(v, want) {
		t.Errorf("q after recovery: %v, want %v", v, want)
	}
}
