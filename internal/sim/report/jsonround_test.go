// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRoundJSON: money to the cent, seconds to the millisecond, prices and
// ratios to 6 significant digits, integers and key order as they are.
func TestRoundJSON(t *testing.T) {
	in := `{"gpus":1561,"idle_usd_per_hour":629.8996399999997,"gpu_allocation_ratio":0.9559123456,"wall_seconds":0.83912345,` +
		`"curve":[{"t":12.00049,"waiting_pods":3}],"delay_percentiles_seconds":[0.1234567,3600],` +
		`"prices_usd_per_gpu_hour":{"T4":0.000001234567,"A100":2.123456789},"name":"a<b","neg":-0.0000000001,"no":null,"ok":true,"xs":[1.23456789]}`
	got, err := roundJSON([]byte(in))
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
