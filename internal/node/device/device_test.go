// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package device

import (
	"strings"
	"testing"
)

func TestParseLink(t *testing.T) {
	for cell, want := range map[string]Link{
		"NV1": {LinkNVLink, 1}, "NV18": {LinkNVLink, 18}, "PIX": {LinkPCIeSwitch, 0}, "PXB": {LinkMultiSwitch, 0},
		"PHB": {LinkHostBridge, 0}, "NODE": {LinkSameSocket, 0}, "SYS": {LinkCrossSocket, 0},
	} {
		got, err := ParseLink(cell)
		if err != nil || got != want {
			t.Errorf("ParseLink(%q) = %v, %v; want %v", cell, got, err, want)
		}
	}
	for _, cell := range []string{"X", "NV", "NV0", "NVx", "nv1", "", "SOC", "NV99999999999"} {
		if _, err := ParseLink(cell); err == nil || !strings.Contains(err.Error(), "link") {
			t.Errorf("ParseLink(%q) = %v, want error", cell, err)
		}
	}
}

func FuzzParseLink(f *testing.F) {
	f.Fuzz(func(t *testing.T, cell string) {
		l, err := ParseLink(cell)
		if err != nil {
			return
		}
		// What parses prints back to an equivalent cell.
		back, err := ParseLink(l.String())
		if err != nil || back != l {
			t.Fatalf("ParseLink(%q) = %v; String %q parses to %v, %v", cell, l, l.String(), back, err)
		}
	})
}
