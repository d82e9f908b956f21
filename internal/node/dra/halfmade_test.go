// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// logs captures klog's output until the test ends.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count returns how many lines hold s.
func (l *logs) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

func captureLogs(t *testing.T) *logs {
	l := &logs{}
	klog.LogToStderr(false)
	klog.SetOutput(l)
	t.Cleanup(func() {
		klog.Flush()
		klog.LogToStderr(true)
	})
	return l
}

const halfMadeLog = "A GPU instance without a compute instance: not published"

// halfMadeDevices is, by hand, what twoA100 publishes with a GPU
// instance of 3g.40gb at slot 4 (slots 4-7) and no compute instance on
// GPU 0: of its 25 placements the 11 over slots 4-7 go (1g.10gb at 4, 5,
// 6; 1g.10gb+me at 4, 5, 6; 1g.20gb at 4, 6; 2g.20gb at 4; 3g.40gb at 4;
// 7g.80gb at 0), nothing comes in their place (no MIG device), gpu-1
// stays: 14 + 1.
const halfMadeDevices = 15

// TestHalfMadeAtStart: a GPU instance without a compute instance (a
// crash between NVML's two creations, an administrator's
// nvidia-smi mig -cgi without -C) holds no MIG device a claim could be
// given: at the start neither it nor the placements it overlaps are
// published, and it is logged; a claim of its placement is refused as no
// device of the node.
func TestHalfMadeAtStart(t *testing.T) {
	b, n := mockNode(t, twoA100)
	if _, err := b.CreateGPUInstance(context.Background(), n.GPUs[0].UUID, "3g.40gb", 4); err != nil {
		t.Fatal(err)
	}
	l := captureLogs(t)
	k := newKubelet(t)
	k.start(b)
	devs, _ := k.slices(2)
	if len(devs) != halfMadeDevices {
		t.Errorf("published %d devices, want %d", len(devs), halfMadeDevices)
	}
	for _, name := range []string{"gpu-0-mig-3g40gb-9-4", "gpu-0-mig-1g10gb-19-5", "gpu-0-mig-7g80gb-0-0"} {
		if _, ok := devs[name]; ok {
			t.Errorf("%s, over the GPU instance without a compute instance, is published", name)
		}
	}
	if _, ok := devs["gpu-0-mig-4g40gb-5-0"]; !ok {
		t.Error("gpu-0-mig-4g40gb-5-0 (slots 0-3) is not published")
	}
	if _, errStr := k.prepare(k.claim("c", "gpu-0-mig-3g40gb-9-4")); errStr != "device gpu-0-mig-3g40gb-9-4 of request r0: no such device on node node-a" {
		t.Errorf("a claim of its placement: error %q", errStr)
	}
	klog.Flush()
	if got := l.count(halfMadeLog); got != 1 {
		t.Errorf("logged %d times at the start, want 1", got)
	}
}

// TestHalfMadeRediscovered: a GPU instance without a compute instance
// made after the start is withdrawn with the placements it overlaps at
// the next rediscovery, and logged at that one and each after it while it
// stays.
func TestHalfMadeRediscovered(t *testing.T) {
	b, n := mockNode(t, twoA100)
	l := captureLogs(t)
	k := newKubelet(t)
	d := k.start(b)
	k.waitDevices(26)
	if _, err := b.CreateGPUInstance(context.Background(), n.GPUs[0].UUID, "3g.40gb", 4); err != nil {
		t.Fatal(err)
	}
	if changed, err := d.Rediscover(context.Background()); !changed || err != nil {
		t.Fatalf("rediscovery: %v %v", changed, err)
	}
	devs, _ := k.waitDevices(halfMadeDevices)
	if _, ok := devs["gpu-0-mig-3g40gb-9-4"]; ok {
		t.Error("its placement is still published")
	}
	if changed, err := d.Rediscover(context.Background()); changed || err != nil {
		t.Errorf("again: %v %v, want nothing changed", changed, err)
	}
	klog.Flush()
	if got := l.count(halfMadeLog); got != 2 {
		t.Errorf("logged %d times in two rediscoveries, want 2", got)
	}
}
