package deviceplugin

import (
	"sync"

	"github.com/gpuplane/gpuplane/internal/device"
)

// Health is the health of a node's GPUs and MIG devices, fed by backend
// health events and read by the device-plugin servers. A device is
// unhealthy while it, or its parent GPU, has an unrecovered critical XID or
// is lost. It is safe for concurrent use.
type Health struct {
	ignored map[uint64]bool

	mu        sync.Mutex
	unhealthy map[string]device.HealthEvent // by GPU or MIG UUID
	subs      map[chan struct{}]struct{}
}

// NewHealth returns a Health with every device healthy that ignores the
// given (application-level) XIDs.
func NewHealth(ignoredXIDs []uint64) *Health {
	h := &Health{ignored: map[uint64]bool{}, unhealthy: map[string]device.HealthEvent{}, subs: map[chan struct{}]struct{}{}}
	for _, x := range ignoredXIDs {
		h.ignored[x] = true
	}
	return h
}

// Apply records ev and wakes the subscribers when it changes a device's
// health. It reports whether it did: an ignored XID, or an event that
// repeats the current state, changes nothing.
func (h *Health) Apply(ev device.HealthEvent) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, bad := h.unhealthy[ev.UUID]
	switch ev.Kind {
	case device.HealthXID:
		if h.ignored[ev.XID] {
			return false
		}
		h.unhealthy[ev.UUID] = ev
	case device.HealthLost:
		h.unhealthy[ev.UUID] = ev
	case device.HealthRecovered:
		delete(h.unhealthy, ev.UUID)
	default:
		return false
	}
	if _, now := h.unhealthy[ev.UUID]; now == bad {
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

// Healthy reports whether none of the UUIDs (a device and its parent GPU)
// is unhealthy.
func (h *Health) Healthy(uuids ...string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range uuids {
		if _, bad := h.unhealthy[u]; bad {
			return false
		}
	}
	return true
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
