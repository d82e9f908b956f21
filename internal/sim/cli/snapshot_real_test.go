// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// runItems writes the items as a snapshot and runs it with fgd, one seed,
// and the given --sharing ("" for none), returning the report and stderr.
func runItems(t *testing.T, sharing string, items ...string) (*engine.Report, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(file, []byte(`{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Sharing, o.Format = file, "fgd", 1, sharing, "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep, stderr.String()
}

func nodeItem(name, labels, alloc string) string {
	return `{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + name + `","labels":{` + labels + `}},"status":{"allocatable":{"cpu":"64","memory":"256Gi",` + alloc + `}}}`
}

func podItem(name, requests string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi",` + requests + `}}}]},"status":{"phase":"Pending"}}`
}

// placedOn returns, by pod, the node of the first run (the first mode's).
func placedOn(rep *engine.Report) map[string]string {
	out := map[string]string{}
	for _, p := range rep.SnapshotPods {
		out[p.Pod] = p.Node
	}
	return out
}

// TestSnapshotSingleStrategy: an H100 server under NVIDIA's single MIG
// strategy, 56 nvidia.com/gpu of 1g.10gb (trace.TestSnapshotSingleMIG),
// is 8 GPUs, not 56: with a T4 server of 2, 10 GPUs. Its nvidia.com/gpu
// devices are MIG instances: a pending pod of 4 nvidia.com/gpu fits it as
// kube-scheduler counts devices (4 of 56), as 4 instances' share of one
// GPU, 4 x 142 = 568 milli-GPU (cluster.Node.Served), not the T4 (2);
// under --sharing mig the 8 GPUs are 7 x 1g.10gb each, and 568 would be
// a 4g.40gb instance, which the layout lacks: it fits nowhere (4
// instances of one pod are not modelled).
func TestSnapshotSingleStrategy(t *testing.T) {
	items := []string{
		nodeItem("h100-0", `"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb","nvidia.com/gpu.count":"56","nvidia.com/mig.strategy":"single"`, `"nvidia.com/gpu":"56"`),
		nodeItem("t4-0", `"nvidia.com/gpu.product":"Tesla-T4"`, `"nvidia.com/gpu":"2"`),
		podItem("four", `"nvidia.com/gpu":"4"`),
	}
	for _, sharing := range []string{"", "mig"} {
		rep, _ := runItems(t, sharing, items...)
		if rep.GPUs != 10 {
			t.Errorf("--sharing %q: %d GPUs, want 10", sharing, rep.GPUs)
		}
		want := map[string]string{"": "h100-0", "mig": ""}[sharing]
		if n := placedOn(rep)["ns/four"]; n != want {
			t.Errorf("--sharing %q: the 4-GPU pod placed on %q, want %q", sharing, n, want)
		}
		if sharing == "mig" {
			if l := rep.Sharing.MIGLayouts; len(l) != 1 || l[0].MIGGPUsPerNode != 8 || l[0].GPUsPerNode != 8 || strings.Join(l[0].Layout, "+") != strings.TrimSuffix(strings.Repeat("1g.10gb+", 7), "+") {
				t.Errorf("MIG layouts %+v, want 8 of 8 GPUs as 7 x 1g.10gb", l)
			}
		}
	}
}

// TestSnapshotTimeSlicedRenamed: ts-0 serves 8 nvidia.com/gpu.shared
// with nvidia.com/gpu.replicas 4 (time-slicing, renameByDefault): 2 GPUs;
// t4-0 1 whole GPU: 3 in all. The 3 pods asking for a replica each take
// 1000 / 4 = 250 milli-GPU of ts-0, in every mode (a replica is one
// whatever the mode); the pod of 1 nvidia.com/gpu takes t4-0, the only
// node that serves it. Allocated: 750 + 1,000 of 3,000 milli-GPU.
func TestSnapshotTimeSlicedRenamed(t *testing.T) {
	items := []string{
		nodeItem("ts-0", `"nvidia.com/gpu.product":"Tesla-T4","nvidia.com/gpu.replicas":"4"`, `"nvidia.com/gpu.shared":"8"`),
		nodeItem("t4-0", `"nvidia.com/gpu.product":"Tesla-T4"`, `"nvidia.com/gpu":"1"`),
		podItem("r0", `"nvidia.com/gpu.shared":"1"`),
		podItem("r1", `"nvidia.com/gpu.shared":"1"`),
		podItem("r2", `"nvidia.com/gpu.shared":"1"`),
		podItem("whole", `"nvidia.com/gpu":"1"`),
	}
	rep, _ := runItems(t, "fractional,exclusive,mig,timeslice:2", items...)
	if rep.GPUs != 3 {
		t.Errorf("%d GPUs, want 3", rep.GPUs)
	}
	on := placedOn(rep)
	for _, p := range []string{"ns/r0", "ns/r1", "ns/r2"} {
		if on[p] != "ts-0" {
			t.Errorf("%s on %q, want ts-0", p, on[p])
		}
	}
	if on["ns/whole"] != "t4-0" {
		t.Errorf("ns/whole on %q, want t4-0", on["ns/whole"])
	}
	for _, r := range rep.Sharing.Rows {
		if r.PlacedPods != 4 || math.Abs(r.GPUAllocationRatio-1750.0/3000) > 1e-6 { // JSON: 6 significant digits
			t.Errorf("%s: %v placed, allocation %v; want 4, 1750/3000", r.Sharing, r.PlacedPods, r.GPUAllocationRatio)
		}
	}
}

// TestSnapshotResourceFit: nodes t4-0 (2 T4), a100-0 (2 MIG GPUs of
// 3g.40gb + 3g.40gb, mixed strategy) and a100-1 (mixed: 6 whole GPUs and
// 4 3g.40gb devices on the other 2 of 8). The 5 pods of one
// nvidia.com/mig-3g.40gb never take a T4 (a GPU without MIG serves no MIG
// device), in any mode: under --sharing mig they take 5 of the A100s' 8
// instances; under fractional 5 shares of ⌊3000/7⌋ = 428 milli-GPU on
// the 4 MIG GPUs (2 fit on each: 856 ≤ 1000), all placed; under
// exclusive a whole MIG GPU each, so 4 place. In every mode a pod of 7
// nvidia.com/gpu fits nowhere (a100-1's 6 whole GPUs serve
// nvidia.com/gpu, its MIG GPUs do not), and one of 6 takes a100-1's GPUs
// 2..7 (the MIG-enabled GPUs are the first two).
func TestSnapshotResourceFit(t *testing.T) {
	items := []string{
		nodeItem("t4-0", `"nvidia.com/gpu.product":"Tesla-T4"`, `"nvidia.com/gpu":"2"`),
		nodeItem("a100-0", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"2"`, `"nvidia.com/mig-3g.40gb":"4"`),
		nodeItem("a100-1", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"8"`, `"nvidia.com/gpu":"6","nvidia.com/mig-3g.40gb":"4"`),
		podItem("seven", `"nvidia.com/gpu":"7"`),
		podItem("six", `"nvidia.com/gpu":"6"`),
	}
	for _, p := range []string{"m0", "m1", "m2", "m3", "m4"} {
		items = append(items, podItem(p, `"nvidia.com/mig-3g.40gb":"1"`))
	}
	for _, sharing := range []string{"mig", "fractional", "exclusive"} {
		rep, _ := runItems(t, sharing, items...)
		migPlaced := 0
		for _, p := range rep.SnapshotPods {
			switch {
			case p.Pod == "ns/seven" && p.Node != "":
				t.Errorf("%s: ns/seven on %s, want nowhere", sharing, p.Node)
			case p.Pod == "ns/six" && (p.Node != "a100-1" || len(p.GPUs) != 6 || p.GPUs[0] != 2):
				t.Errorf("%s: ns/six on %s GPUs %v, want a100-1 GPUs 2..7", sharing, p.Node, p.GPUs)
			case strings.HasPrefix(p.Pod, "ns/m") && p.Node != "":
				migPlaced++
				if !strings.HasPrefix(p.Node, "a100-") {
					t.Errorf("%s: %s on %s, want an A100's MIG GPU", sharing, p.Pod, p.Node)
				}
			}
		}
		if want := map[string]int{"mig": 5, "fractional": 5, "exclusive": 4}[sharing]; migPlaced != want {
			t.Errorf("%s: %d MIG pods placed, want %d", sharing, migPlaced, want)
		}
	}
}
