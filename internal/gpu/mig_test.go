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
