// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import (
	"errors"
	"reflect"
	"testing"
)

func TestPodRequests(t *testing.T) {
	c := func(req map[string]int64) Container { return Container{Requests: req} }
	ic := func(req map[string]int64) Container { return Container{Init: true, Requests: req} }
	sc := func(req map[string]int64) Container { return Container{Init: true, Sidecar: true, Requests: req} }
	for _, tc := range []struct {
		name string
		pod  Pod
		want map[string]int64
	}{
		{"containers add up", Pod{Containers: []Container{c(map[string]int64{GPU: 2, "cpu": 500}), c(map[string]int64{GPU: 1})}},
			map[string]int64{GPU: 3, "cpu": 500}},
		// An init container runs before the containers: the larger counts.
		{"init below the containers", Pod{Containers: []Container{ic(map[string]int64{GPU: 2}), c(map[string]int64{GPU: 3})}},
			map[string]int64{GPU: 3}},
		{"init above the containers", Pod{Containers: []Container{ic(map[string]int64{GPU: 4}), c(map[string]int64{GPU: 1})}},
			map[string]int64{GPU: 4}},
		// Resource by resource: the init container's cpu, the containers' GPUs.
		{"per resource", Pod{Containers: []Container{ic(map[string]int64{"cpu": 4000}), c(map[string]int64{"cpu": 1000, GPU: 1})}},
			map[string]int64{"cpu": 4000, GPU: 1}},
		// A sidecar runs alongside the containers: 1 + 8 = 9; an init
		// container after it runs with it: 2 + 1 = 3 < 9.
		{"sidecar adds", Pod{Containers: []Container{sc(map[string]int64{GPU: 1}), ic(map[string]int64{GPU: 2}), c(map[string]int64{GPU: 8})}},
			map[string]int64{GPU: 9}},
		// 8 + the sidecar's 1 = 9 before the containers' 1 + 1 = 2.
		{"init after sidecar", Pod{Containers: []Container{sc(map[string]int64{GPU: 1}), ic(map[string]int64{GPU: 8}), c(map[string]int64{GPU: 1})}},
			map[string]int64{GPU: 9}},
		// An init container before the sidecar does not run with it.
		{"init before sidecar", Pod{Containers: []Container{ic(map[string]int64{GPU: 8}), sc(map[string]int64{GPU: 1}), c(map[string]int64{GPU: 1})}},
			map[string]int64{GPU: 8}},
		{"overhead", Pod{Containers: []Container{c(map[string]int64{"cpu": 1000})}, Overhead: map[string]int64{"cpu": 250}},
			map[string]int64{"cpu": 1250}},
		// Listed with 0 is asked for with 0.
		{"zero listed", Pod{Containers: []Container{ic(map[string]int64{GPUMilli: 0}), c(nil)}},
			map[string]int64{GPUMilli: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodRequests(tc.pod); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PodRequests = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodGPURequest(t *testing.T) {
	pod := func(cs ...Container) Pod { return Pod{Containers: cs} }
	c := func(req map[string]int64) Container { return Container{Requests: req} }
	for _, tc := range []struct {
		name   string
		pod    Pod
		want   GPURequest
		reason Reason
		err    string
	}{
		{name: "no GPU", pod: pod(c(map[string]int64{"cpu": 1000}))},
		{name: "0 GPUs is none", pod: pod(c(map[string]int64{GPU: 0}))},
		{name: "500 milli-GPU", pod: pod(c(map[string]int64{GPUMilli: 500})), want: GPURequest{GPUs: 1, Milli: 500}},
		{name: "1 milli-GPU", pod: pod(c(map[string]int64{GPUMilli: 1})), want: GPURequest{GPUs: 1, Milli: 1}},
		{name: "1000 milli-GPU is one GPU", pod: pod(c(map[string]int64{GPUMilli: 1000})), want: GPURequest{GPUs: 1, Milli: 1000}},
		{name: "two containers' shares add up", pod: pod(c(map[string]int64{GPUMilli: 300}), c(map[string]int64{GPUMilli: 400})), want: GPURequest{GPUs: 1, Milli: 700}},
		{name: "2 whole GPUs", pod: pod(c(map[string]int64{GPU: 2})), want: GPURequest{GPUs: 2, Milli: 1000}},
		{name: "64 whole GPUs", pod: pod(c(map[string]int64{GPU: 64})), want: GPURequest{GPUs: 64, Milli: 1000}},
		{name: "0 milli-GPU refused", pod: pod(c(map[string]int64{GPUMilli: 0})), reason: ReasonMilliRange,
			err: "gpuplane.io/gpu-milli 0 out of range 1..1000"},
		{name: "1001 milli-GPU refused", pod: pod(c(map[string]int64{GPUMilli: 1001})), reason: ReasonMilliRange,
			err: "gpuplane.io/gpu-milli 1001 out of range 1..1000"},
		{name: "shares above one GPU refused", pod: pod(c(map[string]int64{GPUMilli: 600}), c(map[string]int64{GPUMilli: 600})), reason: ReasonMilliRange,
			err: "gpuplane.io/gpu-milli 1200 out of range 1..1000"},
		{name: "2 whole plus 500 milli refused", pod: pod(c(map[string]int64{GPU: 2, GPUMilli: 500})), reason: ReasonBoth,
			err: "both nvidia.com/gpu and gpuplane.io/gpu-milli: ask for whole GPUs or a share, not both"},
		{name: "whole and share in two containers refused", pod: pod(c(map[string]int64{GPU: 1}), c(map[string]int64{GPUMilli: 500})), reason: ReasonBoth,
			err: "both nvidia.com/gpu and gpuplane.io/gpu-milli: ask for whole GPUs or a share, not both"},
		{name: "65 whole GPUs refused", pod: pod(c(map[string]int64{GPU: 65})), reason: ReasonTooManyGPUs,
			err: "nvidia.com/gpu 65 above 64"},
		// The init container's 2 GPUs are the pod's request (max(2, 1)).
		{name: "init container counts as max", pod: pod(Container{Init: true, Requests: map[string]int64{GPU: 2}}, c(map[string]int64{GPU: 1})),
			want: GPURequest{GPUs: 2, Milli: 1000}},
		// A sidecar's share runs with the containers': 300 + 800 = 1100.
		{name: "sidecar share adds", pod: pod(Container{Init: true, Sidecar: true, Requests: map[string]int64{GPUMilli: 300}}, c(map[string]int64{GPUMilli: 800})),
			reason: ReasonMilliRange, err: "gpuplane.io/gpu-milli 1100 out of range 1..1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodGPURequest(tc.pod)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("PodGPURequest = %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) || re.Reason != tc.reason || err.Error() != tc.err {
				t.Fatalf("PodGPURequest error %v, want reason %d %q", err, tc.reason, tc.err)
			}
			if got != (GPURequest{}) {
				t.Errorf("refused request %+v, want the zero GPURequest", got)
			}
		})
	}
}
