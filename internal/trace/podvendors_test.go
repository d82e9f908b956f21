// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// TestReadPodVendors: the pod CSV's vendors column gives the vendors a
// pod accepts (nvidia: bit 0; nvidia|amd: bits 0 and 1), empty any, and
// it reaches the placement core's pod; a value that excludes the pod's
// resource, or names no vendor, is an error at its file, line and column.
func TestReadPodVendors(t *testing.T) {
	pods, err := ReadPods("p.csv", strings.NewReader("name,cpu_milli,memory_mib,num_gpu,gpu_milli,resource,vendors\n"+
		"cuda,1000,1024,1,500,,nvidia\n"+
		"either,1000,1024,2,1000,,nvidia|amd\n"+
		"any,1000,1024,1,1000,,\n"+
		"rocm,1000,1024,1,1000,amd.com/gpu,amd|intel\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []cluster.VendorSet{0b001, 0b011, 0, 0b110}
	for i, w := range want {
		p, err := pods[i].Pod("p.csv")
		if pods[i].Vendors != w || err != nil || p.Vendors != w {
			t.Errorf("pod %s: vendors %03b, pod %03b (%v); want %03b", pods[i].Name, pods[i].Vendors, p.Vendors, err, w)
		}
	}
	for _, tc := range []struct{ row, want string }{
		{"x,1000,1024,1,1000,amd.com/gpu,nvidia", "p.csv:2: column vendors: vendors nvidia with resource amd.com/gpu: the resource is amd's"},
		{"x,1000,1024,1,1000,,cuda", `p.csv:2: column vendors: vendor "cuda": want one of nvidia, amd, intel`},
	} {
		_, err := ReadPods("p.csv", strings.NewReader("name,cpu_milli,memory_mib,num_gpu,gpu_milli,resource,vendors\n"+tc.row+"\n"))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.row, err, tc.want)
		}
	}
}

// TestWithVendors: --pod-vendors nvidia sets the GPU pods that name no
// vendor (2 of the 4: not the CPU pod, not the amd.com/gpu pod, not the
// pod that says amd) and leaves the list it was given as it was.
func TestWithVendors(t *testing.T) {
	pods := []PodSpec{
		{Name: "share", NumGPU: 1, GPUMilli: 500},
		{Name: "whole", NumGPU: 2, GPUMilli: 1000},
		{Name: "cpu"},
		{Name: "rocm", NumGPU: 1, GPUMilli: 1000, Resource: cluster.ResourceAMD},
		{Name: "said", NumGPU: 1, GPUMilli: 1000, Vendors: 0b010},
	}
	got, n := WithVendors(pods, 0b001)
	want := []cluster.VendorSet{0b001, 0b001, 0, 0, 0b010}
	if n != 2 {
		t.Errorf("set %d pods, want 2", n)
	}
	for i, w := range want {
		if got[i].Vendors != w {
			t.Errorf("pod %s: %03b, want %03b", got[i].Name, got[i].Vendors, w)
		}
	}
	if pods[0].Vendors != 0 {
		t.Errorf("the given list changed")
	}
}
