// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// --node-feature-api writes the NodeFeature object of --node-name in
// --namespace: both are needed before anything starts.
func TestCheckNodeFeatureAPI(t *testing.T) {
	o := DefaultOptions()
	o.NodeFeatureAPI, o.NodeName, o.Namespace = true, "node-1", ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--node-feature-api needs --node-name (or $NODE_NAME) and --namespace (or $POD_NAMESPACE)") {
		t.Errorf("no namespace: %v", err)
	}
	o.Namespace = "gpu-system"
	if err := o.Check(); err != nil {
		t.Errorf("node and namespace given: %v", err)
	}
}

// --scheduler-choice lists the pods bound to --node-name: it needs one.
func TestCheckSchedulerChoice(t *testing.T) {
	o := DefaultOptions()
	o.SchedulerChoice, o.NodeName = true, ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--scheduler-choice needs --node-name (or $NODE_NAME)") {
		t.Errorf("no node name: %v", err)
	}
	o.NodeName = "node-1"
	if err := o.Check(); err != nil {
		t.Errorf("node name given: %v", err)
	}
}

// The flags only the DRA plugin reads are refused without
// --kubelet-api=dra, a toolkit spec without --cdi-dir (nothing would read
// it), a negative rediscovery interval, an unknown MIG order and a target
// workload under the table's order (nothing would read it), each naming
// the flag.
func TestCheckDRAFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"shares, device plugin", func(o *Options) { o.DRA.Shares = true }, "--cdi-toolkit-spec, --dra-shares and --dra-consumable-shares need --kubelet-api=dra"},
		{"toolkit spec, device plugin", func(o *Options) { o.DRA.CDIDir, o.DRA.ToolkitSpec = "/var/run/cdi", "/var/run/cdi/nvidia.yaml" }, "--cdi-toolkit-spec, --dra-shares and --dra-consumable-shares need --kubelet-api=dra"},
		{"toolkit spec alone", func(o *Options) { o.KubeletAPI = KubeletAPIDRA; o.DRA.ToolkitSpec = "/var/run/cdi/nvidia.yaml" }, "--cdi-toolkit-spec needs --cdi-dir"},
		{"negative interval", func(o *Options) { o.KubeletAPI = KubeletAPIDRA; o.DRA.RediscoverInterval = -time.Second }, "--dra-rediscover-interval -1s: must not be negative"},
		{"MIG order", func(o *Options) { o.KubeletAPI, o.DRA.MIGOrder = KubeletAPIDRA, "first" }, `--dra-mig-order: unknown order "first" (table or core)`},
		{"MIG order stale", func(o *Options) { o.KubeletAPI, o.DRA.MIGOrder = KubeletAPIDRA, "stale" }, `--dra-mig-order: "stale" is a measure of gpuplane simulate, not a driver's order (table or core)`},
		{"workload, device plugin", func(o *Options) { o.DRA.TargetWorkloadFile = "pods.csv" }, "--dra-mig-order and --dra-target-workload-file need --kubelet-api=dra"},
		{"MIG order, device plugin", func(o *Options) { o.DRA.MIGOrder = "table" }, "--dra-mig-order and --dra-target-workload-file need --kubelet-api=dra"},
		{"workload missing", func(o *Options) {
			o.KubeletAPI, o.DRA.TargetWorkloadFile = KubeletAPIDRA, filepath.Join(t.TempDir(), "none.csv")
		}, "--dra-target-workload-file: open "},
		{"workload, table order", func(o *Options) {
			o.KubeletAPI, o.DRA.MIGOrder, o.DRA.TargetWorkloadFile = KubeletAPIDRA, "table", "pods.csv"
		}, "--dra-target-workload-file needs --dra-mig-order=core"},
		{"dra, all set", func(o *Options) {
			o.KubeletAPI, o.DRA.CDIDir, o.DRA.ToolkitSpec, o.DRA.Shares, o.DRA.RediscoverInterval = KubeletAPIDRA, "/var/run/cdi", "/var/run/cdi/nvidia.yaml", true, 0
		}, ""},
	} {
		o := DefaultOptions()
		o.NodeName = "node-1"
		tc.edit(&o)
		err := o.Check()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// DRAOptions.rank: none under --dra-mig-order=table; under core (the
// default, and empty) the file's pods: of 285 and 571 milli-GPU, held by
// a 2g.20gb and a 4g.40gb at the least (2 and 4 of 7 compute slices,
// rounded down), so the ranking of placement's TestRankMIG (half 2g, half
// 4g): on two A100-80GB of MIG on demand, GPU 0 with a 4g at slot 0, a
// 2g's placements GPU 1 at 4, GPU 1 at 0, GPU 1 at 2, GPU 0 at 4. A
// missing file is an error naming the flag.
func TestDRARank(t *testing.T) {
	if tw, err := (DRAOptions{MIGOrder: "table"}).rank(); tw != nil || err != nil {
		t.Errorf("table: %v, %v; want none", tw, err)
	}
	f := filepath.Join(t.TempDir(), "pods.csv")
	csv := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,285,\np1,4000,8192,1,571,\n"
	if err := os.WriteFile(f, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := cluster.NewNode("n", "A100-80GB", 64000, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(n.EnableDynamicMIG(0), n.EnableDynamicMIG(1), n.HoldDynamicMIG(0, 5, 0)); err != nil {
		t.Fatal(err)
	}
	for _, order := range []string{"core", ""} {
		tw, err := (DRAOptions{MIGOrder: order, TargetWorkloadFile: f}).rank()
		if err != nil || tw == nil {
			t.Fatalf("%q: %v, %v", order, tw, err)
		}
		if got, want := tw.RankMIG(&n, 3), []placement.MIGPlacement{{GPU: 1, Start: 4}, {GPU: 1, Start: 0}, {GPU: 1, Start: 2}, {GPU: 0, Start: 4}}; !slices.Equal(got, want) {
			t.Errorf("%q: 2g.20gb ranked %v, want %v", order, got, want)
		}
	}
	if _, err := (DRAOptions{TargetWorkloadFile: f + ".none"}).rank(); err == nil || !strings.Contains(err.Error(), "--dra-target-workload-file") {
		t.Errorf("missing file: %v", err)
	}
}
