// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"reflect"
	"strings"
	"testing"
)

func TestMIGProfiles(t *testing.T) {
	for _, tc := range []struct {
		model, profile string
		id             int
		mem            int64
		sms, max       int
	}{
		{"A100-40GB", "1g.5gb", 0, 4864, 14, 7},
		{"A100-40GB", "1g.5gb+me", 7, 4864, 14, 1},
		{"A100-40GB", "1g.10gb", 9, 9856, 14, 4},
		{"A100-40GB", "7g.40gb", 4, 40192, 98, 1},
		{"A100-80GB", "1g.10gb", 0, 9856, 14, 7},
		{"A100-80GB", "3g.40gb", 2, 40192, 42, 2},
		{"H100-80GB", "1g.20gb", 9, 20480, 26, 4},
		{"H100-80GB", "7g.80gb", 4, 81920, 132, 1},
		{"H200-141GB", "1g.18gb", 0, 18432, 16, 7},
		{"H200-141GB", "4g.71gb", 3, 72704, 64, 1},
	} {
		p, ok := LookupMIGProfile(tc.model, tc.profile)
		if !ok || p.GIProfileID != tc.id || p.MemoryMiB != tc.mem || p.Multiprocessors != tc.sms || p.MaxInstances != tc.max {
			t.Errorf("%s %s = %+v, %v", tc.model, tc.profile, p, ok)
		}
	}
	if MIGProfiles("L40S") != nil || MIGProfiles("V100M16") != nil {
		t.Error("non-MIG models have MIG profiles")
	}
	if n := len(MIGProfiles("H200-141GB")); n != 7 {
		t.Errorf("H200 has %d profiles, want 7", n)
	}
}

func TestPlaceMIG(t *testing.T) {
	for _, tc := range []struct {
		profiles []string
		starts   []int
	}{
		// Largest first: 3g takes slots 0-3, so 2g goes to 4-5 and the
		// two 1g to 6 and 7? No: 1g may start at 0-6 only, so 3g at 0-3,
		// 2g at 4-5, 1g at 6, and the second 1g has no slot: backtrack
		// to 3g at 4-7, 2g at 0-1, 1g at 2 and 3.
		{[]string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}, []int{4, 0, 2, 3}},
		{[]string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, []int{0, 1, 2, 3, 4, 5, 6}},
		{[]string{"4g.40gb", "2g.20gb", "1g.10gb"}, []int{0, 4, 6}},
		{[]string{"7g.80gb"}, []int{0}},
		{nil, []int{}},
	} {
		got, err := PlaceMIG("A100-80GB", tc.profiles)
		if err != nil {
			t.Errorf("%v: %v", tc.profiles, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.starts) {
			t.Errorf("%v: starts %v, want %v", tc.profiles, got, tc.starts)
		}
	}
	for _, tc := range []struct {
		model    string
		profiles []string
		want     string
	}{
		{"L40S", []string{"1g.10gb"}, "does not support MIG"},
		{"A100-80GB", []string{"1g.5gb"}, `no MIG profile "1g.5gb"`},
		{"A100-80GB", []string{"3g.40gb", "3g.40gb", "1g.10gb"}, "no valid placement"},
		{"A100-80GB", []string{"4g.40gb", "4g.40gb"}, "at most 1 instances"},
		{"A100-80GB", []string{"4g.40gb", "3g.40gb", "1g.10gb"}, "8 compute slices"},
	} {
		if _, err := PlaceMIG(tc.model, tc.profiles); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.model, tc.profiles, err, tc.want)
		}
	}
}

// The smallest profile holding a share, from the A100-80GB table of the
// NVIDIA MIG user guide ("Supported MIG Profiles": 1g.10gb 1/7 of the
// compute and 9.5 GiB... 7g.80gb all of it; memory as NVML reports it,
// 1g.10gb 9856 MiB, 1g.20gb and 2g.20gb 19968 MiB, 3g.40gb 40192 MiB).
func TestSmallestMIGProfile(t *testing.T) {
	for _, tc := range []struct {
		milli, mem int64
		want       string
	}{
		{100, 0, "1g.10gb"},
		{142, 0, "1g.10gb"}, // 1/7 = 142.86 milli-GPU
		{143, 0, "2g.20gb"},
		{300, 0, "3g.40gb"}, // 2/7 = 285.7 < 300 ≤ 3/7 = 428.6
		{428, 0, "3g.40gb"},
		{429, 0, "4g.40gb"},
		{600, 0, "7g.80gb"}, // 4/7 = 571.4 < 600
		{1000, 0, "7g.80gb"},
		{100, 15000, "1g.20gb"}, // 9856 MiB too little; 1 slice, 2 memory slots
		{100, 30000, "3g.40gb"}, // 19968 too little
		{100, 90000, ""},        // more than 80384 MiB
	} {
		k, ok := SmallestMIGProfile("A100-80GB", tc.milli, tc.mem)
		got := ""
		if ok {
			got = MIGProfiles("A100-80GB")[k].Name
		}
		if got != tc.want {
			t.Errorf("SmallestMIGProfile(%d milli, %d MiB) = %q, want %q", tc.milli, tc.mem, got, tc.want)
		}
	}
	if _, ok := SmallestMIGProfile("T4", 100, 0); ok {
		t.Error("T4 has a MIG profile")
	}
}

func TestChooseMIGLayout(t *testing.T) {
	names := func(l MIGLayout) string { return strings.Join(l.Names("A100-80GB"), "+") }
	for _, tc := range []struct {
		demand [NumMIGProfiles]float64
		want   string
	}{
		// Only 1g pods: seven 1g instances match exactly.
		{[NumMIGProfiles]float64{0: 10}, strings.Repeat("1g.10gb+", 6) + "1g.10gb"},
		// Only 3g pods: two 3g (6 of 7 slices, all 8 memory slots).
		{[NumMIGProfiles]float64{4: 5}, "3g.40gb+3g.40gb"},
		// Half the slices 1g, half 3g: 3g + four 1g (3/7 and 4/7, distance
		// 1/7), closer than 3g+3g+... or seven 1g (distance 1).
		{[NumMIGProfiles]float64{0: 3, 4: 1}, "3g.40gb+1g.10gb+1g.10gb+1g.10gb+1g.10gb"},
		// Only 7g.
		{[NumMIGProfiles]float64{6: 1}, "7g.80gb"},
	} {
		l, ok := ChooseMIGLayout("A100-80GB", tc.demand)
		if !ok || names(l) != tc.want {
			t.Errorf("ChooseMIGLayout(%v) = %s, want %s", tc.demand, names(l), tc.want)
		}
	}
	if _, ok := ChooseMIGLayout("A100-80GB", [NumMIGProfiles]float64{}); ok {
		t.Error("a layout for no demand")
	}
	// Layouts of the A100 placement figure (MIG user guide) are there;
	// 4g+2g (room for a 1g) is not maximal, 4g+4g not valid.
	have := map[string]bool{}
	for _, l := range MIGLayouts("A100-80GB") {
		have[names(l)] = true
	}
	for _, w := range []string{"7g.80gb", "4g.40gb+3g.40gb", "4g.40gb+2g.20gb+1g.10gb", "2g.20gb+2g.20gb+2g.20gb+1g.10gb", "3g.40gb+2g.20gb+1g.10gb+1g.10gb"} {
		if !have[w] {
			t.Errorf("MIGLayouts lacks %s", w)
		}
	}
	for _, w := range []string{"4g.40gb+2g.20gb", "4g.40gb+4g.40gb"} {
		if have[w] {
			t.Errorf("MIGLayouts has %s", w)
		}
	}
}
