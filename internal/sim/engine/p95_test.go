// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestP95Wait: one definition of the p95 wait, every pod by nearest rank,
// a pod never started waiting without end.
func TestP95Wait(t *testing.T) {
	waits := []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 60, 120} // 20 started
	// 20 pods: rank ⌈19⌉ = 19th smallest, 60 s.
	if got := P95Wait(waits, 0); got != 60 {
		t.Errorf("20 started: %v, want 60", got)
	}
	// 19 started + 1 never: rank 19 is the 19th started wait, 120 s.
	if got := P95Wait(waits[1:], 1); got != 120 {
		t.Errorf("19 started, 1 never: %v, want 120", got)
	}
	// 18 started + 2 never (10%): rank 19 falls on a pod never started.
	if got := P95Wait(waits[2:], 2); !math.IsInf(got, 1) {
		t.Errorf("18 started, 2 never: %v, want +Inf", got)
	}
	// The case that printed "p95 0.00 h" beside "never started 23253":
	// 3% started, all at once.
	if got := P95Wait([]float64{0, 0, 0}, 97); !math.IsInf(got, 1) {
		t.Errorf("3 started, 97 never: %v, want +Inf", got)
	}
	if got := P95Wait(nil, 0); got != 0 {
		t.Errorf("no pods: %v", got)
	}
	// JSON holds no infinity: null, and unbounded true.
	b, err := json.Marshal(ReplayStats{QueueDelayP95Seconds: math.Inf(1)})
	if err != nil || !strings.Contains(string(b), `"queue_delay_p95_seconds":null`) || !strings.Contains(string(b), `"queue_delay_p95_unbounded":true`) {
		t.Errorf("%s, %v", b, err)
	}
	b, err = json.Marshal(Summary{Policy: "x", QueueDelayP95Seconds: math.Inf(1)})
	if err != nil || !strings.Contains(string(b), `"queue_delay_p95_seconds":null`) {
		t.Errorf("%s, %v", b, err)
	}
	b, err = json.Marshal(ReplayStats{QueueDelayP95Seconds: 30})
	if err != nil || !strings.Contains(string(b), `"queue_delay_p95_seconds":30`) || strings.Contains(string(b), "unbounded") {
		t.Errorf("%s, %v", b, err)
	}
}
