// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package prices

import (
	"math"
	"testing"
)

func TestUSDPerHour(t *testing.T) {
	// Half a T4 (500 milli-GPU at 0.35 USD per GPU-hour): 0.175 USD/h.
	if got := USDPerHour(500, 0.35); math.Abs(got-0.175) > 1e-15 {
		t.Errorf("USDPerHour(500, 0.35) = %v, want 0.175", got)
	}
	if got := USDPerHour(3000, 2); got != 6 {
		t.Errorf("USDPerHour(3000, 2) = %v, want 6", got)
	}
}

func TestMeter(t *testing.T) {
	// Two GPUs: a T4 (0.35 USD/h) and a GPU at 1 USD/h. From t=100 s:
	// 0-60 s: half the T4 allocated; 60-120 s: also the whole other GPU;
	// 120-180 s: only the other GPU. Span 180 s.
	m := NewMeter(100)
	m.AddCapacity(1000, 0.35)
	m.AddCapacity(1000, 1)
	m.Allocate(500, 0.35)
	m.Advance(160)
	m.Allocate(1000, 1)
	if got := m.AllocationRatio(); got != 0.75 {
		t.Errorf("allocation ratio at 160 s = %v, want 0.75", got)
	}
	m.Advance(220)
	m.Release(500, 0.35)
	m.Advance(280)
	m.Advance(200) // the clock never goes back
	// Allocated milli-GPU·s: 500·60 + 1500·60 + 1000·60 = 180,000, that is
	// 180 GPU-seconds = 0.05 GPU-hours; capacity 2000·180 = 360,000, so
	// idle 180,000 milli-GPU·s = 0.05 GPU-hours; time-weighted ratio 0.5.
	// Allocated cost: (0.175·60 + 1.175·60 + 1·60)/3600 = 141/3600 USD;
	// idle: the cluster's 1.35 USD/h · 180 s / 3600 − that = 102/3600 USD.
	for name, c := range map[string]struct{ got, want float64 }{
		"span":                {m.Span(), 180},
		"allocated GPU-hours": {m.AllocatedGPUHours(), 0.05},
		"idle GPU-hours":      {m.IdleGPUHours(), 0.05},
		"time-weighted ratio": {m.TimeWeightedAllocationRatio(), 0.5},
		"allocated USD":       {m.AllocatedUSD(), 141.0 / 3600},
		"idle USD":            {m.IdleUSD(), 102.0 / 3600},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	// An empty cluster and span: zeros, not NaN.
	e := NewMeter(5)
	if e.AllocationRatio() != 0 || e.TimeWeightedAllocationRatio() != 0 || e.IdleGPUHours() != 0 {
		t.Error("an empty meter reports non-zero ratios")
	}
}
