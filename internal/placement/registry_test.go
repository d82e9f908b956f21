// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement

import (
	"testing"
)

func TestNew(t *testing.T) {
	tw := NewTargetWorkload(nil, 0.95)
	if len(registry) != len(Names) {
		t.Errorf("registry has %d policies, Names %d", len(registry), len(Names))
	}
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			p, err := New(name, tw)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != name {
				t.Errorf("New(%q).Name() = %q", name, p.Name())
			}
			_, uniform := p.(UniformRandom)
			_, normalizer := p.(Normalizer)
			if uniform != (name == "random") || normalizer != (name == "bestfit") {
				t.Errorf("UniformRandom %v, Normalizer %v", uniform, normalizer)
			}
		})
	}
	for _, tc := range []struct {
		name, policy string
		tw           *TargetWorkload
		err          string
	}{
		{"unknown name", "tetris", tw, `unknown policy "tetris" (known: random, dotproduct, gpupacking, gpuclustering, bestfit, fgd, leastallocated, mostallocated, fgdcm, or all)`},
		{"names are case-sensitive", "FGD", tw, `unknown policy "FGD" (known: random, dotproduct, gpupacking, gpuclustering, bestfit, fgd, leastallocated, mostallocated, fgdcm, or all)`},
		{"fgd without a target workload", "fgd", nil, "policy fgd needs a target workload"},
		{"fgdcm without a target workload", "fgdcm", nil, "policy fgdcm needs a target workload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.policy, tc.tw); err == nil || err.Error() != tc.err {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
	// Policies that need no target workload accept nil.
	if _, err := New("bestfit", nil); err != nil {
		t.Error(err)
	}
}

func TestParseNames(t *testing.T) {
	for _, tc := range []struct {
		name, list string
		want       []string
		err        bool
	}{
		{"report order, duplicates dropped", "fgd, bestfit,fgd", []string{"bestfit", "fgd"}, false},
		{"case and spaces ignored", " Random ", []string{"random"}, false},
		{"all", "all", Names, false},
		{"unknown", "fgd,nope", nil, true},
		{"empty", " , ", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNames(tc.list)
			if (err != nil) != tc.err || len(got) != len(tc.want) {
				t.Fatalf("ParseNames(%q) = %v, %v", tc.list, got, err)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("ParseNames(%q) = %v, want %v", tc.list, got, tc.want)
				}
			}
		})
	}
}
