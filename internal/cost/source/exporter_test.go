// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/prices"
)

// exporterFile is an hour (samples at 0 to 3000 s, every 10 minutes,
// from t0 s) of AMD's device-metrics-exporter, Intel Gaudi's metric
// exporter and kube-state-metrics, in the labels each writes:
// ROCm/device-metrics-exporter afd0fe81 (gpuagent_gpu_metrics.go,
// gpuMandatoryLables: gpu_id, card_model, hostname, gpu_partition_id,
// gpu_compute_partition_type, gpu_memory_partition_type, serial_number,
// pod, namespace, container); HabanaAI/gaudi-metric-exporter 2d50e442
// (exporter.go, getMetricLabels: Serial, UUID, device, ..., pod_namespace,
// pod_name, empty for a device no pod holds), with the node label a
// relabeling adds and the pod and namespace of the exporter's own pod that
// a ServiceMonitor's target adds.
//
//   - amd-0, an MI300X in CPX/NPS1 (8 GPUs of a device): partitions 0
//     and 1 held by a/train, which also requests 2 amd.com/gpu; partition
//     2 held by none; gpu_gfx_activity 80 on partition 0 (not read:
//     partitioned).
//   - amd-1, no kube-state-metrics labels, card_model MI300X, SPX/NPS1:
//     GPU 0 held by b/infer for the first 30 minutes, then by none;
//     gpu_gfx_activity 50 all hour.
//   - gaudi-0 (Gaudi3): G1 held by c/hpu, utilisation 25; G2 held by
//     none, utilisation 0. G3 names pod e/ghost but no node, and e/ghost
//     has no request: not read, warned.
//   - gaudi-1 (Gaudi2), no exporter: d/old requests 1 habana.ai/gaudi.
func exporterFile(t0 int) string {
	var b strings.Builder
	for _, m := range []string{"kube_node_labels", "kube_pod_container_status_running", "kube_pod_container_resource_requests", AMDTotalVRAM, AMDGFXActivity, GaudiUtilization} {
		fmt.Fprintf(&b, "# TYPE %s gauge\n", m)
		for s := 0; s <= 3000; s += 600 {
			writeExporterSamples(&b, m, s, t0+s)
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// writeExporterSamples writes metric m's samples at second s of the hour
// (exporterFile), with timestamp at.
func writeExporterSamples(b *strings.Builder, m string, s, at int) {
	amd := func(node, id, part, mode, pod string) string {
		return fmt.Sprintf(`{card_model="MI300X",gpu_id=%q,gpu_partition_id=%q,gpu_compute_partition_type=%q,gpu_memory_partition_type="nps1",hostname=%q,serial_number="SN-%s",%s}`, id, part, mode, node, node, pod)
	}
	held := func(ns, pod string) string { return fmt.Sprintf(`pod=%q,namespace=%q,container="c"`, pod, ns) }
	none := `pod="",namespace="",container=""`
	gaudi := `UUID="u-%s",Serial=%q,device="accel0",pod_name=%q,pod_namespace=%q,node=%q,pod="habana-metric-exporter-ds-x",namespace="monitoring"`
	infer := none
	if s < 1800 {
		infer = held("b", "infer")
	}
	switch m {
	case "kube_node_labels":
		fmt.Fprintf(b, "%s{node=\"amd-0\",label_amd_com_gpu_product_name=\"AMD_Instinct_MI300X\",label_amd_com_gpu_compute_memory_partition=\"cpx_nps1\"} 1 %d\n", m, at)
		fmt.Fprintf(b, "%s{node=\"gaudi-0\",label_gpuplane_io_gpu_model=\"Gaudi3\"} 1 %d\n", m, at)
		fmt.Fprintf(b, "%s{node=\"gaudi-1\",label_gpuplane_io_gpu_model=\"Gaudi2\"} 1 %d\n", m, at)
	case "kube_pod_container_status_running":
		fmt.Fprintf(b, "%s{namespace=\"a\",pod=\"train\",container=\"c\"} 1 %d\n", m, at)
		fmt.Fprintf(b, "%s{namespace=\"d\",pod=\"old\",container=\"c\"} 1 %d\n", m, at)
	case "kube_pod_container_resource_requests":
		fmt.Fprintf(b, "%s{namespace=\"a\",pod=\"train\",container=\"c\",node=\"amd-0\",resource=\"amd_com_gpu\",unit=\"integer\"} 2 %d\n", m, at)
		fmt.Fprintf(b, "%s{namespace=\"d\",pod=\"old\",container=\"c\",node=\"gaudi-1\",resource=\"habana_ai_gaudi\",unit=\"integer\"} 1 %d\n", m, at)
	case AMDTotalVRAM:
		fmt.Fprintf(b, "%s%s 24576 %d\n", m, amd("amd-0", "0", "0", "cpx", held("a", "train")), at)
		fmt.Fprintf(b, "%s%s 24576 %d\n", m, amd("amd-0", "1", "1", "cpx", held("a", "train")), at)
		fmt.Fprintf(b, "%s%s 24576 %d\n", m, amd("amd-0", "2", "2", "cpx", none), at)
		fmt.Fprintf(b, "%s%s 196608 %d\n", m, amd("amd-1", "0", "0", "spx", infer), at)
	case AMDGFXActivity:
		fmt.Fprintf(b, "%s%s 80 %d\n", m, amd("amd-0", "0", "0", "cpx", held("a", "train")), at)
		fmt.Fprintf(b, "%s%s 50 %d\n", m, amd("amd-1", "0", "0", "spx", infer), at)
	case GaudiUtilization:
		fmt.Fprintf(b, "%s{"+gaudi+"} 25 %d\n", m, "1", "G1", "hpu", "c", "gaudi-0", at)
		fmt.Fprintf(b, "%s{"+gaudi+"} 0 %d\n", m, "2", "G2", "", "", "gaudi-0", at)
		fmt.Fprintf(b, "%s{"+gaudi+"} 0 %d\n", m, "3", "G3", "ghost", "e", "", at)
	}
}

// TestExporterPods: pods the vendors' exporters name are priced from the
// exporters, the others from their requests, at internal/cost/prices'
// catalog prices (MI300X 6.00, Gaudi3 11.06, Gaudi2 3.93 USD/h,
// estimates). By hand, over the hour:
//
//	a/train  2 MI300X CPX partitions x 6.00/8 x 1 h = 1.50 (its request
//	         of 2 amd.com/gpu adds nothing: the exporter names it)
//	b/infer  1 MI300X x 6.00 x 0.5 h = 3.00; used 0.5 h x 0.50 = 0.25 GPU-h
//	c/hpu    1 Gaudi3 x 11.06 x 1 h = 11.06; used 1 h x 0.25 = 0.25 GPU-h
//	d/old    1 Gaudi2 x 3.93 x 1 h = 3.93, from its request
//	idle     amd-0 1 partition x 0.75 = 0.75; amd-1 0.5 h x 6.00 = 3.00;
//	         gaudi-0 G2 x 11.06 = 11.06
//
// Total 34.30 USD: rows 19.49 and idle 14.81; a/train's partitions have no
// utilisation (gpu_gfx_activity is the device's, on partition 0 only).
func TestExporterPods(t *testing.T) {
	f, err := ParseOpenMetrics("x.om", []byte(exporterFile(0)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 3_600_000, Step: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "Gaudi device G3: no node label") }) {
		t.Errorf("warnings %q, want G3's", r.Warnings)
	}
	if len(r.Input.GPUs) != 7 {
		t.Errorf("GPUs %+v, want 3 + 1 AMD, 2 Gaudi from the exporters and 1 from d/old's request", r.Input.GPUs)
	}
	for _, g := range r.Input.GPUs {
		want := map[string]string{"amd-0": "CPX/NPS1", "amd-1": "SPX/NPS1"}[g.Node]
		if strings.HasPrefix(g.UUID, "amd:") && g.Partition.String() != want {
			t.Errorf("GPU %s: partition %q, want %q", g.UUID, g.Partition, want)
		}
	}
	r.Input.Prices = prices.Default()
	l, err := alloc.Compute(r.Input)
	if err != nil {
		t.Fatal(err)
	}
	rep := l.Report(alloc.ByPod)
	got := map[string]string{}
	for _, row := range rep.Rows {
		got[row.Key] = fmt.Sprintf("%d %.4f", row.CostCents, row.GPUHoursUsed)
	}
	for _, row := range rep.Idle {
		got["idle "+row.Node] = fmt.Sprintf("%d", row.CostCents)
	}
	want := map[string]string{
		"a/train": "150 0.0000", "b/infer": "300 0.2500", "c/hpu": "1106 0.2500", "d/old": "393 0.0000",
		"idle amd-0": "75", "idle amd-1": "300", "idle gaudi-0": "1106", "idle gaudi-1": "0",
	}
	if rep.AssetCents != 3430 || !equalMaps(got, want) {
		t.Errorf("asset %d cents, rows %v; want 3430, %v", rep.AssetCents, got, want)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestExporterNotHonoured: scraped without honor_labels, the AMD
// exporter's pod labels come as exported_pod and exported_namespace, and
// the target's pod label (the exporter's own pod) is not the holder: the
// GPU is held by a/train, 6.00 USD for the hour, and a warning says so.
func TestExporterNotHonoured(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s gauge\n", AMDTotalVRAM)
	for s := 0; s <= 3000; s += 600 {
		fmt.Fprintf(&b, `%s{card_model="MI300X",gpu_id="0",gpu_compute_partition_type="spx",gpu_memory_partition_type="nps1",hostname="amd-0",exported_pod="train",exported_namespace="a",pod="amd-metrics-exporter-x",namespace="kube-amd-gpu"} 196608 %d`+"\n", AMDTotalVRAM, s)
	}
	b.WriteString("# EOF\n")
	f, err := ParseOpenMetrics("x.om", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 3_600_000, Step: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	r.Input.Prices = prices.Default()
	l, err := alloc.Compute(r.Input)
	if err != nil {
		t.Fatal(err)
	}
	rep := l.Report(alloc.ByPod)
	if len(rep.Rows) != 1 || rep.Rows[0].Key != "a/train" || rep.Rows[0].CostCents != 600 || math.Abs(rep.Rows[0].GPUHoursAllocated-1) > 1e-9 {
		t.Errorf("rows %+v, want a/train 600 cents, 1 GPU-hour", rep.Rows)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "without honor_labels") }) {
		t.Errorf("warnings %q, want honor_labels'", r.Warnings)
	}
}

// TestExporterFile: testdata/exporters.om, the hour read by
// internal/cost/cli's TestExporterPrometheus, is exporterFile from
// 2026-11-01T00:00:00Z (Unix 1793491200).
func TestExporterFile(t *testing.T) {
	data, err := os.ReadFile("testdata/exporters.om")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != exporterFile(1793491200) {
		t.Error("testdata/exporters.om is not exporterFile(1793491200): rewrite it with os.WriteFile(\"testdata/exporters.om\", []byte(exporterFile(1793491200)), 0o644)")
	}
}
