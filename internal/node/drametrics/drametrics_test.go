// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package drametrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func registry(t *testing.T, m *Metrics) *prometheus.Registry {
	t.Helper()
	r := prometheus.NewRegistry()
	r.MustRegister(m.Collectors()...)
	return r
}

// TestZeroAtStart: the request series exist at 0 before any request
// (NVIDIA's InitializeDRARequestMetrics, and its test's expected lines),
// and every device type's count is 0.
func TestZeroAtStart(t *testing.T) {
	r := registry(t, New("gpu.nvidia.com", "node-a"))
	want := `
# HELP nvidia_dra_prepared_devices Current number of prepared devices by device type.
# TYPE nvidia_dra_prepared_devices gauge
nvidia_dra_prepared_devices{device_type="gpu",driver="gpu.nvidia.com",node="node-a"} 0
nvidia_dra_prepared_devices{device_type="mig",driver="gpu.nvidia.com",node="node-a"} 0
nvidia_dra_prepared_devices{device_type="unknown",driver="gpu.nvidia.com",node="node-a"} 0
nvidia_dra_prepared_devices{device_type="vfio",driver="gpu.nvidia.com",node="node-a"} 0
# HELP nvidia_dra_requests_inflight Number of in-flight DRA prepare and unprepare requests.
# TYPE nvidia_dra_requests_inflight gauge
nvidia_dra_requests_inflight{driver="gpu.nvidia.com",operation="prepare"} 0
nvidia_dra_requests_inflight{driver="gpu.nvidia.com",operation="unprepare"} 0
# HELP nvidia_dra_requests_total Total number of DRA prepare and unprepare requests.
# TYPE nvidia_dra_requests_total counter
nvidia_dra_requests_total{driver="gpu.nvidia.com",operation="prepare"} 0
nvidia_dra_requests_total{driver="gpu.nvidia.com",operation="unprepare"} 0
`
	if err := testutil.GatherAndCompare(r, strings.NewReader(want), "nvidia_dra_requests_total", "nvidia_dra_requests_inflight", "nvidia_dra_prepared_devices"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(r, "nvidia_dra_node_prepare_errors_total", "nvidia_dra_node_unprepare_errors_total"); err != nil || n != 0 {
		t.Errorf("%d error series at start, %v; want none (NVIDIA's appear on the first error)", n, err)
	}
}

// TestCounting: two prepares succeed and one fails, one unprepare
// succeeds and one fails: requests 2 and 1, the histogram counts the
// same, errors 1 of each by type; in flight is 1 while a request runs
// and 0 after.
func TestCounting(t *testing.T) {
	m := New("gpu.nvidia.com", "node-a")
	r := registry(t, m)
	done := m.Start(Prepare)
	if v := testutil.ToFloat64(m.inflight.WithLabelValues("gpu.nvidia.com", Prepare)); v != 1 {
		t.Errorf("in flight during a prepare: %v, want 1", v)
	}
	done(nil, "")
	m.Start(Prepare)(nil, "")
	m.Start(Prepare)(errors.New("no such GPU"), ErrPrepareDevices)
	m.Start(Unprepare)(nil, "")
	m.Start(Unprepare)(errors.New("MIG device busy"), ErrUnprepareDevices)
	want := `
# HELP nvidia_dra_node_prepare_errors_total Total number of failures during DRA node prepare for kubelet plugins.
# TYPE nvidia_dra_node_prepare_errors_total counter
nvidia_dra_node_prepare_errors_total{driver="gpu.nvidia.com",error_type="prepare_devices"} 1
# HELP nvidia_dra_node_unprepare_errors_total Total number of failures during DRA node unprepare for kubelet plugins.
# TYPE nvidia_dra_node_unprepare_errors_total counter
nvidia_dra_node_unprepare_errors_total{driver="gpu.nvidia.com",error_type="unprepare_devices"} 1
# HELP nvidia_dra_requests_inflight Number of in-flight DRA prepare and unprepare requests.
# TYPE nvidia_dra_requests_inflight gauge
nvidia_dra_requests_inflight{driver="gpu.nvidia.com",operation="prepare"} 0
nvidia_dra_requests_inflight{driver="gpu.nvidia.com",operation="unprepare"} 0
# HELP nvidia_dra_requests_total Total number of DRA prepare and unprepare requests.
# TYPE nvidia_dra_requests_total counter
nvidia_dra_requests_total{driver="gpu.nvidia.com",operation="prepare"} 2
nvidia_dra_requests_total{driver="gpu.nvidia.com",operation="unprepare"} 1
`
	if err := testutil.GatherAndCompare(r, strings.NewReader(want), "nvidia_dra_requests_total", "nvidia_dra_requests_inflight",
		"nvidia_dra_node_prepare_errors_total", "nvidia_dra_node_unprepare_errors_total"); err != nil {
		t.Error(err)
	}
	if c := testutil.CollectAndCount(m.duration); c != 2 {
		t.Errorf("%d histogram series, want 2 (prepare, unprepare)", c)
	}
	// The histogram's sample counts: text of its _count lines.
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "nvidia_dra_request_duration_seconds" {
			continue
		}
		for _, mt := range mf.Metric {
			for _, l := range mt.Label {
				if l.GetName() == "operation" {
					counts[l.GetValue()] = mt.Histogram.GetSampleCount()
				}
			}
			// NVIDIA's buckets: 0.05 s doubling, 9 of them.
			if b := mt.Histogram.Bucket; len(b) != 9 || b[0].GetUpperBound() != 0.05 || b[8].GetUpperBound() != 12.8 {
				t.Errorf("buckets %v, want 0.05 .. 12.8 (9)", b)
			}
		}
	}
	if counts[Prepare] != 2 || counts[Unprepare] != 1 {
		t.Errorf("duration samples %v, want prepare 2, unprepare 1", counts)
	}
}

// TestPrepared: SetPrepared takes a full count; a type left out is 0.
func TestPrepared(t *testing.T) {
	m := New("gpu.nvidia.com", "node-a")
	m.SetPrepared(map[string]int{TypeGPU: 3, TypeMIG: 2})
	m.SetPrepared(map[string]int{TypeMIG: 1})
	for typ, want := range map[string]float64{TypeGPU: 0, TypeMIG: 1, TypeVFIO: 0, TypeUnknown: 0} {
		if v := testutil.ToFloat64(m.prepared.WithLabelValues("node-a", "gpu.nvidia.com", typ)); v != want {
			t.Errorf("%s: %v, want %v", typ, v, want)
		}
	}
}

// TestNil: a nil *Metrics records nothing and does not panic.
func TestNil(t *testing.T) {
	var m *Metrics
	m.Start(Prepare)(errors.New("x"), ErrPrepareDevices)
	m.SetPrepared(map[string]int{TypeGPU: 1})
	if m.Collectors() != nil {
		t.Error("nil metrics have collectors")
	}
}
