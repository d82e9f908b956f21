// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// roundJSONInput is the type TestRoundJSON's document is written from:
// the round tags its numbers are rounded by.
type roundJSONInput struct {
	GPUs               int     `json:"gpus"`
	IdleUSDPerHour     float64 `json:"idle_usd_per_hour" round:"cent"`
	GPUAllocationRatio float64 `json:"gpu_allocation_ratio"`
	WallSeconds        float64 `json:"wall_seconds" round:"ms"`
	Curve              []struct {
		T           float64 `json:"t" round:"ms"`
		WaitingPods int     `json:"waiting_pods"`
	} `json:"curve"`
	DelayPercentiles []float64          `json:"delay_percentiles_seconds" round:"ms"`
	Prices           map[string]float64 `json:"prices_usd_per_gpu_hour"`
	Name             string             `json:"name"`
	Neg              float64            `json:"neg"`
	No               *float64           `json:"no"`
	OK               bool               `json:"ok"`
	Xs               []float64          `json:"xs"`
}

// TestRoundJSON: money to the cent, seconds to the millisecond, prices and
// ratios to 6 significant digits, integers and key order as they are.
func TestRoundJSON(t *testing.T) {
	in := `{"gpus":1561,"idle_usd_per_hour":629.8996399999997,"gpu_allocation_ratio":0.9559123456,"wall_seconds":0.83912345,` +
		`"curve":[{"t":12.00049,"waiting_pods":3}],"delay_percentiles_seconds":[0.1234567,3600],` +
		`"prices_usd_per_gpu_hour":{"T4":0.000001234567,"A100":2.123456789},"name":"a<b","neg":-0.0000000001,"no":null,"ok":true,"xs":[1.23456789]}`
	got, err := roundJSON([]byte(in), reflect.TypeOf(roundJSONInput{}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"gpus":1561,"idle_usd_per_hour":629.9,"gpu_allocation_ratio":0.955912,"wall_seconds":0.839,` +
		`"curve":[{"t":12,"waiting_pods":3}],"delay_percentiles_seconds":[0.123,3600],` +
		`"prices_usd_per_gpu_hour":{"T4":0.00000123457,"A100":2.12346},"name":"a\u003cb","neg":-1e-10,"no":null,"ok":true,"xs":[1.23457]}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil {
		t.Fatal(err)
	}
	if compact.String() != want {
		t.Errorf("got\n%s\nwant\n%s", compact.String(), want)
	}
	// A report: the noise of a mean is gone from the JSON.
	r := sample()
	r.Summary[0].IdleUSDPerHourMean = 629.8996399999997
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"idle_usd_per_hour_mean": 629.9`) || strings.Contains(b.String(), "99999") {
		t.Errorf("report JSON not rounded:\n%s", b.String())
	}
}

// TestRoundJSONUnknownRule: a round tag naming no rule is an error, not a
// number left as it is.
func TestRoundJSONUnknownRule(t *testing.T) {
	type typo struct {
		USD float64 `json:"usd" round:"cents"`
	}
	if _, err := roundJSON([]byte(`{"usd":1.234}`), reflect.TypeOf(typo{})); err == nil || !strings.Contains(err.Error(), `round:"cents"`) {
		t.Errorf("err %v, want one naming round:\"cents\"", err)
	}
}
