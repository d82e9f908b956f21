// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"encoding/json"
	"math"
)

// A p95 wait is +Inf when more than 5% of pods never started (P95Wait),
// which JSON cannot hold: the types that carry one write it as null and add
// queue_delay_p95_unbounded: true. Their other fields are written as
// declared.

// finite returns &v, or nil when v is infinite or NaN.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes s with an unbounded p95 wait as null.
func (s ReplayStats) MarshalJSON() ([]byte, error) {
	type plain ReplayStats
	return json.Marshal(struct {
		plain
		P95       *float64 `json:"queue_delay_p95_seconds"`
		Unbounded bool     `json:"queue_delay_p95_unbounded,omitempty"`
	}{plain(s), finite(s.QueueDelayP95Seconds), math.IsInf(s.QueueDelayP95Seconds, 1)})
}

// MarshalJSON writes s with an unbounded mean p95 wait (some seed's was) as
// null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	if !math.IsInf(s.QueueDelayP95Seconds, 1) {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		P95       *float64 `json:"queue_delay_p95_seconds"`
		Unbounded bool     `json:"queue_delay_p95_unbounded"`
	}{plain(s), nil, true})
}

// MarshalJSON writes r with an unbounded mean p95 wait as null.
func (r SharingRow) MarshalJSON() ([]byte, error) {
	type plain SharingRow
	if !math.IsInf(r.QueueDelayP95Seconds, 1) {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		P95       *float64 `json:"queue_delay_p95_seconds"`
		Unbounded bool     `json:"queue_delay_p95_unbounded"`
	}{plain(r), nil, true})
}

// MarshalJSON writes r with an infinite value or margin (a runner-up whose
// p95 wait is unbounded) as null.
func (r Recommendation) MarshalJSON() ([]byte, error) {
	type plain Recommendation
	return json.Marshal(struct {
		plain
		Value         *float64 `json:"value"`
		RunnerUpValue *float64 `json:"runner_up_value,omitempty"`
		Margin        *float64 `json:"margin"`
		Spread        *float64 `json:"spread"`
	}{plain(r), finite(r.Value), finite(r.RunnerUpValue), finite(r.Margin), finite(r.Spread)})
}

// MarshalJSON writes s with an unbounded p95 wait as null.
func (s TeamStats) MarshalJSON() ([]byte, error) {
	type plain TeamStats
	return json.Marshal(struct {
		plain
		P95       *float64 `json:"wait_p95_seconds"`
		Unbounded bool     `json:"wait_p95_unbounded,omitempty"`
	}{plain(s), finite(s.WaitP95Seconds), math.IsInf(s.WaitP95Seconds, 1)})
}
