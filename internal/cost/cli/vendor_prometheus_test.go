// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVendorPrometheus backfills kube-state-metrics' series of an AMD and
// a Gaudi pod (cost/source TestVendorRequests' hour, from 2026-11-01
// 00:00 UTC) into a real Prometheus and reads them back with its queries
// (source.promQuery: the requests of amd_com_gpu and habana_ai_gaudi, the
// running containers that have one): the same report as from the file,
// and by hand a/train 4 x 0.75 USD x 1 h = 3.00, b/hpu 2 x 11.06 x 0.5 h
// = 11.06, total 14.06.
func TestVendorPrometheus(t *testing.T) {
	const t0 = 1793491200 // 2026-11-01T00:00:00Z
	var b strings.Builder
	for _, m := range []string{"kube_node_labels", "kube_pod_container_status_running", "kube_pod_container_resource_requests"} {
		fmt.Fprintf(&b, "# TYPE %s gauge\n", m)
		for s := 0; s <= 3000; s += 600 {
			at := t0 + s
			switch m {
			case "kube_node_labels":
				fmt.Fprintf(&b, "%s{node=\"amd-0\",label_amd_com_gpu_product_name=\"AMD_Instinct_MI300X\",label_amd_com_gpu_compute_memory_partition=\"cpx_nps1\"} 1 %d\n", m, at)
				fmt.Fprintf(&b, "%s{node=\"gaudi-0\",label_gpuplane_io_gpu_model=\"Gaudi3\"} 1 %d\n", m, at)
			case "kube_pod_container_status_running":
				fmt.Fprintf(&b, "%s{namespace=\"a\",pod=\"train\",container=\"c\"} 1 %d\n", m, at)
				fmt.Fprintf(&b, "%s{namespace=\"b\",pod=\"hpu\",container=\"c\"} %d %d\n", m, map[bool]int{true: 1}[s < 1800], at)
				fmt.Fprintf(&b, "%s{namespace=\"x\",pod=\"web\",container=\"c\"} 1 %d\n", m, at)
			default:
				fmt.Fprintf(&b, "%s{namespace=\"a\",pod=\"train\",container=\"c\",node=\"amd-0\",resource=\"amd_com_gpu\",unit=\"integer\"} 4 %d\n", m, at)
				fmt.Fprintf(&b, "%s{namespace=\"b\",pod=\"hpu\",container=\"c\",node=\"gaudi-0\",resource=\"habana_ai_gaudi\",unit=\"integer\"} 2 %d\n", m, at)
				fmt.Fprintf(&b, "%s{namespace=\"x\",pod=\"web\",container=\"c\",node=\"amd-0\",resource=\"cpu\",unit=\"core\"} 2 %d\n", m, at)
			}
		}
	}
	b.WriteString("# EOF\n")
	file := filepath.Join(t.TempDir(), "vendors.om")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startPrometheus(t, backfill(t, file))
	o := Options{Prometheus: base, From: "2026-11-01T00:00:00Z", To: "2026-11-01T01:00:00Z", Step: 10 * time.Minute, By: "pod", Format: "csv"}
	p, _, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"row,a/train,4,", ",3.00,", "row,b/hpu,1,", ",11.06,", "total,,5,,,14.06,"} {
		if !strings.Contains(p, want) {
			t.Errorf("Prometheus report lacks %q:\n%s", want, p)
		}
	}
	o.Prometheus, o.OpenMetrics = "", file
	if f, _, err := run(t, o); err != nil || f != p {
		t.Errorf("file differs (%v):\n%s\nPrometheus:\n%s", err, f, p)
	}
}

// TestExporterPrometheus backfills cost/source's exporters hour
// (testdata/exporters.om: AMD's device-metrics-exporter, Intel Gaudi's
// metric exporter and kube-state-metrics, from 2026-11-01 00:00 UTC) into a
// real Prometheus and reads it back with its range queries: the same
// report as from the file, and by hand (cost/source TestExporterPods)
// a/train 2 x 0.75 x 1 h = 1.50 USD from the exporter, not its requests;
// b/infer 6.00 x 0.5 h = 3.00, used 0.5 x 0.50 = 0.25 GPU-h; c/hpu 11.06,
// used 0.25 GPU-h; d/old 3.93 from its request; idle 0.75, 3.00 and
// 11.06; total 34.30.
func TestExporterPrometheus(t *testing.T) {
	file := filepath.Join("..", "source", "testdata", "exporters.om")
	base := startPrometheus(t, backfill(t, file))
	o := Options{Prometheus: base, From: "2026-11-01T00:00:00Z", To: "2026-11-01T01:00:00Z", Step: 10 * time.Minute, By: "pod", Format: "csv"}
	p, _, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"row,a/train,2,0,0,1.50,", "row,b/infer,0.5,0.25,0.5,3.00,", "row,c/hpu,1,0.25,0.25,11.06,", "row,d/old,1,0,0,3.93,",
		"idle,amd-0,1,,,0.75,", "idle,amd-1,0.5,,,3.00,", "idle,gaudi-0,1,,,11.06,", "total,,7,,,34.30,"} {
		if !strings.Contains(p, want) {
			t.Errorf("Prometheus report lacks %q:\n%s", want, p)
		}
	}
	o.Prometheus, o.OpenMetrics = "", file
	if f, _, err := run(t, o); err != nil || f != p {
		t.Errorf("file differs (%v):\n%s\nPrometheus:\n%s", err, f, p)
	}
}
