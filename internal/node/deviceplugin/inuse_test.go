// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/node/podresources/podresourcestest"
)

// TestAllocateChecksPodResources: a node of 4 GPUs whose kubelet serves
// pod-resources over a real unix socket. ml/bypass (created with
// spec.nodeName, no scheduler's choice) holds GPU 1 by the kubelet's own
// pick.
//   - ml/next's choice is GPUs 1 and 2: refused, naming GPU 1 and
//     ml/bypass, with a GPUInUse event on ml/next, which is not marked
//     allocated.
//   - ml/ok's choice is GPUs 0 and 2; the kubelet asks for its IDs 2 and 3:
//     it gets 0 and 2.
//   - ml/ds (a DaemonSet pod, no choice): the kubelet, which counts ml/ok
//     on 2 and 3, offers only GPU 0, which ml/ok really holds: refused;
//     GetPreferredAllocation, with nothing really free, keeps the offer;
//     offered GPU 3 too it prefers that, and GPU 3 is given.
//   - ml/ds2 asks for GPU 3 whole while ml/ms holds a share of it: refused.
//   - the socket gone, a choice cannot be checked: refused.
func TestAllocateChecksPodResources(t *testing.T) {
	ctx := context.Background()
	n := testNode(t, "l40s-pcie-4")
	uuid := func(i int) string { return n.GPUs[i].UUID }
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

	at := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	client := fake.NewClientset()
	for _, p := range []*corev1.Pod{boundPod("bypass", "", 1, at), boundPod("next", "1,2", 2, at.Add(time.Minute)), boundPod("ok", "0,2", 2, at.Add(2*time.Minute)), boundPod("ds", "", 1, at.Add(3*time.Minute))} {
		p.UID = types.UID("uid-" + p.Name)
		if _, err := client.CoreV1().Pods("ml").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a := NewAssignments(client, "n")
	a.UseKubelet(w.List)
	p := testPlugin(t, &n, testConfig(t, ""), "nvidia.com/gpu")
	p.UseAssignments(a)
	allocate := func(ids ...string) (*pluginapi.AllocateResponse, error) {
		return p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
	}
	bypass := podresourcestest.Pod("ml", "bypass", podresourcestest.Container("main", "nvidia.com/gpu", uuid(1)))

	// ml/next under admission: the kubelet lists it without devices.
	srv.SetPods(bypass, podresourcestest.Pod("ml", "next", &podresourcesv1.ContainerResources{Name: "main"}))
	_, err = allocate(uuid(0), uuid(3))
	want := "GPU 1 (" + uuid(1) + ") is in use by container main of pod ml/bypass (nvidia.com/gpu, per the kubelet's pod-resources); refusing to give it to pod ml/next too"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ml/next's choice of GPUs 1,2: %v; want an error with %q", err, want)
	}
	if got, _ := client.CoreV1().Pods("ml").Get(ctx, "next", metav1.GetOptions{}); got.Annotations["gpuplane.io/allocated"] != "" {
		t.Errorf("ml/next marked allocated: %v", got.Annotations)
	}
	evs, err := client.CoreV1().Events("ml").List(ctx, metav1.ListOptions{})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("events: %v, %v; want one", evs, err)
	}
	if e := evs.Items[0]; e.Type != corev1.EventTypeWarning || e.Reason != "GPUInUse" || e.InvolvedObject.Name != "next" || e.InvolvedObject.UID != "uid-next" || !strings.Contains(e.Message, want) {
		t.Errorf("event %+v", e)
	}
	// The kubelet fails ml/next's admission: it leaves the List.
	if _, err := client.CoreV1().Pods("ml").UpdateStatus(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "next"}, Status: corev1.PodStatus{Phase: corev1.PodFailed}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// ml/ok under admission, the kubelet's IDs 2 and 3: it gets 0 and 2.
	srv.SetPods(bypass, podresourcestest.Pod("ml", "ok", &podresourcesv1.ContainerResources{Name: "main"}))
	r, err := allocate(uuid(2), uuid(3))
	if err != nil {
		t.Fatalf("ml/ok's choice of GPUs 0,2: %v", err)
	}
	if got, want := r.ContainerResponses[0].Envs["NVIDIA_VISIBLE_DEVICES"], uuid(0)+","+uuid(2); got != want {
		t.Errorf("ml/ok got %s, want %s", got, want)
	}

	// ml/ds: the kubelet's only free ID is GPU 0, which ml/ok runs on.
	okPod := podresourcestest.Pod("ml", "ok", podresourcestest.Container("main", "nvidia.com/gpu", uuid(2), uuid(3)))
	srv.SetPods(bypass, okPod, podresourcestest.Pod("ml", "ds", &podresourcesv1.ContainerResources{Name: "main"}))
	pref, err := p.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{AvailableDeviceIDs: []string{uuid(0)}, AllocationSize: 1}}})
	if err != nil || len(pref.ContainerResponses) != 1 || strings.Join(pref.ContainerResponses[0].DeviceIDs, ",") != uuid(0) {
		t.Errorf("preferred of [GPU 0]: %v, %v; want GPU 0 (nothing else offered)", pref, err)
	}
	_, err = allocate(uuid(0))
	want = "GPU 0 (" + uuid(0) + ") is in use by container main of pod ml/ok (nvidia.com/gpu, per the kubelet's pod-resources); refusing to give it to this container too"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ml/ds on the kubelet's GPU 0: %v; want an error with %q", err, want)
	}
	// Were GPUs 0 and 3 offered, the preference is GPU 3, really free.
	pref, err = p.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{AvailableDeviceIDs: []string{uuid(0), uuid(3)}, AllocationSize: 1}}})
	if err != nil || strings.Join(pref.ContainerResponses[0].DeviceIDs, ",") != uuid(3) {
		t.Errorf("preferred of [GPU 0, GPU 3]: %v, %v; want GPU 3", pref, err)
	}
	if _, err := allocate(uuid(3)); err != nil {
		t.Errorf("ml/ds on GPU 3, free: %v", err)
	}
	// GPU 3 shared by ml/ms (100 gpu-milli units, the kubelet's own): not
	// given whole to ml/ds2.
	var units []string
	for k := range 100 {
		units = append(units, string(device.NewMilliID(uuid(3), k)))
	}
	srv.SetPods(bypass, okPod, podresourcestest.Pod("ml", "ms", podresourcestest.Container("main", "gpuplane.io/gpu-milli", units...)), podresourcestest.Pod("ml", "ds2", &podresourcesv1.ContainerResources{Name: "main"}))
	_, err = allocate(uuid(3))
	want = "GPU 3 (" + uuid(3) + ") is in use by container main of pod ml/ms (gpuplane.io/gpu-milli, per the kubelet's pod-resources)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ml/ds2 on the kubelet's GPU 3, shared: %v; want an error with %q", err, want)
	}

	// No kubelet view: nothing is given.
	srv.Stop()
	if _, err := client.CoreV1().Pods("ml").Create(ctx, boundPod("late", "3", 1, at.Add(4*time.Minute)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = allocate(uuid(3))
	if want := "cannot be checked against the kubelet's pod-resources, so none is given"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("without pod-resources: %v; want an error with %q", err, want)
	}
}

// TestGPUUseCheck: the holds on GPU 2 of a 4-GPU node, worked out by hand.
func TestGPUUseCheck(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	u2 := n.GPUs[2].UUID
	own := func(pod string) podresources.Owner {
		return podresources.Owner{Namespace: "ml", Pod: pod, Container: "main"}
	}
	milli := func(pod string, from, to int) []podresources.Allocation {
		var out []podresources.Allocation
		for k := from; k < to; k++ {
			out = append(out, podresources.Allocation{ResourceName: "gpuplane.io/gpu-milli", DeviceID: string(device.NewMilliID(u2, k)), Owner: own(pod)})
		}
		return out
	}
	// a holds 600 milli-GPU of GPU 2 (600 units), b 100.
	shares := useOf(&n, append(milli("a", 0, 600), milli("b", 600, 700)...))
	if got := shares[2]; len(got) != 2 || got[0].milli != 600 || got[1].milli != 100 {
		t.Fatalf("holds on GPU 2: %+v; want a 600, b 100", got)
	}
	replica := useOf(&n, []podresources.Allocation{{ResourceName: "nvidia.com/gpu.shared", DeviceID: u2 + "::3", Owner: own("ts")}})
	for _, tc := range []struct {
		name  string
		u     gpuUse
		milli int64
		pod   string
		want  string // "" when free
	}{
		{"a share of 300 fits 1000-700", shares, 300, "c", ""},
		{"a share of 301 does not", shares, 301, "c", "pod ml/b"},
		{"a whole GPU does not", shares, 1000, "c", "pod ml/a"},
		{"a's own holds are left out: b's 100 and 900", shares, 900, "a", ""},
		{"a time-slicing replica refuses a share", replica, 1, "c", "pod ml/ts (nvidia.com/gpu.shared"},
		{"the pod's own replica is left out", replica, 1000, "ts", ""},
	} {
		err := tc.u.check(&n, []int{0, 2}, tc.milli, "ml/"+tc.pod)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), "GPU 2 ("+u2+") is in use by container main of "+tc.want)) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
