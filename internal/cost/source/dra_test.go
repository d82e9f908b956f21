// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// TestDRAPodsPriced: DRA pods priced from the series the node agent serves
// for them (internal/node/exporter TestDRAAttribution's labels and
// values), with no other change to cost. Over 2 hours at the default
// prices (H100-80GB 11.06, A100-80GB 3.93 USD/h), by hand:
//   - ml/g holds 250 milliGPU of the H100 (share 0.25): 0.25 * 2 h = 0.5
//     GPU-hours, 0.5 * 1106 = 553 cents;
//   - web/i holds the 3g.40gb MIG device of the A100 whole (share 1 of the
//     MIG device, priced by its slices): 3/7 * 2 = 6/7 GPU-hours,
//     6/7 * 393 = 336.86, 337 cents;
//   - web/j holds a 1g.10gb MIG device not yet discovered, served on the
//     A100 as 1/7 (0.14285714285714285): 2/7 GPU-hours, 2/7 * 393 =
//     112.29, 112 cents.
func TestDRAPodsPriced(t *testing.T) {
	const (
		h100 = `Hostname="node-a",UUID="GPU-0000",device="nvidia0",gpu="0",modelName="NVIDIA H100 80GB HBM3",pci_bus_id="00000000:07:00.0"`
		a100 = `Hostname="node-a",UUID="GPU-1111",device="nvidia1",gpu="1",modelName="NVIDIA A100-SXM4-80GB",pci_bus_id="00000000:0F:00.0"`
		migA = a100 + `,GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"`
	)
	var lines []string
	for _, ts := range []int{0, 1800, 3600, 5400} {
		at := " " + strconv.Itoa(ts)
		lines = append(lines,
			`gpuplane_device_health{`+h100+`} 1`+at,
			`gpuplane_device_health{`+a100+`} 1`+at,
			`gpuplane_device_allocation_share{`+h100+`,namespace="ml",pod="g",container="main"} 0.25`+at,
			`gpuplane_device_allocation_share{`+migA+`,namespace="web",pod="i",container="srv"} 1`+at,
			`gpuplane_device_allocation_share{`+a100+`,namespace="web",pod="j",container="srv"} 0.14285714285714285`+at)
	}
	f, err := ParseOpenMetrics("dra.om", om(lines...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 7_200_000, Step: 1_800_000})
	if err != nil {
		t.Fatal(err)
	}
	r.Input.Prices = prices.Default()
	l, err := alloc.Compute(r.Input)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]alloc.Row{}
	for _, x := range l.Report(alloc.ByPod).Rows {
		rows[x.Key] = x
	}
	for key, want := range map[string]struct {
		hours float64
		cents int64
	}{"ml/g": {0.5, 553}, "web/i": {6.0 / 7, 337}, "web/j": {2.0 / 7, 112}} {
		got, ok := rows[key]
		if !ok || math.Abs(got.GPUHoursAllocated-want.hours) > 1e-9 || got.CostCents != want.cents {
			t.Errorf("%s: %+v, want %v GPU-hours, %d cents", key, got, want.hours, want.cents)
		}
	}
}
