// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// draMIGSnapshot is a DRA node by hand, as gpuplane's driver publishes it
// (internal/node/dra Build) with the chart's DeviceClasses: 2 A100-80GB in
// MIG mode, each with some MIG placements and no whole-GPU device (the
// lines WHOLE removes; device names end in the start slot, NVIDIA's
// naming). Running: mig holds the 1g.10gb at slot START of gpu-0, train
// the 4g.40gb of gpu-1 (TRAIN). Pending: big asks for a 4g.40gb
// (mig.nvidia.com, profile 4g.40gb), which needs slots 0-3 of a GPU with
// 4 compute slices left. With the MIG devices' type changed, the node is
// one of whole GPUs: train holds the whole gpu-1 instead.
const draMIGSnapshot = `{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"a100"},"status":{"allocatable":{"cpu":"64","memory":"512Gi"}}},
{"kind":"ResourceSlice","metadata":{"name":"a100-0"},"spec":{"driver":"gpu.nvidia.com","nodeName":"a100","pool":{"name":"a100"},"devices":[
 {"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-0"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{}}]},
 {"name":"gpu-0-mig-1g10gb-19-0","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-0"},"productName":{"string":"NVIDIA A100-SXM4-80GB"},"profile":{"string":"1g.10gb"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{}}]},
 {"name":"gpu-0-mig-1g10gb-19-6","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-0"},"productName":{"string":"NVIDIA A100-SXM4-80GB"},"profile":{"string":"1g.10gb"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{}}]},
 {"name":"gpu-0-mig-4g40gb-5-0","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-0"},"productName":{"string":"NVIDIA A100-SXM4-80GB"},"profile":{"string":"4g.40gb"}},"consumesCounters":[{"counterSet":"gpu-0-counter-set","counters":{}}]},
 {"name":"gpu-1","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-1"},"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"consumesCounters":[{"counterSet":"gpu-1-counter-set","counters":{}}]},
 {"name":"gpu-1-mig-4g40gb-5-0","attributes":{"type":{"string":"mig"},"parentUUID":{"string":"GPU-1"},"productName":{"string":"NVIDIA A100-SXM4-80GB"},"profile":{"string":"4g.40gb"}},"consumesCounters":[{"counterSet":"gpu-1-counter-set","counters":{}}]}]}},
{"kind":"Pod","metadata":{"name":"mig","namespace":"ml"},"spec":{"nodeName":"a100","containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":[{"name":"m","resourceClaimName":"mig"}]},"status":{"phase":"Running"}},
{"kind":"ResourceClaim","metadata":{"name":"mig","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"m","exactly":{"deviceClassName":"mig.nvidia.com"}}]}},
 "status":{"allocation":{"devices":{"results":[{"request":"m","driver":"gpu.nvidia.com","pool":"a100","device":"gpu-0-mig-1g10gb-19-START"}]}}}},
{"kind":"Pod","metadata":{"name":"train","namespace":"ml"},"spec":{"nodeName":"a100","containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":[{"name":"g","resourceClaimName":"train"}]},"status":{"phase":"Running"}},
{"kind":"ResourceClaim","metadata":{"name":"train","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
 "status":{"allocation":{"devices":{"results":[{"request":"g","driver":"gpu.nvidia.com","pool":"a100","device":"TRAIN"}]}}}},
{"kind":"Pod","metadata":{"name":"big","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":[{"name":"m","resourceClaimName":"big"}]},"status":{"phase":"Pending"}},
{"kind":"ResourceClaim","metadata":{"name":"big","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"m","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '4g.40gb'"}}]}}]}}}
]}`

// TestSnapshotDRAMIGOnDemand runs draMIGSnapshot under --gpu-api dra
// --sharing mig: the running 1g.10gb is put in place at its own slot. At
// slot 6, slots 0-3 of gpu-0 stay free and big's 4g.40gb takes them (1 +
// 4 compute slices held: ⌊5000/7⌋ = 714 milli-GPU allocated on
// gpu-0, ⌊4000/7⌋ = 571 on gpu-1, whose 4g.40gb train holds: 1285 of
// 2000); at slot 0 (the first free placement, where the simulator put it
// before) big fits nowhere, as the only 4g.40gb placement starts at 0
// (142 + 571 allocated; gpu.MIGShareMilli rounds down). A node that
// publishes no MIG placements (its GPUs not in MIG mode) stays whole: no
// GPU of MIG on demand in the report's layouts, and big, whose claim asks
// for a MIG device, fits no GPU there (a GPU without MIG serves none:
// failed no_resource); train's whole gpu-1 is the 1000 allocated.
func TestSnapshotDRAMIGOnDemand(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		start     string
		noMIG     bool
		placed    int
		allocated int64
	}{{"6", false, 1, 1285}, {"0", false, 0, 713}, {"6", true, 0, 1000}} {
		body := strings.ReplaceAll(draMIGSnapshot, "START", tc.start)
		if tc.noMIG {
			body = strings.ReplaceAll(body, `"type":{"string":"mig"}`, `"type":{"string":"none"}`)
			body = strings.ReplaceAll(body, "TRAIN", "gpu-1")
		} else {
			var kept []string
			for _, l := range strings.Split(body, "\n") {
				if !strings.Contains(l, `"type":{"string":"gpu"}`) { // WHOLE
					kept = append(kept, l)
				}
			}
			body = strings.ReplaceAll(strings.Join(kept, "\n"), "TRAIN", "gpu-1-mig-4g40gb-5-0")
		}
		file := filepath.Join(dir, fmt.Sprintf("snap-%d.json", i))
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.SnapshotFile, o.Policies, o.Seeds, o.GPUAPI, o.Sharing = file, "bestfit", 1, "dra", "mig"
		rep := runJSON(t, o)
		r := rep.Results[0]
		if r.AllocatedGPUMilli != tc.allocated || len(rep.SnapshotPods) != 1 || rep.SnapshotPods[0].Placed != tc.placed {
			t.Errorf("start %s: %d milli-GPU allocated, outcomes %+v; want %d, big placed %d", tc.start, r.AllocatedGPUMilli, rep.SnapshotPods, tc.allocated, tc.placed)
		}
		if l := rep.Sharing.MIGLayouts; (len(l) == 0) != tc.noMIG || (!tc.noMIG && l[0].Source != "on demand") {
			t.Errorf("start %s, no MIG %v: layouts %+v", tc.start, tc.noMIG, l)
		}
		if tc.noMIG && rep.SnapshotPods[0].Reason != "no_resource" {
			t.Errorf("no MIG: big failed %q, want no_resource", rep.SnapshotPods[0].Reason)
		}
		if tc.placed == 1 && (rep.SnapshotPods[0].Node != "a100" || len(rep.SnapshotPods[0].GPUs) != 1 || rep.SnapshotPods[0].GPUs[0] != 0) {
			t.Errorf("start %s: big on %s GPUs %v, want a100 GPU 0", tc.start, rep.SnapshotPods[0].Node, rep.SnapshotPods[0].GPUs)
		}
	}
}

// TestSnapshotDRAWarnings: under --gpu-api device-plugin the DRA node is
// simulated with the policy's GPU choice and its MIG on demand as whole
// GPUs, each said once on stderr.
func TestSnapshotDRAWarnings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(draMIGSnapshot, "START", "6")), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Format = file, "bestfit", 1, "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		file + ": 1 nodes serve their GPUs by DRA (ResourceSlices of gpu.nvidia.com): simulated with the policy's choice of GPU in a node; --gpu-api dra simulates upstream's allocator's",
		file + ": 1 DRA nodes publish MIG placements (MIG on demand): simulated as whole GPUs that serve MIG claims as shares; --gpu-api dra --sharing mig simulates MIG on demand",
	} {
		if strings.Count(stderr.String(), w) != 1 {
			t.Errorf("stderr lacks %q once:\n%s", w, stderr.String())
		}
	}
}
