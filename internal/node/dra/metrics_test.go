// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/drametrics"
)

// TestMetricsAsNVIDIA: over the kubelet's gRPC service, a whole GPU and a
// MIG device prepared (2 requests), a prepare of a device that does not
// exist (1 prepare error, no request), the same whole GPU again (an
// idempotent prepare succeeds: 3 requests), then the MIG claim unprepared
// (1 unprepare request). Prepared devices: 1 gpu and 1 mig, then 1 gpu.
func TestMetricsAsNVIDIA(t *testing.T) {
	b, _ := mockNode(t, twoA100)
	k := newKubelet(t)
	m := drametrics.New(apidra.DriverName, node)
	k.dirs.Metrics = m
	k.start(b)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collectors()...)

	whole, mig, bad := k.claim("whole", "gpu-1"), k.claim("mig", "gpu-0-mig-3g40gb-9-4"), k.claim("bad", "gpu-7")
	if _, e := k.prepare(whole); e != "" {
		t.Fatal(e)
	}
	if _, e := k.prepare(mig); e != "" {
		t.Fatal(e)
	}
	if _, e := k.prepare(bad); e == "" {
		t.Fatal("prepare of gpu-7 (no such device) succeeded")
	}
	check := func(want string, names ...string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
			t.Error(err)
		}
	}
	check(`
# HELP nvidia_dra_prepared_devices Current number of prepared devices by device type.
# TYPE nvidia_dra_prepared_devices gauge
nvidia_dra_prepared_devices{device_type="gpu",driver="gpu.nvidia.com",node="node-a"} 1
nvidia_dra_prepared_devices{device_type="mig",driver="gpu.nvidia.com",node="node-a"} 1
nvidia_dra_prepared_devices{device_type="unknown",driver="gpu.nvidia.com",node="node-a"} 0
nvidia_dra_prepared_devices{device_type="vfio",driver="gpu.nvidia.com",node="node-a"} 0
# HELP nvidia_dra_node_prepare_errors_total Total number of failures during DRA node prepare for kubelet plugins.
# TYPE nvidia_dra_node_prepare_errors_total counter
nvidia_dra_node_prepare_errors_total{driver="gpu.nvidia.com",error_type="prepare_devices"} 1
`, "nvidia_dra_prepared_devices", "nvidia_dra_node_prepare_errors_total")

	if _, e := k.prepare(whole); e != "" {
		t.Fatal(e)
	}
	k.unprepare(mig)
	check(`
# HELP nvidia_dra_requests_total Total number of DRA prepare and unprepare requests.
# TYPE nvidia_dra_requests_total counter
nvidia_dra_requests_total{driver="gpu.nvidia.com",operation="prepare"} 3
nvidia_dra_requests_total{driver="gpu.nvidia.com",operation="unprepare"} 1
# HELP nvidia_dra_requests_inflight Number of in-flight DRA prepare and unprepare requests.
# TYPE nvidia_dra_requests_inflight gauge
nvidia_dra_requests_inflight{driver="gpu.nvidia.com",operation="prepare"} 0
nvidia_dra_requests_inflight{driver="gpu.nvidia.com",operation="unprepare"} 0
# HELP nvidia_dra_prepared_devices Current number of prepared devices by device type.
# TYPE nvidia_dra_prepared_devices gauge
nvidia_dra_prepared_devices{device_type="gpu",driver="gpu.nvidia.com",node="node-a"} 1
nvidia_dra_prepared_devices{device_type="mig",driver="gpu.nvidia.com",node="node-a"} 0
nvidia_dra_prepared_devices{device_type="unknown",driver="gpu.nvidia.com",node="node-a"} 0
nvidia_dra_prepared_devices{device_type="vfio",driver="gpu.nvidia.com",node="node-a"} 0
`, "nvidia_dra_requests_total", "nvidia_dra_requests_inflight", "nvidia_dra_prepared_devices")
}
