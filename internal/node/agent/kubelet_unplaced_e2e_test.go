// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/testenv/kube/cri"
)

// TestRealKubeletUnplacedPods is issue 39 on a real kubelet (fake CRI
// runtime), a real kube-apiserver and kube-controller-manager and the
// real gpuplane-scheduler, the agent with --scheduler-choice and
// --label-node on 8 GPUs:
//
//  1. g0 and g4, pods with the scheduler's choice GPUs 0 and 4, run there.
//  2. bypass, created with spec.nodeName asking 2 GPUs, runs on the
//     kubelet's pick, which the agent steers off GPUs 0 and 4; the agent
//     reports it on the Node (gpuplane.io/unplaced-pods).
//  3. forged, created with spec.nodeName and a gpuplane.io/gpus it wrote
//     itself naming one of bypass's GPUs, is refused: it fails admission
//     with the reason naming the GPU and default/bypass.
//  4. g0 and g4 are deleted; gpuplane-scheduler places s1 and s2 (1 GPU
//     each): both run, on none of bypass's GPUs (before, the scheduler
//     counted bypass on the first free GPUs and put them on its GPUs).
//  5. a DaemonSet's pod and another scheduler's pod (both bound by the
//     test, as a second scheduler would, with 1 GPU each) run on the
//     kubelet's pick.
//  6. gpuplane-scheduler places s3 and s4 on the last 2 free GPUs; s5
//     waits, unschedulable: the scheduler counts every pod on its real
//     GPUs.
//
// After every step, from the kubelet's pod-resources List: no device ID in
// two pods' lists, and no GPU in two of those pods' containers (their
// NVIDIA_VISIBLE_DEVICES, the GPUs each was really given). In a run:
// bypass on GPUs 5 and 6 (as in the issue), s1 and s2 on 0 and 1, the
// DaemonSet's pod on 2, the other scheduler's on 3, s3 and s4 on 4 and 7.
func TestRealKubeletUnplacedPods(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuplane-scheduler and runs a kubelet")
	}
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	e := startRealEnvOn(t, c, realProfile, "version: v1\n")
	e.startAgent("--scheduler-choice", "--label-node", "--kubeconfig", c.Kubeconfig, "--pod-resources-interval", "200ms")
	e.waitResource(gpuresource.GPU, 8, 8)
	w, err := podresources.NewWatcher(e.k.PodResourcesSocket, time.Second, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	indexOf := map[string]int{}
	for i := range 8 {
		indexOf[realUUID(i)] = i
	}
	// real is the GPU indices the pod's container really got.
	real := func(ns, pod string) []int {
		recs := cri.Find(e.records(), ns, pod, "main")
		if len(recs) == 0 {
			e.fail("no CreateContainer record of %s/%s/main", ns, pod)
		}
		var out []int
		for _, u := range strings.Split(recs[len(recs)-1].Env["NVIDIA_VISIBLE_DEVICES"], ",") {
			i, ok := indexOf[u]
			if !ok {
				e.fail("%s/%s: NVIDIA_VISIBLE_DEVICES names %q, no GPU of the node", ns, pod, u)
			}
			out = append(out, i)
		}
		sort.Ints(out)
		return out
	}
	// noGPUTwice asserts the node's truth after a step and returns the
	// real GPUs of each pod the kubelet lists with GPUs.
	noGPUTwice := func(step string) map[string][]int {
		t.Helper()
		m, err := w.List(e.ctx)
		if err != nil {
			e.fail("%s: pod-resources: %v", step, err)
		}
		byID := map[string]string{}
		pods := map[string]bool{}
		for _, a := range m.Allocations {
			if a.ResourceName != string(gpuresource.GPU) {
				continue
			}
			pod := a.Owner.Namespace + "/" + a.Owner.Pod
			if prev, ok := byID[a.DeviceID]; ok && prev != pod {
				t.Errorf("%s: device %s in the lists of %s and %s", step, a.DeviceID, prev, pod)
			}
			byID[a.DeviceID] = pod
			pods[pod] = true
		}
		out := map[string][]int{}
		holder := map[int]string{}
		for pod := range pods {
			ns, name, _ := strings.Cut(pod, "/")
			out[pod] = real(ns, name)
			for _, g := range out[pod] {
				if prev, ok := holder[g]; ok {
					t.Errorf("%s: GPU %d given to %s and %s", step, g, prev, pod)
				}
				holder[g] = pod
			}
		}
		t.Logf("%s: GPUs %v", step, out)
		return out
	}
	// reported waits until the agent's report names exactly these pods.
	reported := func(pods ...string) gpuresource.UnplacedPods {
		var v gpuresource.UnplacedPods
		slices.Sort(pods)
		e.poll(fmt.Sprintf("%s reporting %v", gpuresource.AnnotationNodeUnplacedPods, pods), func() error {
			n, err := c.Client.CoreV1().Nodes().Get(e.ctx, e.node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v = nil
			if err := json.Unmarshal([]byte(n.Annotations[gpuresource.AnnotationNodeUnplacedPods]), &v); err != nil {
				return err
			}
			var got []string
			for p := range v {
				got = append(got, p)
			}
			slices.Sort(got)
			if !slices.Equal(got, pods) {
				return fmt.Errorf("reported %v", v)
			}
			return nil
		})
		return v
	}
	scheduled := func(name, scheduler string) {
		if _, err := c.Client.CoreV1().Pods("default").Create(e.ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{
				Name: "main", Image: "example.com/work:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("1")}},
			}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(name string) {
		if err := c.Client.CoreV1().Pods("default").Bind(e.ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: e.node},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// 1. gpuplane's pods on GPUs 0 and 4.
	for _, g := range []int{0, 4} {
		name := fmt.Sprintf("g%d", g)
		e.createPod(name, gpuLimit("1"), map[string]string{gpuresource.AnnotationGPUs: strconv.Itoa(g), gpuresource.AnnotationGPUShare: "1000"})
		e.waitRunning(name)
	}
	noGPUTwice("g0 and g4")
	reported()

	// 2. The bypass pod.
	e.createPod("bypass", gpuLimit("2"), nil)
	e.waitRunning("bypass")
	got := noGPUTwice("bypass")
	bypass := got["default/bypass"]
	if len(bypass) != 2 || slices.Contains(bypass, 0) || slices.Contains(bypass, 4) {
		t.Fatalf("bypass on GPUs %v, want 2 GPUs, neither 0 nor 4", bypass)
	}
	if v := reported("default/bypass"); len(v["default/bypass"]) != 2 || v["default/bypass"][strconv.Itoa(bypass[0])] != 1000 || v["default/bypass"][strconv.Itoa(bypass[1])] != 1000 {
		t.Errorf("bypass reported %v, want GPUs %v", v, bypass)
	}

	// 3. A pod that names one of bypass's GPUs itself.
	e.createPod("forged", gpuLimit("1"), map[string]string{gpuresource.AnnotationGPUs: strconv.Itoa(bypass[0]), gpuresource.AnnotationGPUShare: "1000"})
	_, msg := e.waitFailed("forged")
	if want := fmt.Sprintf("GPU %d (%s) is in use by container main of pod default/bypass", bypass[0], realUUID(bypass[0])); !strings.Contains(msg, want) {
		t.Errorf("forged failed with %q, want %q in it", msg, want)
	}
	noGPUTwice("forged refused")

	// 4. Deletions, then gpuplane-scheduler's pods.
	kube.StartGPUplaneSchedulerT(t, c, kube.Shipped)
	e.deletePod("g0")
	e.deletePod("g4")
	noGPUTwice("g0 and g4 deleted")
	for _, s := range []string{"s1", "s2"} {
		scheduled(s, "gpuplane")
	}
	for _, s := range []string{"s1", "s2"} {
		e.waitRunning(s)
	}
	got = noGPUTwice("s1 and s2")
	for _, s := range []string{"s1", "s2"} {
		p, err := e.pod(s)
		if err != nil {
			t.Fatal(err)
		}
		if g := got["default/"+s]; len(g) != 1 || strconv.Itoa(g[0]) != p.Annotations[gpuresource.AnnotationGPUs] || slices.Contains(bypass, g[0]) {
			t.Errorf("%s on GPUs %v, the scheduler chose %q; bypass holds %v", s, g, p.Annotations[gpuresource.AnnotationGPUs], bypass)
		}
	}

	// 5. A DaemonSet's pod and another scheduler's pod, bound by the test.
	labels := map[string]string{"app": "gpu-ds"}
	if _, err := c.Client.AppsV1().DaemonSets("default").Create(e.ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-ds"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{SchedulerName: "second", Containers: []corev1.Container{{
					Name: "main", Image: "example.com/ds:1",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("1")}},
				}}},
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ds string
	e.poll("the DaemonSet's pod", func() error {
		l, err := c.Client.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=gpu-ds"})
		if err != nil {
			return err
		}
		if len(l.Items) != 1 {
			return fmt.Errorf("%d pods", len(l.Items))
		}
		ds = l.Items[0].Name
		return nil
	})
	bind(ds)
	scheduled("other", "second")
	bind("other")
	e.waitRunning(ds)
	e.waitRunning("other")
	got = noGPUTwice("DaemonSet and second scheduler")
	reported("default/bypass", "default/"+ds, "default/other")

	// 6. The last two free GPUs, then none.
	for _, s := range []string{"s3", "s4"} {
		scheduled(s, "gpuplane")
	}
	for _, s := range []string{"s3", "s4"} {
		e.waitRunning(s)
	}
	got = noGPUTwice("s3 and s4")
	all := map[int]bool{}
	for _, g := range got {
		for _, i := range g {
			all[i] = true
		}
	}
	if len(all) != 8 {
		t.Errorf("GPUs in use %v, want all 8", got)
	}
	scheduled("s5", "gpuplane")
	e.poll("s5 unschedulable", func() error {
		p, err := e.pod("s5")
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
	noGPUTwice("s5 waits")
}
