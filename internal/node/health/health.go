// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package health is the node agent's one GPU health policy. The device
// plugin (the health the kubelet is told in ListAndWatch) and the exporter
// (gpuplane_device_health) both apply it, so they always agree:
//
//   - an XID error makes its device unhealthy, unless it is an application
//     XID (gpuplane.ignoredXIDs of api/config/v1; by default NVIDIA's device
//     plugin's list, configv1.DefaultIgnoredXIDs), changed by NVIDIA's
//     DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS (IgnoredXIDs);
//     AllXIDs in the list ignores every XID;
//   - a lost device (fallen off the bus, not answering) is unhealthy;
//   - a MIG device is unhealthy while its parent GPU is;
//   - a recovered event makes the device healthy again.
package health

import "github.com/gpuplane/gpuplane/internal/node/device"

// State is the health of one node's GPUs and MIG devices under the policy,
// fed by the backend's health events. Every device starts healthy. A State
// is not safe for concurrent use.
type State struct {
	ignored   map[uint64]bool
	parent    map[string]string             // MIG device UUID -> its GPU's UUID
	unhealthy map[string]device.HealthEvent // by GPU or MIG device UUID
}

// NewState returns a State of node n, with every device healthy, that
// ignores the given application XIDs.
func NewState(n device.Node, ignoredXIDs []uint64) *State {
	s := &State{ignored: make(map[uint64]bool, len(ignoredXIDs)), unhealthy: make(map[string]device.HealthEvent)}
	for _, x := range ignoredXIDs {
		s.ignored[x] = true
	}
	s.SetNode(n)
	return s
}

// SetNode replaces the node whose MIG devices inherit their GPU's health
// (after a new discovery) and records the faults found at that discovery
// (n.Faults); the recorded events are kept.
func (s *State) SetNode(n device.Node) {
	s.parent = make(map[string]string)
	for _, g := range n.GPUs {
		for _, m := range g.MIG {
			s.parent[m.UUID] = g.UUID
		}
	}
	for _, ev := range n.Faults {
		s.Apply(ev)
	}
}

// Critical reports whether an XID makes its device unhealthy.
func (s *State) Critical(xid uint64) bool { return !s.ignored[AllXIDs] && !s.ignored[xid] }

// Apply records ev. It reports whether the event's device changed between
// healthy and unhealthy by its own events: an ignored XID, or an event that
// repeats the device's current state, changes nothing.
func (s *State) Apply(ev device.HealthEvent) bool {
	_, was := s.unhealthy[ev.UUID]
	switch ev.Kind {
	case device.HealthXID:
		if !s.Critical(ev.XID) {
			return false
		}
		s.unhealthy[ev.UUID] = ev
	case device.HealthLost:
		s.unhealthy[ev.UUID] = ev
	case device.HealthRecovered:
		delete(s.unhealthy, ev.UUID)
	default:
		return false
	}
	_, is := s.unhealthy[ev.UUID]
	return is != was
}

// Healthy reports whether the GPU or MIG device uuid is healthy: neither it
// nor, for a MIG device, its parent GPU is unhealthy.
func (s *State) Healthy(uuid string) bool {
	if _, bad := s.unhealthy[uuid]; bad {
		return false
	}
	if p, ok := s.parent[uuid]; ok {
		if _, bad := s.unhealthy[p]; bad {
			return false
		}
	}
	return true
}
