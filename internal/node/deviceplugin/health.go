// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"sync"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/health"
)

// Health is the health of a node's GPUs and MIG devices under the node
// agent's one health policy (internal/node/health), fed by backend health events
// and read by the device-plugin servers, which it wakes on each change. It
// is safe for concurrent use.
type Health struct {
	mu    sync.Mutex
	state *health.State
	subs  map[chan struct{}]struct{}
}

// NewHealth returns a Health of node n that ignores the given
// (application-level) XIDs, with the faults found at discovery (n.Faults)
// applied and every other device healthy.
func NewHealth(n device.Node, ignoredXIDs []uint64) *Health {
	return &Health{state: health.NewState(n, ignoredXIDs), subs: map[chan struct{}]struct{}{}}
}

// Apply records ev and wakes the subscribers when it changes a device's
// health. It reports whether it did: an ignored XID, or an event that
// repeats the current state, changes nothing.
func (h *Health) Apply(ev device.HealthEvent) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.state.Apply(ev) {
		return false
	}
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return true
}

// Healthy reports whether the GPU or MIG device uuid is healthy (a MIG
// device is unhealthy with its GPU).
func (h *Health) Healthy(uuid string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.Healthy(uuid)
}

// Subscribe returns a channel that receives a value after each change and a
// function that ends the subscription. Wake-ups coalesce: a receiver reads
// the current state, not a history.
func (h *Health) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// Unhealthy returns the indices (positions in n.GPUs) of the unhealthy
// GPUs of n, ascending; nil when all are healthy.
func (h *Health) Unhealthy(n device.Node) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, g := range n.GPUs {
		if !h.state.Healthy(g.UUID) {
			out = append(out, i)
		}
	}
	return out
}
