// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
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
	l := ledgerOf(t, "dra.om", lines, 7_200_000)
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

// TestDRAAndDevicePluginConserve: one 4-hour window (grid every 30 min,
// 8 samples) of a DRA node and a device-plugin node, read from the node
// agents' series as each path labels them, priced at the default prices
// (H100-80GB 1106, A100-80GB 393, L4 56 cents an hour). By hand:
//
// dra-a (DRA):
//   - GPU-D0, H100: ml/train's claim of the whole GPU, 8 steps: 4 GPU-h,
//     4424 c.
//   - GPU-D1, A100 in MIG mode, devices allocated from its counters:
//     web/mig3 holds the 3g.40gb for 5 steps, 3/7 * 2.5 = 15/14 GPU-h,
//     421.071 c; web/mig1 the 1g.10gb for 8, 1/7 * 4 = 4/7 GPU-h,
//     224.571 c. Idle 4 - 23/14 = 33/14 GPU-h, 926.357 c.
//   - GPU-D2, H100 shared by consumed capacity: ml/share-a 250 milliGPU
//     for 8 steps, 1 GPU-h, 1106 c; ml/share-b 500 milliGPU for the last
//     4, 1 GPU-h, 1106 c. Idle 2 GPU-h, 2212 c (with D0's none: dra-a's
//     H100 idle is 2212 c).
//
// dp-b (device plugin):
//   - GPU-P0, A100: nlp/a whole for the last 6 steps, 3 GPU-h, 1179 c;
//     idle 1 GPU-h, 393 c.
//   - GPU-P1, L4 time-sliced 4 ways: nlp/ts holds 1 replica for 8 steps,
//     1 GPU-h, 56 c; nlp/ts2 2 replicas for the first 3, 0.75 GPU-h,
//     42 c; idle 2.25 GPU-h, 126 c.
//
// Asset 4 h * (2*1106 + 2*393 + 56) = 12216 c. The floors add up to
// 12215; the cent left goes to the largest remainder, web/mig1 (.571):
// 225. Rows 8559 c and idle 3657 c add up to the asset to the cent. By
// node: dra-a 7281.643 c of holdings gets the cent (.643 over idle's
// .357), 7282; dp-b 1277.
func TestDRAAndDevicePluginConserve(t *testing.T) {
	gpu := func(node, uuid, i, model string) string {
		return `Hostname="` + node + `",UUID="` + uuid + `",device="nvidia` + i + `",gpu="` + i + `",modelName="` + model + `"`
	}
	var (
		d0 = gpu("dra-a", "GPU-D0", "0", "NVIDIA H100 80GB HBM3")
		d1 = gpu("dra-a", "GPU-D1", "1", "NVIDIA A100-SXM4-80GB")
		d2 = gpu("dra-a", "GPU-D2", "2", "NVIDIA H100 80GB HBM3")
		p0 = gpu("dp-b", "GPU-P0", "0", "NVIDIA A100-SXM4-80GB")
		p1 = gpu("dp-b", "GPU-P1", "1", "NVIDIA L4")
	)
	share := func(dev, ns, pod, v string) string {
		return `gpuplane_device_allocation_share{` + dev + `,namespace="` + ns + `",pod="` + pod + `",container="main"} ` + v
	}
	var lines []string
	for step := range 8 {
		at := " " + strconv.Itoa(step*1800)
		for _, d := range []string{d0, d1, d2, p0, p1} {
			lines = append(lines, `gpuplane_device_health{`+d+`} 1`+at)
		}
		lines = append(lines,
			share(d0, "ml", "train", "1")+at,
			share(d1+`,GPU_I_PROFILE="1g.10gb",GPU_I_ID="2"`, "web", "mig1", "1")+at,
			share(d2, "ml", "share-a", "0.25")+at,
			share(p1, "nlp", "ts", "0.25")+at)
		if step < 5 {
			lines = append(lines, share(d1+`,GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"`, "web", "mig3", "1")+at)
		}
		if step >= 4 {
			lines = append(lines, share(d2, "ml", "share-b", "0.5")+at)
		}
		if step >= 2 {
			lines = append(lines, share(p0, "nlp", "a", "1")+at)
		}
		if step < 3 {
			lines = append(lines, share(p1, "nlp", "ts2", "0.5")+at)
		}
	}
	l := ledgerOf(t, "mixed.om", lines, 14_400_000)
	check := func(by alloc.By, rows map[string]int64, hours map[string]float64) {
		t.Helper()
		rep := l.Report(by)
		var sum int64
		got := map[string]int64{}
		for _, x := range rep.Rows {
			got[x.Key] = x.CostCents
			sum += x.CostCents
			if h, ok := hours[x.Key]; ok && math.Abs(x.GPUHoursAllocated-h) > 1e-9 {
				t.Errorf("by %s: %s holds %v GPU-hours, want %v", by, x.Key, x.GPUHoursAllocated, h)
			}
		}
		idle := map[string]int64{}
		for _, x := range rep.Idle {
			idle[x.Node+"/"+x.Model] = x.CostCents
			sum += x.CostCents
		}
		wantIdle := map[string]int64{"dra-a/A100-80GB": 926, "dra-a/H100-80GB": 2212, "dp-b/A100-80GB": 393, "dp-b/L4": 126}
		if fmt.Sprint(got) != fmt.Sprint(rows) || fmt.Sprint(idle) != fmt.Sprint(wantIdle) {
			t.Errorf("by %s: rows %v idle %v, want %v and %v", by, got, idle, rows, wantIdle)
		}
		if rep.AssetCents != 12216 || sum != 12216 {
			t.Errorf("by %s: asset %d c, rows and idle %d c; want 12216 both", by, rep.AssetCents, sum)
		}
	}
	check(alloc.ByPod, map[string]int64{"ml/train": 4424, "web/mig3": 421, "web/mig1": 225, "ml/share-a": 1106, "ml/share-b": 1106,
		"nlp/a": 1179, "nlp/ts": 56, "nlp/ts2": 42},
		map[string]float64{"ml/train": 4, "web/mig3": 15.0 / 14, "web/mig1": 4.0 / 7, "ml/share-a": 1, "ml/share-b": 1, "nlp/a": 3, "nlp/ts": 1, "nlp/ts2": 0.75})
	check(alloc.ByNode, map[string]int64{"dra-a": 7282, "dp-b": 1277}, nil)
}

// TestDRAAdminAccessPriced: a pod whose only claim on a GPU has admin
// access (KEP-5018, monitoring) pays nothing, and the GPU's time goes to
// its workload or to idle. Upstream's allocator lets admin access share
// any device and consume nothing (k8s.io/dynamic-resource-allocation
// v0.37.2 structured/internal/stable/allocator_stable.go, allocateDevice:
// "Mark as in use (unless we do admin access)"), so the node agent serves
// no series for it (internal/node/exporter TestAdminAccessExporter: MIG
// device MIG-aaaa keeps workload web/i's labels, share 1; GPU-0000, which
// only monitoring pod mon/n reads, has no pod series). Here those series
// over 2 hours at the default prices (H100-80GB 1106, A100-80GB 393 c/h),
// by hand: web/i 3/7 * 2 = 6/7 GPU-hours, 336.857 c, 337; mon/m and
// mon/n no row; idle: the H100 2 GPU-hours, 2212 c, the A100 8/7,
// 449.143 c, 449; rows and idle add up to the asset, 2998 c.
func TestDRAAdminAccessPriced(t *testing.T) {
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
			`gpuplane_device_allocation_share{`+migA+`,namespace="web",pod="i",container="srv"} 1`+at)
	}
	l := ledgerOf(t, "admin.om", lines, 7_200_000)
	rep := l.Report(alloc.ByPod)
	rows := map[string]int64{}
	for _, x := range rep.Rows {
		rows[x.Key] = x.CostCents
	}
	idle := map[string]int64{}
	for _, x := range rep.Idle {
		idle[x.Node+"/"+x.Model] = x.CostCents
	}
	if want := map[string]int64{"web/i": 337}; fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	if want := map[string]int64{"node-a/A100-80GB": 449, "node-a/H100-80GB": 2212}; fmt.Sprint(idle) != fmt.Sprint(want) {
		t.Errorf("idle %v, want %v", idle, want)
	}
	if rep.AssetCents != 2998 {
		t.Errorf("asset %d c, want 2998", rep.AssetCents)
	}
}

// ledgerOf prices the OpenMetrics lines (a scrape every 30 minutes, file
// name for errors) from 0 to to milliseconds at the default prices.
func ledgerOf(t *testing.T, name string, lines []string, to int64) *alloc.Ledger {
	t.Helper()
	f, err := ParseOpenMetrics(name, om(lines...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: to, Step: 1_800_000})
	if err != nil {
		t.Fatal(err)
	}
	r.Input.Prices = prices.Default()
	l, err := alloc.Compute(r.Input)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
