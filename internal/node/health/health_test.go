// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package health

import (
	"testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// node: GPU-a in MIG mode with MIG-x and MIG-y, GPU-b whole.
var node = device.Node{GPUs: []device.GPU{
	{UUID: "GPU-a", MIGEnabled: true, MIG: []device.MIGDevice{{UUID: "MIG-x"}, {UUID: "MIG-y"}}},
	{UUID: "GPU-b"},
}}

// healthy returns the health of GPU-a, MIG-x, MIG-y and GPU-b as "1" or "0".
func healthy(s *State) string {
	out := ""
	for _, u := range []string{"GPU-a", "MIG-x", "MIG-y", "GPU-b"} {
		if s.Healthy(u) {
			out += "1"
		} else {
			out += "0"
		}
	}
	return out
}

func TestPolicy(t *testing.T) {
	s := NewState(node, configv1.DefaultIgnoredXIDs)
	for i, step := range []struct {
		ev      device.HealthEvent
		changed bool
		want    string
	}{
		{device.HealthEvent{UUID: "GPU-a", Kind: device.HealthXID, XID: 13}, false, "1111"}, // application error: ignored
		{device.HealthEvent{UUID: "GPU-b", Kind: device.HealthXID, XID: 79}, true, "1110"},  // fell off the bus
		{device.HealthEvent{UUID: "GPU-b", Kind: device.HealthLost}, false, "1110"},         // already unhealthy
		{device.HealthEvent{UUID: "MIG-y", Kind: device.HealthXID, XID: 94}, true, "1100"},  // a MIG device alone
		{device.HealthEvent{UUID: "GPU-a", Kind: device.HealthLost}, true, "0000"},          // the parent takes its MIG devices
		{device.HealthEvent{UUID: "GPU-a", Kind: device.HealthRecovered}, true, "1100"},     // MIG-y keeps its own XID
		{device.HealthEvent{UUID: "MIG-y", Kind: device.HealthRecovered}, true, "1110"},
		{device.HealthEvent{UUID: "GPU-b", Kind: device.HealthRecovered}, true, "1111"},
		{device.HealthEvent{UUID: "GPU-b", Kind: device.HealthRecovered}, false, "1111"}, // nothing to recover
		{device.HealthEvent{UUID: "GPU-b"}, false, "1111"},                               // unknown kind
	} {
		if got := s.Apply(step.ev); got != step.changed {
			t.Errorf("step %d %+v: changed %v, want %v", i, step.ev, got, step.changed)
		}
		if got := healthy(s); got != step.want {
			t.Errorf("step %d %+v: health %s, want %s", i, step.ev, got, step.want)
		}
	}
}

func TestIgnoredXIDs(t *testing.T) {
	// NVIDIA's application XIDs are not critical; 48 (double-bit ECC), 79
	// (fallen off the bus) and 94/95 (contained/uncontained ECC) are.
	s := NewState(device.Node{}, configv1.DefaultIgnoredXIDs)
	for xid, want := range map[uint64]bool{13: false, 31: false, 43: false, 45: false, 68: false, 109: false, 48: true, 79: true, 94: true, 95: true} {
		if s.Critical(xid) != want {
			t.Errorf("Critical(%d) = %v, want %v", xid, !want, want)
		}
	}
	// An empty list ignores nothing.
	if !NewState(device.Node{}, nil).Critical(13) {
		t.Error("with no ignored XIDs, XID 13 is not critical")
	}
}

func TestSetNode(t *testing.T) {
	s := NewState(device.Node{}, nil)
	s.Apply(device.HealthEvent{UUID: "GPU-a", Kind: device.HealthLost})
	if !s.Healthy("MIG-x") {
		t.Error("MIG-x unhealthy before its parent is known")
	}
	s.SetNode(node)
	if s.Healthy("MIG-x") || s.Healthy("GPU-a") {
		t.Error("after SetNode, lost GPU-a's MIG-x is healthy")
	}
}

// NVIDIA's rule for DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS:
// k8s-device-plugin internal/rm/health.go (getDisabledHealthCheckXids,
// newHealthCheckXIDs, checkHealth) and its cases in health_test.go
// (TestNewHealthCheckXIDs, TestGetDisabledHealthCheckXids).
func TestIgnoredXIDsFromEnv(t *testing.T) {
	app := configv1.DefaultIgnoredXIDs // 13, 31, 43, 45, 68, 109
	for _, tc := range []struct {
		disable, enable string
		want            []uint64
		warnings        int
	}{
		{"", "", app, 0},
		{",", "", app, 0},
		{"68,", "", app, 0},
		{"48", "", []uint64{13, 31, 43, 45, 48, 68, 109}, 0},
		{"48 , 63", "", []uint64{13, 31, 43, 45, 48, 63, 68, 109}, 0},
		{"48,not-an-int,-63", "", []uint64{13, 31, 43, 45, 48, 68, 109}, 2},
		{"all", "", []uint64{AllXIDs}, 0},
		{"XIDs", "", []uint64{AllXIDs}, 0},
		{"48,all", "", []uint64{AllXIDs}, 0},
		{"0", "", []uint64{AllXIDs}, 0},     // NVIDIA's key for all, as a number
		{"all", "94", []uint64{AllXIDs}, 1}, // checkHealth returns before the enabled XIDs
		{"", "all", nil, 0},
		{"all", "all", nil, 0},
		{"11", "11", app, 0},                           // enabled overrides disabled
		{"", "13,43", []uint64{31, 45, 68, 109}, 0},    // application XIDs made critical
		{"", "13,x", []uint64{31, 43, 45, 68, 109}, 1}, // malformed enable entry
	} {
		got, warns := IgnoredXIDs(app, tc.disable, tc.enable)
		if !equalXIDs(got, tc.want) || len(warns) != tc.warnings {
			t.Errorf("disable %q enable %q: %v (warnings %q), want %v with %d warnings", tc.disable, tc.enable, got, warns, tc.want, tc.warnings)
		}
	}
	// Under all, XID 94 (contained ECC error) is not critical; a lost GPU
	// still is.
	ignored, _ := IgnoredXIDs(app, "all", "")
	s := NewState(node, ignored)
	if s.Apply(device.HealthEvent{UUID: "GPU-b", Kind: device.HealthXID, XID: 94}) || !s.Healthy("GPU-b") {
		t.Error("XID 94 is critical under DP_DISABLE_HEALTHCHECKS=all")
	}
	if !s.Apply(device.HealthEvent{UUID: "GPU-b", Kind: device.HealthLost}) || s.Healthy("GPU-b") {
		t.Error("a lost GPU is healthy under DP_DISABLE_HEALTHCHECKS=all")
	}
	// Under enable all, application XID 13 is critical.
	ignored, _ = IgnoredXIDs(app, "", "all")
	if !NewState(node, ignored).Critical(13) {
		t.Error("XID 13 is not critical under DP_ENABLE_HEALTHCHECKS=all")
	}
}

func equalXIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFaultsAtDiscovery: faults the backend found at discovery (a lost GPU
// with its MIG devices; an application XID, ignored) make the devices
// unhealthy from the start, for the device plugin and the exporter alike,
// both of which build their state from the discovered node.
func TestFaultsAtDiscovery(t *testing.T) {
	n := node
	n.Faults = []device.HealthEvent{
		{UUID: "GPU-a", Kind: device.HealthLost},
		{UUID: "GPU-b", Kind: device.HealthXID, XID: 13},
	}
	s := NewState(n, configv1.DefaultIgnoredXIDs)
	if got := healthy(s); got != "0001" {
		t.Errorf("after discovery %s, want 0001", got)
	}
	s = NewState(device.Node{}, configv1.DefaultIgnoredXIDs)
	s.SetNode(n)
	if got := healthy(s); got != "0001" {
		t.Errorf("after SetNode %s, want 0001", got)
	}
}
