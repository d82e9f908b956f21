// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// freshIDs gives the test a table holding only the catalog's models and
// puts the process's table back afterwards.
func freshIDs(t *testing.T) {
	t.Helper()
	saved := ids
	ids = newIDTable()
	t.Cleanup(func() { ids = saved })
}

func TestModelID(t *testing.T) {
	freshIDs(t)
	// The catalog lists P100, T4, V100M16, V100M32, A10, G2, G3, A100-40GB,
	// A100-80GB, H100-80GB, H200-141GB, L4, L40S, H100-NVL, H20, GH200, B200,
	// MI250X, MI300X, MI325X, MI355X, Gaudi2, Gaudi3: IDs 0..22 in that
	// order, so the first new name gets 23.
	for _, tc := range []struct {
		name     string
		in       string
		id       int
		spelling string
	}{
		{"catalog first", "P100", 0, "P100"},
		{"catalog lower case", "t4", 1, "T4"},
		{"catalog mixed case", "h100-80gb", 9, "H100-80GB"},
		{"catalog last", "L40S", 12, "L40S"},
		{"catalog AMD", "MI300X", 18, "MI300X"},
		{"catalog Intel, lower case", "gaudi3", 22, "Gaudi3"},
		{"new name", "Ascend910B", 23, "Ascend910B"},
		{"new name again, other case", "ascend910b", 23, "Ascend910B"},
		{"second new name", "MLU370", 24, "MLU370"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := ModelID(tc.in)
			if err != nil || id != tc.id {
				t.Fatalf("ModelID(%q) = %d, %v; want %d", tc.in, id, err, tc.id)
			}
			if got := ModelName(id); got != tc.spelling {
				t.Errorf("ModelName(%d) = %q, want %q", id, got, tc.spelling)
			}
		})
	}
	if _, err := ModelID(""); err == nil {
		t.Error("ModelID(\"\") accepted an empty name")
	}
	for _, id := range []int{-1, 25, 64} {
		if got := ModelName(id); got != "" {
			t.Errorf("ModelName(%d) = %q for an ID never given out", id, got)
		}
	}
}

func TestModelIDRefusesThe65thModel(t *testing.T) {
	freshIDs(t)
	// 23 catalog models + 41 new names = 64.
	for i := 0; i < 41; i++ {
		id, err := ModelID(fmt.Sprintf("test-model-%d", i))
		if err != nil || id != 23+i {
			t.Fatalf("new model %d: ID %d, %v; want %d", i, id, err, 23+i)
		}
	}
	if _, err := ModelID("one-too-many"); err == nil || !strings.Contains(err.Error(), "more than 64 GPU models") {
		t.Fatalf("65th model: err = %v, want \"more than 64 GPU models\"", err)
	}
	// Known names still resolve when the table is full.
	if id, err := ModelID("TEST-MODEL-40"); err != nil || id != 63 {
		t.Fatalf("known name in a full table: %d, %v; want 63", id, err)
	}
}

func TestModelIDConcurrent(t *testing.T) {
	freshIDs(t)
	names := []string{"X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8"}
	got := make([][]int, 16)
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				// Goroutines ask in different orders.
				id, err := ModelID(names[(i+g)%len(names)])
				if err != nil {
					t.Error(err)
				}
				got[g] = append(got[g], id)
			}
		}()
	}
	wg.Wait()
	want := map[string]int{}
	for g, row := range got {
		for i, id := range row {
			n := names[(i+g)%len(names)]
			if w, ok := want[n]; ok && w != id {
				t.Fatalf("%s got IDs %d and %d", n, w, id)
			}
			want[n] = id
		}
	}
	seen := map[int]bool{}
	for _, id := range want {
		if id < 23 || id > 30 || seen[id] {
			t.Fatalf("IDs %v: want 8 distinct IDs 23..30", want)
		}
		seen[id] = true
	}
}

func TestParseModels(t *testing.T) {
	freshIDs(t)
	for _, tc := range []struct {
		name, spec string
		want       uint64
		format     string
	}{
		{"empty means any", "", 0, ""},
		{"one model", "T4", 1 << 1, "T4"},
		// V100M16 is ID 2, V100M32 ID 3; spaces and empty parts ignored.
		{"two models, spaces", " v100m32 | V100M16 |", 1<<2 | 1<<3, "V100M16|V100M32"},
		{"new model", "A10|NewGPU", 1<<4 | 1<<23, "A10|NewGPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseModels(tc.spec)
			if err != nil || got != tc.want {
				t.Fatalf("ParseModels(%q) = %b, %v; want %b", tc.spec, got, err, tc.want)
			}
			if f := FormatModels(got); f != tc.format {
				t.Errorf("FormatModels(%b) = %q, want %q", got, f, tc.format)
			}
		})
	}
}
