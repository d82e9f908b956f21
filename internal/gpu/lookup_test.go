// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"reflect"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, name := range []string{"A100-80GB", "a100-80gb", "A100-80gb", "t4", "h200-141GB"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(%q) failed", name)
		}
	}
	if m, _ := Lookup("a100-80gb"); m.Name != "A100-80GB" {
		t.Errorf("Lookup(a100-80gb) = %q", m.Name)
	}
	if _, ok := Lookup("H100"); ok {
		t.Error("H100 is not a catalog name")
	}
	if got := Canonical("v100m16"); got != "V100M16" {
		t.Errorf("Canonical(v100m16) = %q", got)
	}
	if got := Canonical("B200"); got != "B200" {
		t.Errorf("Canonical(B200) = %q", got)
	}
	for name, want := range map[string][]string{
		"H100":       {"H100-80GB", "H100-NVL"},
		"h100":       {"H100-80GB", "H100-NVL"},
		"A100":       {"A100-40GB", "A100-80GB"},
		"V100M61":    {"V100M16"}, // two letters swapped: one edit
		"A100-80G":   {"A100-80GB"},
		"T4":         nil,               // known
		"B200":       nil,               // known
		"GB300":      {"B200", "GH200"}, // not catalogued: two edits from each
		"Ascend910B": nil,               // nothing near
		"MI300":      {"MI300X"},        // the start of MI300X
		"A100-80GB":  nil,
	} {
		if got := Suggest(name); !reflect.DeepEqual(got, want) {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
	if got, want := DidYouMean("H100"), `; did you mean "H100-80GB" or "H100-NVL"?`; got != want {
		t.Errorf("DidYouMean(H100) = %q, want %q", got, want)
	}
}
