// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSizeAcrossVendors: one H100 node and one MI300X node of 1 GPU each;
// two pods of 1 GPU that accept nvidia only (CUDA) and one that accepts
// amd only. Adding 1 H100 node places all 3 (2 NVIDIA GPUs for the 2, the
// MI300X for the third): 3 GPU-hours served per hour at 2 × 11.06 + 6.00
// = 28.12 USD/h (the default prices, docs/simulate.md), 9.373 USD per
// served GPU-hour; the one amd pod it cannot serve is placed on the
// MI300X as given. MI300X nodes never place the second nvidia pod (the
// one H100 GPU takes one): not reached, compared as given (+0: its one
// amd pod placed), 2 pods placed, 2 GPU-hours per hour at 11.06 + 6.00 =
// 17.06 USD/h, 8.53 USD per served GPU-hour, the 2 nvidia pods it cannot
// serve, 1 of them placed.
func TestSizeAcrossVendors(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nh,32000,131072,1,H100-80GB\nm,32000,131072,1,MI300X\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,vendors\nn1,1000,1024,1,1000,nvidia\nn2,1000,1024,1,1000,nvidia\na1,1000,1024,1,1000,amd\n"
	o := DefaultOptions()
	o.Size, o.Policies, o.Seeds = "placed>=100%", "bestfit", 1
	rep := runSizeJSON(t, o, nodes, pods)
	vc := rep.Vendors
	if vc == nil || len(vc.Candidates) != 2 || len(vc.Groups) != 2 {
		t.Fatalf("comparison %+v", vc)
	}
	if g := vc.Groups; g[0].Vendors != "nvidia" || g[0].Pods != 2 || g[1].Vendors != "amd" || g[1].Pods != 1 {
		t.Errorf("groups %+v", g)
	}
	type row struct {
		model        string
		reached      bool
		added        int
		placed, gpuh float64
		usd, usdGPUh float64
		cannot       int
		cannotPlaced float64
	}
	want := []row{{"H100-80GB", true, 1, 3, 3, 28.12, 28.12 / 3, 1, 1}, {"MI300X", false, 0, 2, 2, 17.06, 8.53, 2, 1}}
	for i, w := range want {
		c := vc.Candidates[i]
		got := row{c.Model, c.Reached, c.Added, c.Placed, c.GPUHours, c.USD, c.USDPerServedGPUHour, c.CannotServe, c.CannotServePlaced}
		if math.Abs(got.usd-w.usd) < 0.005 && math.Abs(got.usdGPUh-w.usdGPUh) < 0.005 { // JSON rounds to cents
			got.usd, got.usdGPUh = w.usd, w.usdGPUh
		}
		if got != w {
			t.Errorf("candidate %d = %+v, want %+v", i, got, w)
		}
	}
	wantNC := []string{"2 pods accept only nvidia: MI300X cannot serve them", "1 pod accepts only amd: H100-80GB cannot serve them"}
	if !reflect.DeepEqual(vc.NotComparable, wantNC) {
		t.Errorf("not comparable %q, want %q", vc.NotComparable, wantNC)
	}
	// NVIDIA nodes only, pods of any vendor: no comparison, the report
	// as before.
	o.Policies = "fgd"
	rep = runSizeJSON(t, o, "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,16384,1,1000\n")
	if rep.Vendors != nil || rep.Results[0].Served != nil {
		t.Errorf("an NVIDIA-only search compares vendors: %+v, %+v", rep.Vendors, rep.Results[0].Served)
	}
}

// TestPodVendors: --pod-vendors intel makes the 2 GPU pods of a trace
// accept Intel's Gaudi only; on H100 nodes they fit none, and the warning
// says why; the CPU pod still places. A bad name is an error.
func TestPodVendors(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.NodesFile, o.PodsFile = filepath.Join(dir, "n.csv"), filepath.Join(dir, "p.csv")
	if err := os.WriteFile(o.NodesFile, []byte("sn,cpu_milli,memory_mib,gpu,model\nh,32000,131072,8,H100-80GB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.PodsFile, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\np1,1000,1024,2,1000\nc0,1000,1024,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Policies, o.Seeds, o.PodVendors = "fgd", 1, "intel"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"simulate: --pod-vendors intel: 2 of 3 pods of " + o.PodsFile + " accept GPUs of intel only",
		`pod "p0" (cpu_milli 1000, memory_mib 1024, num_gpu 1, gpu_milli 500) accepts GPUs of intel only (its vendors) and no node of ` + o.NodesFile + " with a GPU model it allows is of them",
		"2 of 3 pods of " + o.PodsFile + " fit no node",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	o.PodVendors = "cuda"
	if err := Run(context.Background(), o, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `--pod-vendors: vendor "cuda"`) {
		t.Errorf("--pod-vendors cuda: %v", err)
	}
}
