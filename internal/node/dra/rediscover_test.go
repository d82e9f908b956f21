// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// migSwitch is the mock backend with GPU 1's MIG mode switched on from
// outside (an administrator's nvidia-smi -mig 1) once on is set: its
// Discover says so and it has no MIG devices yet.
type migSwitch struct {
	*mock.Backend
	on, lost atomic.Bool  // lost: Discover leaves GPU 1 out
	watches  atomic.Int32 // WatchHealth calls
}

func (b *migSwitch) WatchHealth(ctx context.Context, ch chan<- device.HealthEvent) error {
	b.watches.Add(1)
	return b.Backend.WatchHealth(ctx, ch)
}

func (b *migSwitch) Discover(ctx context.Context) (device.Node, error) {
	n, err := b.Backend.Discover(ctx)
	if err == nil && b.on.Load() {
		n.GPUs[1].MIGEnabled = true
	}
	if err == nil && b.lost.Load() {
		n.GPUs = n.GPUs[:1]
	}
	return n, err
}

func (b *migSwitch) MIGInstances(ctx context.Context, gpuUUID string) ([]device.MIGInstance, error) {
	if b.on.Load() && gpuUUID == b.gpu1() {
		return nil, nil
	}
	return b.Backend.MIGInstances(ctx, gpuUUID)
}

func (b *migSwitch) gpu1() string {
	n, _ := b.Backend.Discover(context.Background())
	return n.GPUs[1].UUID
}

// Rediscovery publishes what changed outside the plugin: a MIG device an
// administrator made after the start (published with its UUID, the
// placements over its slots withdrawn), and GPU 1 switched to MIG mode
// (its whole device replaced by its 25 placements), but only once the
// claim holding the whole GPU 1 is unprepared. A GPU not found is kept.
func TestRediscover(t *testing.T) {
	mb, n := mockNode(t, twoA100)
	b := &migSwitch{Backend: mb}
	k := newKubelet(t)
	d := k.start(b)
	k.waitDevices(26)
	if changed, err := d.Rediscover(context.Background()); changed || err != nil {
		t.Errorf("nothing changed: %v %v", changed, err)
	}
	whole := k.claim("whole", "gpu-1")
	created := k.claim("created", "gpu-0-mig-3g40gb-9-4")
	for _, c := range []*resourceapi.ResourceClaim{whole, created} {
		if _, errStr := k.prepare(c); errStr != "" {
			t.Fatalf("prepare %s: %s", c.Name, errStr)
		}
	}

	// An administrator makes a 1g.10gb at slot 0 (nvidia-smi mig -cgi).
	admin, err := mb.CreateMIG(context.Background(), n.GPUs[0].UUID, "1g.10gb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := d.Rediscover(context.Background()); !changed || err != nil {
		t.Fatalf("a MIG device made outside DRA: %v %v", changed, err)
	}
	// By hand: of GPU 0's 25 placements the 7 over slot 0 go (1g.10gb,
	// 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb at 0); the
	// static device comes, gpu-1 stays: 18 + 1 + 1. The created 3g.40gb
	// at 4 is the plugin's, not published as static.
	devs, _ := k.waitDevices(20)
	if got := str(devs["gpu-0-mig-1g10gb-19-0"].Attributes["uuid"]); got != admin.UUID {
		t.Errorf("the administrator's device: uuid %q, want %s", got, admin.UUID)
	}
	if _, ok := devs["gpu-0-mig-3g40gb-9-4"]; !ok {
		t.Error("the placement of the prepared 3g.40gb was withdrawn")
	}
	if changed, err := d.Rediscover(context.Background()); changed || err != nil {
		t.Errorf("again, nothing changed since: %v %v", changed, err)
	}

	// GPU 1 goes into MIG mode while its whole device is prepared: refused.
	b.on.Store(true)
	if changed, err := d.Rediscover(context.Background()); changed || err == nil || !strings.Contains(err.Error(), "device gpu-1, prepared for claim default/whole") {
		t.Errorf("a prepared device gone: %v %v", changed, err)
	}
	if devs, _ := k.waitDevices(20); devs["gpu-1"].Name == "" {
		t.Error("gpu-1 withdrawn while prepared")
	}
	k.unprepare(whole)
	if changed, err := d.Rediscover(context.Background()); !changed || err != nil {
		t.Fatalf("after unprepare: %v %v", changed, err)
	}
	// GPU 1's 25 placements replace its whole device: 18 + 1 + 25.
	devs, sets := k.waitSlices(44, 2)
	if _, ok := devs["gpu-1"]; ok || len(sets) != 2 {
		t.Errorf("gpu-1 still published, or %d counter sets (want 2)", len(sets))
	}
	if _, ok := devs["gpu-1-mig-7g80gb-0-0"]; !ok {
		t.Error("GPU 1's placements not published")
	}
	k.unprepare(created)

	// A GPU no longer found (NVML skips a lost GPU) changes nothing.
	b.lost.Store(true)
	if changed, err := d.Rediscover(context.Background()); changed || err == nil || !strings.Contains(err.Error(), "GPU "+n.GPUs[1].UUID+" (gpu-1) is not found") {
		t.Errorf("a GPU gone: %v %v", changed, err)
	}
}

// A GPU that appears (NVML skipped it at the start, and a reset brought
// it back) is published by the next rediscovery in Run, OnRediscover gets
// the node with both GPUs (the agent labels it again), and the health
// watch starts again to cover it (a second WatchHealth call: the mock's
// watch knows every GPU of its profile, so only the count shows the
// restart), and the new watch's events are applied: a critical XID on
// GPU 1 taints it.
func TestRediscoverNewGPU(t *testing.T) {
	faults := filepath.Join(t.TempDir(), "faults.yaml")
	p, err := mock.ParseProfile("test.yaml", []byte(twoA100))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := mock.New(p, mock.Options{FaultsFile: faults})
	if err != nil {
		t.Fatal(err)
	}
	b := &migSwitch{Backend: mb}
	b.lost.Store(true)
	k := newKubelet(t)
	k.dirs.RediscoverInterval = 20 * time.Millisecond
	found := make(chan device.Node, 4)
	k.dirs.OnRediscover = func(_ context.Context, n device.Node) { found <- n }
	d := k.start(b)
	k.waitDevices(25) // GPU 0's placements
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	b.lost.Store(false)
	select {
	case n := <-found:
		if len(n.GPUs) != 2 {
			t.Fatalf("OnRediscover with %d GPUs, want 2", len(n.GPUs))
		}
	case <-time.After(time.Minute):
		t.Fatal("no OnRediscover a minute after GPU 1 appeared")
	}
	k.waitDevices(26)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return b.watches.Load() == 2, nil
	}); err != nil {
		t.Fatalf("health watches started: %d, want 2", b.watches.Load())
	}
	n, _ := mb.Discover(ctx)
	if err := os.WriteFile(faults, []byte("faults:\n  - uuid: "+n.GPUs[1].UUID+"\n    xid: 79\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k.waitTaints("gpu-1", "gpu.nvidia.com/xid=79:NoSchedule")
	if len(found) != 0 {
		t.Errorf("OnRediscover again with nothing new: %d calls", len(found))
	}
}

// waitDevices waits until the plugin's ResourceSlices hold want devices
// and returns them and the counter sets by name.
func (k *kubelet) waitDevices(want int) (map[string]resourceapi.Device, map[string]resourceapi.CounterSet) {
	k.t.Helper()
	return k.waitSlices(want, -1)
}

// waitSlices is waitDevices that also waits for wantSets counter sets
// (any number when negative): the plugin publishes devices and counter
// sets in different ResourceSlices, updated one after the other.
func (k *kubelet) waitSlices(want, wantSets int) (map[string]resourceapi.Device, map[string]resourceapi.CounterSet) {
	k.t.Helper()
	var devs map[string]resourceapi.Device
	var sets map[string]resourceapi.CounterSet
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := k.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		devs, sets = map[string]resourceapi.Device{}, map[string]resourceapi.CounterSet{}
		for _, s := range list.Items {
			for _, d := range s.Spec.Devices {
				devs[d.Name] = d
			}
			for _, c := range s.Spec.SharedCounters {
				sets[c.Name] = c
			}
		}
		return len(devs) == want && (wantSets < 0 || len(sets) == wantSets), nil
	})
	if err != nil {
		k.t.Fatalf("waiting for %d devices and %d counter sets (have %d and %d): %v", want, wantSets, len(devs), len(sets), err)
	}
	return devs, sets
}
