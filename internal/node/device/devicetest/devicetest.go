// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package devicetest is the conformance test of device.Backend
// implementations: every backend must pass Run.
package devicetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Harness describes the backend under test.
type Harness struct {
	// Backend is the backend under test.
	Backend device.Backend
	// GPUs and MIGDevices are the expected counts.
	GPUs, MIGDevices int
	// InjectXID makes the backend report XID xid on the GPU or MIG device
	// uuid; Run then expects that event from WatchHealth.
	InjectXID func(t *testing.T, uuid string, xid uint64)
}

// Run checks discovery, telemetry and health watching.
func Run(t *testing.T, h Harness) {
	t.Helper()
	ctx := context.Background()
	n, err := h.Backend.Discover(ctx)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	t.Run("Discover", func(t *testing.T) { checkNode(t, n, h) })
	t.Run("Sample", func(t *testing.T) { checkSamples(t, h.Backend, n) })
	t.Run("WatchHealth", func(t *testing.T) { checkHealth(t, h, n) })
}

func checkNode(t *testing.T, n device.Node, h Harness) {
	if len(n.GPUs) != h.GPUs {
		t.Fatalf("%d GPUs, want %d", len(n.GPUs), h.GPUs)
	}
	if n.DriverVersion == "" || n.CUDADriverMajor == 0 {
		t.Errorf("driver %q CUDA %d.%d", n.DriverVersion, n.CUDADriverMajor, n.CUDADriverMinor)
	}
	seen := map[string]bool{}
	migs := 0
	for i, g := range n.GPUs {
		if g.Index != i || g.UUID == "" || seen[g.UUID] || g.ProductName == "" || g.MemoryMiB <= 0 || g.PCIBusID == "" || g.ComputeMajor == 0 {
			t.Errorf("GPU %d: %+v", i, g)
		}
		seen[g.UUID] = true
		if !g.MIGEnabled && len(g.MIG) > 0 {
			t.Errorf("GPU %d has MIG devices with MIG disabled", i)
		}
		for _, m := range g.MIG {
			migs++
			if m.UUID == "" || seen[m.UUID] || m.Profile == "" || m.MemoryMiB <= 0 || m.MemoryMiB > g.MemoryMiB || m.Multiprocessors <= 0 {
				t.Errorf("GPU %d MIG device %+v", i, m)
			}
			seen[m.UUID] = true
		}
	}
	if migs != h.MIGDevices {
		t.Errorf("%d MIG devices, want %d", migs, h.MIGDevices)
	}
	if len(n.Links) != len(n.GPUs) {
		t.Fatalf("%d link rows for %d GPUs", len(n.Links), len(n.GPUs))
	}
	for i := range n.Links {
		if len(n.Links[i]) != len(n.GPUs) {
			t.Fatalf("link row %d has %d cells", i, len(n.Links[i]))
		}
		for j := range n.Links[i] {
			if i != j && n.Links[i][j] != n.Links[j][i] {
				t.Errorf("links %d-%d not symmetric: %v vs %v", i, j, n.Links[i][j], n.Links[j][i])
			}
			if l := n.Links[i][j]; (l.Type == device.LinkNVLink) != (l.NVLinks > 0) {
				t.Errorf("link %d-%d: %+v", i, j, l)
			}
		}
	}
}

func checkSamples(t *testing.T, b device.Backend, n device.Node) {
	ss, err := b.Sample(context.Background())
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	want := map[string]int64{}
	for _, g := range n.GPUs {
		want[g.UUID] = g.MemoryMiB
		for _, m := range g.MIG {
			want[m.UUID] = m.MemoryMiB
		}
	}
	if len(ss) != len(want) {
		t.Errorf("%d samples, want %d (GPUs and MIG devices)", len(ss), len(want))
	}
	for _, s := range ss {
		mem, ok := want[s.UUID]
		if !ok {
			t.Errorf("sample of unknown device %s", s.UUID)
			continue
		}
		delete(want, s.UUID)
		if s.Time.IsZero() {
			t.Errorf("%s: zero time", s.UUID)
		}
		if s.GPUUtil != nil && (*s.GPUUtil < 0 || *s.GPUUtil > 100) {
			t.Errorf("%s: utilisation %v", s.UUID, *s.GPUUtil)
		}
		if s.FBUsedMiB != nil && s.FBFreeMiB != nil && *s.FBUsedMiB+*s.FBFreeMiB > float64(mem)+1 {
			t.Errorf("%s: used %v + free %v MiB > %d MiB", s.UUID, *s.FBUsedMiB, *s.FBFreeMiB, mem)
		}
		for _, r := range []*float64{s.ProfGrEngineActive, s.ProfSMActive, s.ProfTensorActive, s.ProfDRAMActive} {
			if r != nil && (*r < 0 || *r > 1) {
				t.Errorf("%s: profiling ratio %v", s.UUID, *r)
			}
		}
	}
}

func checkHealth(t *testing.T, h Harness, n device.Node) {
	if h.InjectXID == nil {
		t.Skip("no fault injection")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan device.HealthEvent, 16)
	done := make(chan error, 1)
	go func() { done <- h.Backend.WatchHealth(ctx, ch) }()
	target := n.GPUs[len(n.GPUs)-1].UUID
	deadline := time.After(30 * time.Second)
	for {
		h.InjectXID(t, target, 79)
		select {
		case ev := <-ch:
			if ev.UUID != target || ev.Kind != device.HealthXID || ev.XID != 79 {
				t.Fatalf("event %+v, want XID 79 on %s", ev, target)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("WatchHealth returned %v after cancel", err)
			}
			return
		case <-time.After(200 * time.Millisecond):
			// The watcher may not have been ready: inject again.
		case <-deadline:
			t.Fatal("no health event")
		}
	}
}
