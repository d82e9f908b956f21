// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
)

// shortDir returns a temporary directory with a short path, since unix
// socket paths are limited to 108 bytes.
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestManager(t *testing.T) {
	dir := shortDir(t)
	k, err := kubelettest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { k.Stop() }()
	fb := &fakeBackend{node: testNode(t, "dgx-a100-80gb-mig"), events: make(chan device.HealthEvent)}
	m, err := NewManager(context.Background(), fb, testConfig(t, "flags: {migStrategy: mixed}"), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	want := "nvidia.com/gpu nvidia.com/mig-1g.10gb nvidia.com/mig-2g.20gb nvidia.com/mig-3g.40gb"
	registered := func() error {
		return k.Wait(ctx, func(k *kubelettest.Kubelet) bool {
			rs := k.ResourcesLocked()
			sort.Strings(rs)
			return strings.Join(rs, " ") == want
		})
	}
	if err := registered(); err != nil {
		t.Fatalf("registration: %v", err)
	}
	p, err := k.Plugin(ctx, "nvidia.com/mig-1g.10gb")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Devices()); got != 32 {
		t.Errorf("mig-1g.10gb: %d devices, want 32", got)
	}
	// An XID on GPU 0 makes its seven MIG devices unhealthy.
	fb.events <- device.HealthEvent{UUID: fb.node.GPUs[0].UUID, Kind: device.HealthXID, XID: 79}
	devs, err := p.WaitDevices(ctx, func(ds []*pluginapi.Device) bool { return countUnhealthy(ds) == 7 })
	if err != nil {
		t.Fatalf("unhealthy: %v (devices %v)", err, devs)
	}
	fb.events <- device.HealthEvent{UUID: fb.node.GPUs[0].UUID, Kind: device.HealthRecovered}
	if _, err := p.WaitDevices(ctx, func(ds []*pluginapi.Device) bool { return countUnhealthy(ds) == 0 }); err != nil {
		t.Fatalf("recovery: %v", err)
	}

	// The kubelet restarts: it removes the plugin sockets and recreates
	// kubelet.sock; the manager serves again and registers again.
	n := len(k.Registrations())
	k.Stop()
	if k, err = kubelettest.Start(dir); err != nil {
		t.Fatal(err)
	}
	if err := registered(); err != nil {
		t.Fatalf("re-registration: %v", err)
	}
	if got := len(k.Registrations()); got != 4 {
		t.Errorf("new kubelet saw %d registrations, want 4 (old one saw %d)", got, n)
	}
	if _, err := k.Plugin(ctx, "nvidia.com/gpu"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := os.Stat(m.Plugins()[0].Socket()); !os.IsNotExist(err) {
		t.Errorf("socket left behind after Run: %v", err)
	}
}

func countUnhealthy(ds []*pluginapi.Device) int {
	n := 0
	for _, d := range ds {
		if d.Health == pluginapi.Unhealthy {
			n++
		}
	}
	return n
}

func TestNewManagerFailsEarly(t *testing.T) {
	fb := &fakeBackend{node: testNode(t, "dgx-a100-80gb-mig")}
	dir := shortDir(t)
	// Single on mixed MIG is no longer a failure: nothing is served
	// (TestBuildResourcesSingleInvalid), and the agent keeps running.
	if m, err := NewManager(context.Background(), fb, testConfig(t, "flags: {migStrategy: single}"), dir); err != nil || len(m.Plugins()) != 0 {
		t.Errorf("single on mixed MIG: %v", err)
	}
	if _, err := NewManager(context.Background(), fb, configv1.DefaultConfig(), dir+"/missing"); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("missing dir: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("NewManager created files: %v", ents)
	}
}

// TestManagerRegistersEachResource: the kubelet refuses one resource for
// good and another twice; the others register at once and the second
// registers on a retry, although RetryInterval is an hour (the retries
// start at RetryMin). The device-plugin directory is given relative to
// the working directory, and a GPU lost at discovery is unhealthy in the
// kubelet's first ListAndWatch list.
func TestManagerRegistersEachResource(t *testing.T) {
	dir := shortDir(t)
	k, err := kubelettest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { k.Stop() }()
	var mu sync.Mutex
	tries := map[string]int{}
	k.Refuse(func(r *pluginapi.RegisterRequest) error {
		mu.Lock()
		defer mu.Unlock()
		tries[r.ResourceName]++
		switch {
		case r.ResourceName == "nvidia.com/mig-1g.10gb":
			return fmt.Errorf("invalid resource name %q", r.ResourceName)
		case r.ResourceName == "nvidia.com/mig-2g.20gb" && tries[r.ResourceName] <= 2:
			return fmt.Errorf("busy (try %d)", tries[r.ResourceName])
		}
		return nil
	})
	n := testNode(t, "dgx-a100-80gb-mig")
	// GPUs 0-3 hold seven MIG devices each, 4-5 four, 6-7 none.
	n.Faults = []device.HealthEvent{{UUID: n.GPUs[6].UUID, Kind: device.HealthLost}}
	fb := &fakeBackend{node: n, events: make(chan device.HealthEvent)}
	t.Chdir(filepath.Dir(dir))
	m, err := NewManager(context.Background(), fb, testConfig(t, "flags: {migStrategy: mixed}"), filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	m.RetryInterval = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	want := "nvidia.com/gpu nvidia.com/mig-2g.20gb nvidia.com/mig-3g.40gb"
	err = k.Wait(ctx, func(k *kubelettest.Kubelet) bool {
		rs := k.ResourcesLocked()
		sort.Strings(rs)
		return strings.Join(rs, " ") == want
	})
	if err != nil {
		t.Fatalf("registered %v, want %s: %v", k.Registrations(), want, err)
	}
	mu.Lock()
	if tries["nvidia.com/mig-2g.20gb"] != 3 || tries["nvidia.com/mig-1g.10gb"] < 3 || tries["nvidia.com/gpu"] != 1 {
		t.Errorf("registration tries %v, want mig-2g.20gb 3, mig-1g.10gb at least 3, gpu 1", tries)
	}
	mu.Unlock()
	p, err := k.Plugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	// nvidia.com/gpu lists GPUs 6 and 7 (the others are in MIG mode).
	first := p.FirstDevices()
	if len(first) != 2 || first[0].ID != n.GPUs[6].UUID || first[0].Health != pluginapi.Unhealthy || first[1].Health != pluginapi.Healthy {
		t.Errorf("first ListAndWatch list %v, want GPU 6 unhealthy and GPU 7 healthy", first)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
