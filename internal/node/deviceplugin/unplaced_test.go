// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/node/podresources/podresourcestest"
)

// TestUnplaced: a node of 4 GPUs, the kubelet's pod-resources served over
// a real unix socket.
//   - ml/ok: the scheduler's choice GPU 0, given (the kubelet counts it on
//     GPU 3): placed, not reported.
//   - ml/bypass: no choice, the kubelet's GPU 1: {"1":1000}.
//   - ml/liar: wrote gpuplane.io/gpus "3" itself and holds the kubelet's
//     GPU 2: {"2":1000}.
//   - ml/share: no choice, 250 gpu-milli units of GPU 3: {"3":250}.
//   - ml/placedshare: the choice GPU 3 at 100 milli-GPU, given 100 units:
//     placed.
//   - ml/idle, listed without devices, and a NIC: nothing.
//   - kube-system/gone, no longer in the API, still holding the kubelet's
//     GPU 2 (terminating): {"2":1000}.
//
// With no pod holding a GPU, the report is {} without an API call.
func TestUnplaced(t *testing.T) {
	ctx := context.Background()
	n := testNode(t, "l40s-pcie-4")
	uuid := func(i int) string { return n.GPUs[i].UUID }
	milli := func(g, from, to int) []string {
		var out []string
		for k := from; k < to; k++ {
			out = append(out, string(device.NewMilliID(uuid(g), k)))
		}
		return out
	}
	srv, err := podresourcestest.Start(filepath.Join(shortDir(t), "pr.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	w, err := podresources.NewWatcher(srv.Path(), time.Second, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pods := []*podresourcesv1.PodResources{
		podresourcestest.Pod("ml", "ok", podresourcestest.Container("main", "nvidia.com/gpu", uuid(3))),
		podresourcestest.Pod("ml", "bypass", podresourcestest.Container("main", "nvidia.com/gpu", uuid(1)), podresourcestest.Container("nic", "example.com/nic", "nic0")),
		podresourcestest.Pod("ml", "liar", podresourcestest.Container("main", "nvidia.com/gpu", uuid(2))),
		podresourcestest.Pod("ml", "share", podresourcestest.Container("main", "gpuplane.io/gpu-milli", milli(3, 0, 250)...)),
		podresourcestest.Pod("ml", "placedshare", podresourcestest.Container("main", "gpuplane.io/gpu-milli", milli(0, 0, 100)...)),
		podresourcestest.Pod("ml", "idle", &podresourcesv1.ContainerResources{Name: "main"}),
		podresourcestest.Pod("kube-system", "gone", podresourcestest.Container("main", "nvidia.com/gpu", uuid(2))),
	}
	at := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	client := fake.NewClientset()
	for _, p := range []*corev1.Pod{boundPod("ok", "0", 1, at), boundPod("bypass", "", 1, at), boundPod("liar", "3", 1, at), boundPod("share", "", 0, at), boundPod("placedshare", "3", 0, at), boundPod("idle", "", 0, at)} {
		if p.Name == "placedshare" {
			p.Annotations["gpuplane.io/gpu-share"] = "100"
		}
		if _, err := client.CoreV1().Pods("ml").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a := NewAssignments(client, "n")
	if _, err := a.Unplaced(ctx, &n); err == nil {
		t.Error("Unplaced without the kubelet's view: no error")
	}
	a.UseKubelet(w.List)
	srv.SetPods(podresourcestest.Pod("ml", "idle", &podresourcesv1.ContainerResources{Name: "main"}))
	client.ClearActions()
	if got, err := a.Unplaced(ctx, &n); err != nil || len(got) != 0 || got == nil || len(client.Actions()) != 0 {
		t.Errorf("no pod holding a GPU: %v, %v, API calls %v; want {} and none", got, err, client.Actions())
	}
	srv.SetPods(pods...)
	a.record(Choice{Pod: "ml/ok", Container: "main", GPUs: []int{0}}, "nvidia.com/gpu", 1, []string{uuid(0)})
	a.record(Choice{Pod: "ml/placedshare", Container: "main", GPUs: []int{3}, Share: 100}, "gpuplane.io/gpu-milli", 100, []string{uuid(3)})
	got, err := a.Unplaced(ctx, &n)
	want := gpuresource.UnplacedPods{
		"ml/bypass":        {"1": 1000},
		"ml/liar":          {"2": 1000},
		"ml/share":         {"3": 250},
		"kube-system/gone": {"2": 1000},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Unplaced = %v, %v; want %v", got, err, want)
	}
}
