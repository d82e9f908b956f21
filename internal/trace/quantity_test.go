// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Values worked out by hand from the suffix rules of
// k8s.io/apimachinery/pkg/api/resource/quantity.go (MilliValue and Value
// round up).
func TestQuantity(t *testing.T) {
	for _, tc := range []struct {
		in           string
		milli, value int64
	}{
		{"500m", 500, 1},
		{"2", 2000, 2},
		{"0.5", 500, 1},
		{".5", 500, 1},
		{"5.", 5000, 5},
		{"+1", 1000, 1},
		{".", 0, 0},
		{"0e2000", 0, 0},
		{"1e-2000", 1, 1},
		{"000", 0, 0},
		{"0.1m", 1, 1}, // 0.0001 rounds up to 1m
		{"1e3", 1000000, 1000},
		{"1E3", 1000000, 1000},
		{"1e-3", 1, 1},
		{"1.5e+2", 150000, 150},
		{"2Gi", 2147483648000, 2147483648},
		{"64G", 64000000000000, 64000000000},
		{"1Ki", 1024000, 1024},
		{"1.5Mi", 1572864000, 1572864},
		{"100k", 100000000, 100000},
		{"3M", 3000000000, 3000000},
		{"1T", 1000000000000000, 1000000000000},
		{"1P", 1000000000000000000, 1000000000000000},
		{"5E", math.MaxInt64, 5000000000000000000}, // milli overflows: checked below
		{"1n", 1, 1},
		{"1500u", 2, 1},
		{"7Ei", math.MaxInt64, 7 << 60},
		{"0e100", 0, 0},
		{"Mi", 0, 0}, // no digits: 0, as apimachinery reads it
		{".", 0, 0},
		{"0e2000", 0, 0},
		{"1e-2000", 1, 1},
	} {
		v, err := QuantityValue(tc.in)
		if err != nil || v != tc.value {
			t.Errorf("QuantityValue(%q) = %d, %v; want %d", tc.in, v, err, tc.value)
		}
		m, err := QuantityMilli(tc.in)
		if tc.milli == math.MaxInt64 {
			if err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("QuantityMilli(%q) = %d, %v; want out of range", tc.in, m, err)
			}
			continue
		}
		if err != nil || m != tc.milli {
			t.Errorf("QuantityMilli(%q) = %d, %v; want %d", tc.in, m, err, tc.milli)
		}
	}
	for _, in := range []string{"", "-1", "-500m", "abc", "1K", "1ki", "1e", "1e3.5", "1.2.3", "1 ", " 1", "1Mi5", "1e1001", "8Ei", "Pi", "E-10", "1" + strings.Repeat("0", 70)} {
		if v, err := QuantityValue(in); err == nil {
			t.Errorf("QuantityValue(%q) = %d, want an error", in, v)
		}
	}
	if CeilMiB(1<<20+1) != 2 || CeilMiB(1<<20) != 1 || FloorMiB(2<<20-1) != 1 || CeilMiB(0) != 0 {
		t.Error("CeilMiB or FloorMiB wrong")
	}
}

// FuzzQuantity compares the parser with apimachinery's (the test may link
// it; cmd/gpuplane may not): where both accept a quantity at least 0 and
// below 2^53 milli, MilliValue and Value agree; where apimachinery refuses
// one, so does ours.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"500m", "2Gi", "1e3", "64G", "0.1m", "1.5Mi", ".5", "1E3", "7Ei", "1e-3", "-1", "1K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, errM := QuantityMilli(s)
		v, errV := QuantityValue(s)
		if i := strings.LastIndexAny(s, "eE"); i >= 0 && len(s)-i > 5 {
			return // apimachinery takes seconds on 0e33000000
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			if errV == nil {
				t.Fatalf("%q: apimachinery refuses it (%v), ours reads %d", s, err, v)
			}
			return
		}
		if q.Sign() < 0 || q.Cmp(resource.MustParse("9007199254740")) > 0 {
			return
		}
		if errM != nil || errV != nil {
			if len(s) > maxQuantityLen {
				return
			}
			t.Fatalf("%q: apimachinery reads %s, ours refuses it: %v %v", s, q.String(), errM, errV)
		}
		if m != q.MilliValue() || v != q.Value() {
			t.Fatalf("%q: ours %d milli, %d; apimachinery %d, %d", s, m, v, q.MilliValue(), q.Value())
		}
	})
}
