// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// vendorFile is kube-state-metrics' series of a cluster with no node
// agent, sampled every 10 minutes over an hour (0 to 3000 s), in the form
// kube-state-metrics writes them (kubernetes/kube-state-metrics
// internal/store/pod.go: resource "amd.com/gpu" as "amd_com_gpu", unit
// "integer"; node.go: label_<key> for allow-listed node labels).
func vendorFile() string {
	var b strings.Builder
	b.WriteString("# TYPE kube_node_labels gauge\n")
	b.WriteString("# TYPE kube_pod_container_status_running gauge\n")
	b.WriteString("# TYPE kube_pod_container_resource_requests gauge\n")
	for s := 0; s <= 3000; s += 600 {
		fmt.Fprintf(&b, "kube_node_labels{node=\"amd-0\",label_amd_com_gpu_product_name=\"AMD_Instinct_MI300X\",label_amd_com_gpu_compute_memory_partition=\"cpx_nps1\"} 1 %d\n", s)
		fmt.Fprintf(&b, "kube_node_labels{node=\"gaudi-0\",label_gpuplane_io_gpu_model=\"Gaudi3\"} 1 %d\n", s)
		// train runs all hour; hpu runs 30 minutes, then has finished
		// (running 0) while its requests stay published.
		fmt.Fprintf(&b, "kube_pod_container_status_running{namespace=\"a\",pod=\"train\",container=\"c\"} 1 %d\n", s)
		fmt.Fprintf(&b, "kube_pod_container_status_running{namespace=\"b\",pod=\"hpu\",container=\"c\"} %d %d\n", map[bool]int{true: 1}[s < 1800], s)
		fmt.Fprintf(&b, "kube_pod_container_status_running{namespace=\"d\",pod=\"lost\",container=\"c\"} 1 %d\n", s)
		fmt.Fprintf(&b, "kube_pod_container_resource_requests{namespace=\"a\",pod=\"train\",container=\"c\",node=\"amd-0\",resource=\"amd_com_gpu\",unit=\"integer\"} 4 %d\n", s)
		fmt.Fprintf(&b, "kube_pod_container_resource_requests{namespace=\"a\",pod=\"train\",container=\"c\",node=\"amd-0\",resource=\"cpu\",unit=\"core\"} 8 %d\n", s)
		fmt.Fprintf(&b, "kube_pod_container_resource_requests{namespace=\"b\",pod=\"hpu\",container=\"c\",node=\"gaudi-0\",resource=\"habana_ai_gaudi\",unit=\"integer\"} 2 %d\n", s)
		fmt.Fprintf(&b, "kube_pod_container_resource_requests{namespace=\"c\",pod=\"pending\",container=\"c\",node=\"\",resource=\"amd_com_gpu\",unit=\"integer\"} 1 %d\n", s)
		fmt.Fprintf(&b, "kube_pod_container_resource_requests{namespace=\"d\",pod=\"lost\",container=\"c\",node=\"other\",resource=\"amd_com_gpu\",unit=\"integer\"} 1 %d\n", s)
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// TestVendorRequests: AMD and Gaudi pods priced from their requests at
// internal/cost/prices' catalog prices (estimates). By hand: train holds
// 4 amd.com/gpu of an MI300X node in CPX/NPS1, a partition being 1/8 of
// the device (AMD Instinct MI300X partitioning: CPX is 8 GPUs), 6.00 / 8
// = 0.75 USD/h, for 1 h: 4 x 0.75 = 3.00 USD; hpu holds 2 Gaudi3 at 11.06
// USD/h while it runs, 0 to 1800 s: 2 x 11.06 x 0.5 = 11.06 USD. The
// pending pod (no node) and the cpu request count nothing; the pod on a
// node of no known model is warned. Total 14.06 USD, nothing idle.
func TestVendorRequests(t *testing.T) {
	f, err := ParseOpenMetrics("v.om", []byte(vendorFile()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 3_600_000, Step: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Input.GPUs) != 6 || len(r.Input.Holdings) != 6 {
		t.Fatalf("GPUs %+v\nholdings %+v, want 4 + 2 of each", r.Input.GPUs, r.Input.Holdings)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "d/lost requests amd.com/gpu on node other") }) {
		t.Errorf("warnings %q, want d/lost's", r.Warnings)
	}
	r.Input.Prices = prices.Default()
	l, err := alloc.Compute(r.Input)
	if err != nil {
		t.Fatal(err)
	}
	rep := l.Report(alloc.ByPod)
	got := map[string]int64{}
	for _, row := range rep.Rows {
		got[row.Key] = row.CostCents
	}
	idle := 0.0
	for _, row := range rep.Idle {
		idle += row.GPUHours + float64(row.CostCents)
	}
	if rep.AssetCents != 1406 || len(got) != 2 || got["a/train"] != 300 || got["b/hpu"] != 1106 || idle != 0 {
		t.Errorf("asset %d cents, rows %v, idle %+v; want 1406, a/train 300, b/hpu 1106, no idle", rep.AssetCents, got, rep.Idle)
	}
}
