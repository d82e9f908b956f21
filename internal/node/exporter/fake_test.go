// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"sync"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// fakeBackend is a device.Backend whose answers the test sets.
type fakeBackend struct {
	mu        sync.Mutex
	node      device.Node
	samples   []device.Sample
	sampleErr error
	// hang, when set, makes Sample block until it is closed, deaf to its
	// context, as a driver that stopped answering.
	hang   chan struct{}
	events chan device.HealthEvent
	calls  int // Sample calls so far
}

func newFakeBackend(node device.Node, samples []device.Sample) *fakeBackend {
	return &fakeBackend{node: node, samples: samples, events: make(chan device.HealthEvent)}
}

func (b *fakeBackend) Discover(context.Context) (device.Node, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.node, nil
}

func (b *fakeBackend) WatchHealth(ctx context.Context, ch chan<- device.HealthEvent) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-b.events:
			select {
			case ch <- ev:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

func (b *fakeBackend) Sample(context.Context) ([]device.Sample, error) {
	b.mu.Lock()
	hang := b.hang
	b.mu.Unlock()
	if hang != nil {
		<-hang
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.sampleErr != nil {
		return nil, b.sampleErr
	}
	return append([]device.Sample(nil), b.samples...), nil
}

func (b *fakeBackend) setSamples(s []device.Sample, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.samples, b.sampleErr = s, err
}

func (b *fakeBackend) sampleCalls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

func (b *fakeBackend) setHang(ch chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hang = ch
}

func (b *fakeBackend) Close() error { return nil }

var errFake = errors.New("fake backend fails")

// fakePods is a PodSource whose mapping the test sets.
type fakePods struct {
	mu      sync.Mutex
	mapping *podresources.Mapping
	errors  uint64
}

func (p *fakePods) Current() *podresources.Mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mapping
}

func (p *fakePods) Errors() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errors
}

func (p *fakePods) set(m *podresources.Mapping, errs uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mapping, p.errors = m, errs
}

func ptr(v float64) *float64 { return &v }

// testNode is an H100 shared by time-slicing and an A100 in MIG mode with
// two MIG devices.
var testNode = device.Node{GPUs: []device.GPU{
	{Index: 0, UUID: "GPU-0000", PCIBusID: "00000000:07:00.0", ProductName: "NVIDIA H100 80GB HBM3"},
	{Index: 1, UUID: "GPU-1111", PCIBusID: "00000000:0F:00.0", ProductName: "NVIDIA A100-SXM4-80GB", MIGEnabled: true, MIG: []device.MIGDevice{
		{UUID: "MIG-aaaa", Profile: "3g.40gb", GPUInstanceID: 1},
		{UUID: "MIG-bbbb", Profile: "1g.10gb", GPUInstanceID: 9},
	}},
}}

var testSamples = []device.Sample{
	{UUID: "GPU-0000", GPUUtil: ptr(42), TotalEnergyMJ: ptr(123456), ProfGrEngineActive: ptr(0.5)},
	{UUID: "GPU-1111", GPUUtil: ptr(7), TotalEnergyMJ: ptr(2000)},
	{UUID: "MIG-aaaa", ProfGrEngineActive: ptr(0.25)},
	{UUID: "MIG-bbbb", ProfGrEngineActive: ptr(0.125)},
}

func owner(ns, pod, container string) podresources.Owner {
	return podresources.Owner{Namespace: ns, Pod: pod, Container: container}
}

// testMapping shares GPU-0000 between three pods through replicas (pod a
// holds two replicas), gives MIG-aaaa to pod d, and holds a device that is
// not a GPU.
var testMapping = &podresources.Mapping{Allocations: []podresources.Allocation{
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0000::0", Owner: owner("ml", "a", "main")},
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0000::1", Owner: owner("ml", "b", "main")},
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0000::2", Owner: owner("web", "c", "srv")},
	{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0000::3", Owner: owner("ml", "a", "main")},
	{ResourceName: "nvidia.com/mig-3g.40gb", DeviceID: "MIG-aaaa", Owner: owner("web", "d", "srv")},
	{ResourceName: "example.com/nic", DeviceID: "eth7", Owner: owner("web", "d", "srv")},
}}
