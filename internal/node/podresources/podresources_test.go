// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package podresources_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/node/podresources/podresourcestest"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// socketPath returns a short unix socket path (unix paths are limited to 108
// bytes, and t.TempDir can be longer).
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "k.sock")
}

var pods = []*v1.PodResources{
	podresourcestest.Pod("ml", "train-0",
		podresourcestest.Container("main", "nvidia.com/gpu", "GPU-a", "GPU-b"),
		podresourcestest.Container("sidecar", "example.com/none")),
	podresourcestest.Pod("web", "infer-1",
		podresourcestest.Container("srv", "nvidia.com/mig-1g.10gb", "MIG-x")),
	podresourcestest.Pod("web", "infer-2",
		podresourcestest.Container("srv", "nvidia.com/gpu", "GPU-c::0", "GPU-c::3")),
	podresourcestest.Pod("dra", "job-0",
		podresourcestest.DRAContainer("main", "dra", "job-0-gpus",
			podresourcestest.ClaimDevice("gpu.nvidia.com", "node-a", "gpu-1", "", "nvidia.com/gpu=GPU-d"),
			podresourcestest.ClaimDevice("gpu.nvidia.com", "node-a", "gpu-2", "7b1c", "nvidia.com/gpu=GPU-e", "extra=x")),
		podresourcestest.DRAContainer("nocdi", "dra", "other",
			podresourcestest.ClaimDevice("gpu.nvidia.com", "node-a", "gpu-3-mig-1g10gb-19-0", ""))),
}

var want = []podresources.Allocation{
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-a", Owner: podresources.Owner{Namespace: "ml", Pod: "train-0", Container: "main"}},
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-b", Owner: podresources.Owner{Namespace: "ml", Pod: "train-0", Container: "main"}},
	{ResourceName: "nvidia.com/mig-1g.10gb", DeviceID: "MIG-x", Owner: podresources.Owner{Namespace: "web", Pod: "infer-1", Container: "srv"}},
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-c::0", Owner: podresources.Owner{Namespace: "web", Pod: "infer-2", Container: "srv"}},
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-c::3", Owner: podresources.Owner{Namespace: "web", Pod: "infer-2", Container: "srv"}},
	{DeviceID: "nvidia.com/gpu=GPU-d", Owner: podresources.Owner{Namespace: "dra", Pod: "job-0", Container: "main"},
		DRA: podresources.DRADevice{ClaimNamespace: "dra", ClaimName: "job-0-gpus", Driver: "gpu.nvidia.com", Pool: "node-a", Device: "gpu-1"}},
	{DeviceID: "nvidia.com/gpu=GPU-e", Owner: podresources.Owner{Namespace: "dra", Pod: "job-0", Container: "main"},
		DRA: podresources.DRADevice{ClaimNamespace: "dra", ClaimName: "job-0-gpus", Driver: "gpu.nvidia.com", Pool: "node-a", Device: "gpu-2", ShareID: "7b1c"}},
	{Owner: podresources.Owner{Namespace: "dra", Pod: "job-0", Container: "nocdi"},
		DRA: podresources.DRADevice{ClaimNamespace: "dra", ClaimName: "other", Driver: "gpu.nvidia.com", Pool: "node-a", Device: "gpu-3-mig-1g10gb-19-0"}},
}

func TestFlatten(t *testing.T) {
	if got := podresources.Flatten(pods); !reflect.DeepEqual(got, want) {
		t.Fatalf("Flatten:\n got %+v\nwant %+v", got, want)
	}
	if got := podresources.Flatten(nil); got != nil {
		t.Fatalf("Flatten(nil) = %+v, want nil", got)
	}
}

func TestNewWatcherRejectsBadArguments(t *testing.T) {
	if _, err := podresources.NewWatcher("", time.Second, time.Second); err == nil {
		t.Error("empty path: no error")
	}
	if _, err := podresources.NewWatcher("/x.sock", 0, time.Second); err == nil {
		t.Error("zero interval: no error")
	}
}

// refreshUntil refreshes until the result's success is ok; gRPC may need a
// few attempts to reconnect. It fails the test after 200 attempts.
func refreshUntil(t *testing.T, w *podresources.Watcher, ok bool) {
	t.Helper()
	for range 200 {
		err := w.Refresh(context.Background())
		if (err == nil) == ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("refresh never reached success=%v", ok)
}

func TestWatcherListsMissingAndRestartingSocket(t *testing.T) {
	path := socketPath(t)
	w, err := podresources.NewWatcher(path, 100*time.Millisecond, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	// No socket yet: an error, counted, and no mapping.
	if err := w.Refresh(context.Background()); err == nil {
		t.Fatal("refresh without a socket: no error")
	}
	if w.Current() != nil || w.Errors() != 1 {
		t.Fatalf("without socket: Current=%v Errors=%d, want nil and 1", w.Current(), w.Errors())
	}

	srv, err := podresourcestest.Start(path)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.SetPods(pods...)
	refreshUntil(t, w, true)
	if got := w.Current(); got == nil || !reflect.DeepEqual(got.Allocations, want) {
		t.Fatalf("Current after socket appeared = %+v, want %+v", got, want)
	}

	// The kubelet restarts: the mapping goes, and comes back.
	srv.Stop()
	refreshUntil(t, w, false)
	if w.Current() != nil {
		t.Fatal("mapping kept while the socket is gone")
	}
	errs := w.Errors()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, w, true)
	if got := w.Current(); got == nil || len(got.Allocations) != len(want) {
		t.Fatalf("Current after restart = %+v", got)
	}
	if w.Errors() < errs {
		t.Fatalf("error count went down: %d < %d", w.Errors(), errs)
	}
}

func TestWatcherSlowSocket(t *testing.T) {
	path := socketPath(t)
	srv, err := podresourcestest.Start(path)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.SetPods(pods...)
	w, err := podresources.NewWatcher(path, time.Second, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, w, true)
	before := w.Errors()
	srv.SetDelay(time.Hour)
	if err := w.Refresh(context.Background()); err == nil {
		t.Fatal("slow List: no error")
	}
	if w.Current() != nil {
		t.Fatal("mapping kept after a timed-out List")
	}
	if got := w.Errors() - before; got != 1 {
		t.Fatalf("%d errors counted for one timed-out List, want 1", got)
	}
	srv.SetDelay(0)
	refreshUntil(t, w, true)
	if w.Current() == nil {
		t.Fatal("no mapping after the socket answered again")
	}
}

func TestWatcherRunStopsWithContext(t *testing.T) {
	path := socketPath(t)
	srv, err := podresourcestest.Start(path)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.SetPods(pods...)
	w, err := podresources.NewWatcher(path, 10*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	for w.Current() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if got := w.Current(); len(got.Allocations) != len(want) {
		t.Fatalf("Run published %+v", got)
	}
}

func TestRefreshWithDoneContextKeepsMapping(t *testing.T) {
	path := socketPath(t)
	srv, err := podresourcestest.Start(path)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.SetPods(pods...)
	w, err := podresources.NewWatcher(path, time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	refreshUntil(t, w, true)
	before := w.Errors()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Refresh(ctx); err != context.Canceled {
		t.Fatalf("Refresh with a cancelled context: %v, want context.Canceled", err)
	}
	if w.Current() == nil || w.Errors() != before {
		t.Fatalf("shutdown counted as a kubelet failure: Current=%v Errors=%d", w.Current(), w.Errors())
	}
}

// TestWatcherRelativeSocket: a socket path relative to the working
// directory works (gRPC alone refuses "unix://dir/k.sock" with "invalid
// (non-empty) authority").
func TestWatcherRelativeSocket(t *testing.T) {
	path := socketPath(t)
	srv, err := podresourcestest.Start(path)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.SetPods(pods...)
	t.Chdir(filepath.Dir(filepath.Dir(path)))
	w, err := podresources.NewWatcher(filepath.Join(filepath.Base(filepath.Dir(path)), "k.sock"), time.Second, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := w.Current(); len(got.Allocations) != len(want) {
		t.Fatalf("mapping %+v, want %d allocations", got, len(want))
	}
}

// TestAdmitting: listed without a device of the resource is under
// admission; a device of another resource does not count.
func TestAdmitting(t *testing.T) {
	m := &podresources.Mapping{Pods: map[string]bool{"ml/a": true, "ml/b": true},
		Allocations: []podresources.Allocation{
			{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0", Owner: podresources.Owner{Namespace: "ml", Pod: "a", Container: "main"}},
			{ResourceName: "example.com/nic", DeviceID: "nic0", Owner: podresources.Owner{Namespace: "ml", Pod: "b", Container: "main"}},
		}}
	for _, tc := range []struct {
		pod, container string
		want           bool
	}{{"ml/a", "main", false}, {"ml/a", "side", true}, {"ml/b", "main", true}, {"ml/c", "main", false}} {
		if got := m.Admitting(tc.pod, tc.container, "nvidia.com/gpu"); got != tc.want {
			t.Errorf("Admitting(%s, %s) = %v, want %v", tc.pod, tc.container, got, tc.want)
		}
	}
}
