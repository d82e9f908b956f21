// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
)

// example is the bundled snapshot (hack/snapshot-example): a100-0 (8
// A100-80GB, GPUs 2..7 held by team-a/train), t4-0 and t4-1 (2 T4 each, one
// of t4-0's held by team-b/infer-0); pending team-c/big (4 GPUs, A100 or
// H100), team-a/pair (2 GPUs), team-b/infer-1 (1 T4), team-b/etl (CPU).
const example = "../../../docs/examples/snapshot.json"

// TestSnapshotPending: with the running pods in place only 2 A100 GPUs are
// free, so big (4 GPUs of A100 or H100) never places; pair, infer-1 and
// etl always do (2 + 1 GPUs of the 2 + 1 + 2 free). Allocated at the end:
// 6 + 1 + 2 + 1 = 10 of 12 GPUs, for every policy and seed.
func TestSnapshotPending(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds = example, "fgd,bestfit,leastallocated,random", 3
	rep := runJSON(t, o)
	if rep.Pods != 4 || rep.GPUs != 12 || rep.Nodes != 3 {
		t.Fatalf("%d pods, %d GPUs, %d nodes; want 4, 12, 3", rep.Pods, rep.GPUs, rep.Nodes)
	}
	for _, r := range rep.Results {
		if r.FailedPods != 1 || r.AllocatedGPUMilli != 10000 || math.Abs(r.GPUAllocationRatio-10.0/12) > 1e-6 {
			t.Errorf("%s seed %d: %d failed, %d milli-GPU allocated; want 1, 10000", r.Policy, r.Seed, r.FailedPods, r.AllocatedGPUMilli)
		}
	}
	if len(rep.SnapshotPods) != 4*4 {
		t.Fatalf("%d pod outcomes, want 16", len(rep.SnapshotPods))
	}
	for _, p := range rep.SnapshotPods {
		switch {
		case p.Runs != 3:
			t.Errorf("%+v: want 3 runs", p)
		case p.Pod == "team-c/big" && (p.Placed != 0 || p.Reason != engine.ReasonNoRoom):
			t.Errorf("%+v: big never places (no room)", p)
		case p.Pod != "team-c/big" && p.Placed != 3:
			t.Errorf("%+v: places in every run", p)
		case p.Pod == "team-b/infer-1" && !strings.HasPrefix(p.Node, "t4-"):
			t.Errorf("%+v: a T4 node", p)
		case p.Pod == "team-a/pair" && p.Node == "a100-0" && (len(p.GPUs) != 2 || p.GPUs[0] != 0 || p.GPUs[1] != 1):
			t.Errorf("%+v: on a100-0 only GPUs 0 and 1 are free", p)
		}
	}
	if rep.SnapshotPods[0].Pod != "team-c/big" || rep.SnapshotPods[0].Policy != rep.Summary[0].Policy || rep.SnapshotPods[4].Pod != "team-a/pair" {
		t.Errorf("outcomes not in pod order then policy order: %+v", rep.SnapshotPods[:5])
	}
}

// TestSnapshotSize: the 4 pending pods on the snapshot's nodes (1 A100
// server, 2 T4 servers) with its 2 running pods where they run, every
// pending pod placed. train runs on the A100 server with 6 of its 8
// GPUs, so big (4 GPUs of A100 or H100; T4 servers have 2) fits no node
// as given: 3 of 4 place (pair 2 GPUs, infer-1 a T4, etl no GPU); adding
// 1 A100 server places all. Adding T4 servers places no more: 0, 1, 2, 4
// added all place 3 of 4, and the search gives up (two doublings
// without gain).
func TestSnapshotSize(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Size, o.Format = example, "fgd,random", 3, "placed>=100%", "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep sizing.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Pods != 4 || len(rep.Results) != 4 {
		t.Fatalf("%d pods, %d results; want 4, 4 (2 policies × 2 GPU node types)", rep.Pods, len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Model == "T4" {
			if r.Reached || len(r.Curve) != 4 || r.Curve[3].Added != 4 {
				t.Errorf("%s adding T4: %+v, want not reached after adding 0, 1, 2, 4", r.Policy, r)
			}
			continue
		}
		checkCurve(t, r, 4, []step{{3, 3.0 / 4}, {4, 1}})
	}
	if a := rep.Recommendation.Add; a == nil || a.Nodes != 1 || a.Model == "T4" {
		t.Errorf("recommendation adds %+v, want 1 A100 server", a)
	}
}

func TestSnapshotErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"empty alone", func(o *Options) { o.SnapshotEmpty = true }, "--snapshot-empty needs --snapshot"},
		{"with nodes", func(o *Options) { o.SnapshotFile, o.NodesFile, o.PodsFile = example, "n.csv", "p.csv" }, "leave out --nodes and --pods"},
		{"with nodes alone", func(o *Options) { o.SnapshotFile, o.NodesFile = example, "n.csv" }, "--snapshot gives the nodes and pods: leave out --nodes and --pods"},
		{"replay", func(o *Options) { o.SnapshotFile, o.Mode = example, "replay" }, "--snapshot has no arrival times"},
		{"inflate", func(o *Options) { o.SnapshotFile, o.InflateSet = example, true }, "takes no --inflate"},
	} {
		o := DefaultOptions()
		tc.edit(&o)
		if _, _, err := o.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSnapshotSharing: the sharing table counts the running pods' GPUs.
// Under FGD: train holds a100-0's GPUs 2..7, infer-0 t4-0's GPU 0; pair
// takes a100-0's 0 and 1, infer-1 t4-0's 1 (TestSnapshotPending), etl
// none: 10 GPUs needed, 8 A100-80GB at 3.93 and 2 T4 at 0.35 USD per
// GPU-hour (internal/cost/prices) = 32.14 USD/h; no pod shares a GPU (all whole).
// The warning about the absent H100 names the snapshot's constraints, not
// the CSV column gpu_spec.
func TestSnapshotSharing(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Sharing, o.Format = example, "fgd", 1, "exclusive,fractional", "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sharing == nil || len(rep.Sharing.Rows) != 2 {
		t.Fatalf("sharing %+v", rep.Sharing)
	}
	for _, r := range rep.Sharing.Rows {
		if r.GPUsNeeded != 10 || math.Abs(r.USDPerHour-32.14) > 1e-9 || r.PlacedPods != 3 || r.SharedPods != 0 {
			t.Errorf("%s: %+v; want 10 GPUs needed, 32.14 USD/h, 3 placed, 0 shared", r.Sharing, r)
		}
	}
	want := `has no GPU model "H100-80GB", which the GPU model constraints (annotation, nodeSelector, node affinity) name in 1 pods`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestOutRemovedOnFailure: a run that fails after --out made its
// directories (here: the snapshot holds no nodes) leaves none of them; a
// directory that was there stays.
func TestOutRemovedOnFailure(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "s.json")
	if err := os.WriteFile(snap, []byte(`{"kind": "List", "items": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.OutDir = snap, filepath.Join(dir, "a", "b")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "no nodes") {
		t.Fatalf("err %v, want no nodes", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("%s/a left behind: %v", dir, err)
	}
	o.OutDir = dir
	if err := Run(context.Background(), o, &stdout, &stderr); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the existing --out directory is gone: %v", err)
	}
}

// TestSnapshotMIG: a node whose 2 A100-80GB GPUs are each cut into two
// 3g.40gb instances (mig.strategy mixed: nvidia.com/mig-3g.40gb 4, no
// nvidia.com/gpu) and 5 pending pods of one 3g.40gb each. Under --sharing
// mig the node keeps its layout (2 × 3g.40gb per GPU, which NVIDIA's A100
// placements allow) and each pod takes an instance: 4 placed, 1 failed.
// Exclusive gives each pod a whole GPU: 2 placed. Fractional packs the
// pods' 428 milli-GPU (3/7, rounded down) two to a GPU: 4 placed.
func TestSnapshotMIG(t *testing.T) {
	items := []string{`{"apiVersion":"v1","kind":"Node","metadata":{"name":"mig-0","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"2"}},` +
		`"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/mig-3g.40gb":"4"}}}`}
	rep, stderr := runMIGPods(t, items)
	if l := rep.Sharing.MIGLayouts; len(l) != 1 || l[0].Source != "given" || l[0].MIGGPUsPerNode != 2 || strings.Join(l[0].Layout, "+") != "3g.40gb+3g.40gb" {
		t.Errorf("MIG layouts %+v, want the snapshot's: given, 2 GPUs of 3g.40gb + 3g.40gb", l)
	}
	if strings.Contains(stderr, "simulated as whole GPUs") {
		t.Errorf("stderr %q: the layout is simulated under --sharing mig", stderr)
	}
}

// TestSnapshotMixedMIG: a node of GPU feature discovery's mixed strategy,
// 6 whole GPUs (nvidia.com/gpu) and 4 3g.40gb devices among the other 2 of
// its 8 (nvidia.com/gpu.count), with a running pod on 6 GPUs. Its 8 GPUs
// are simulated, the pod stays on its GPUs, and --sharing mig keeps the 2
// MIG GPUs' layout on the 2 the pod leaves: 2 instances each, 4 of the 5
// pending 3g pods placed there; exclusive gives each a whole GPU of the 2
// free (2 placed); fractional packs two 428 milli-GPU shares per GPU (4
// placed).
func TestSnapshotMixedMIG(t *testing.T) {
	for _, tc := range []struct {
		held string
		mig  []int // the GPUs left for the MIG pods
	}{{"2,3,4,5,6,7", []int{0, 1}}, {"0,1,2,3,4,5", []int{6, 7}}} {
		t.Run(tc.held, func(t *testing.T) { testSnapshotMixedMIG(t, tc.held, tc.mig) })
	}
}

func testSnapshotMixedMIG(t *testing.T, held string, migGPUs []int) {
	items := []string{`{"apiVersion":"v1","kind":"Node","metadata":{"name":"a100-0","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"8"}},` +
		`"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/gpu":"6","nvidia.com/mig-3g.40gb":"4"}}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"train","namespace":"ns","annotations":{"gpuplane.io/gpus":"` + held + `"}},"spec":{"nodeName":"a100-0","containers":[{"name":"c","resources":` +
			`{"requests":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"6"}}}]},"status":{"phase":"Running"}}`}
	rep, stderr := runMIGPods(t, items)
	l := rep.Sharing.MIGLayouts
	var mig []engine.GPUGroup
	if len(l) == 1 {
		mig = slices.DeleteFunc(l[0].Groups(), func(g engine.GPUGroup) bool { return g.Layout == nil })
	}
	if len(l) != 1 || l[0].MIGGPUsPerNode != 2 || l[0].GPUsPerNode != 8 || len(mig) != 1 || !slices.Equal(mig[0].GPUs, migGPUs) || strings.Join(mig[0].Layout, "+") != "3g.40gb+3g.40gb" {
		t.Errorf("MIG layouts %+v, want GPUs %v of 8 as 3g.40gb + 3g.40gb", l, migGPUs)
	}
	if s := stderr; strings.Contains(s, "go past") || strings.Contains(s, "chosen again") || strings.Contains(s, "does not fit") {
		t.Errorf("stderr %q: the running pod keeps its GPUs", s)
	}
	placed := 0
	for _, p := range rep.SnapshotPods { // the first mode's: mig
		if p.Node == "" {
			continue
		}
		placed++
		if len(p.GPUs) != 1 || !slices.Contains(migGPUs, p.GPUs[0]) {
			t.Errorf("pod %s on GPUs %v, want one of %v", p.Pod, p.GPUs, migGPUs)
		}
	}
	if placed != 4 {
		t.Errorf("%d pods placed under mig, want 4", placed)
	}
}

// TestSnapshotRunningSharing: a running pod of 300 milli-GPU on one of a
// T4 node's 2 GPUs, and a pending pod of 1 GPU that takes the other. At the
// end the node's 2,000 milli-GPU hold, by mode, the pending pod's 1,000
// plus the running pod as the mode gives it: exclusive a whole GPU (2,000:
// 1.0), fractional its 300 (1,300: 0.65), timeslice:2 a replica of 500
// (1,500: 0.75), mig a whole GPU, the T4 having no MIG (1.0).
func TestSnapshotRunningSharing(t *testing.T) {
	items := []string{`{"apiVersion":"v1","kind":"Node","metadata":{"name":"t4-0","labels":{"nvidia.com/gpu.product":"Tesla-T4"}},` +
		`"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/gpu":"2"}}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"infer","namespace":"ns"},"spec":{"nodeName":"t4-0","containers":[{"name":"c","resources":` +
			`{"requests":{"cpu":"1","memory":"1Gi","gpuplane.io/gpu-milli":"300"}}}]},"status":{"phase":"Running"}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"train","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":` +
			`{"requests":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}}`}
	file := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(file, []byte(`{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Sharing, o.Format = file, "fgd", 1, "exclusive,fractional,timeslice:2,mig", "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"exclusive": 1, "fractional": 0.65, "timeslice:2": 0.75, "mig": 1}
	if rep.Sharing == nil || len(rep.Sharing.Rows) != 4 {
		t.Fatalf("sharing %+v", rep.Sharing)
	}
	for _, r := range rep.Sharing.Rows {
		if math.Abs(r.GPUAllocationRatio-want[r.Sharing]) > 1e-9 || r.PlacedPods != 1 {
			t.Errorf("%s: allocation ratio %v, %v placed; want %v, 1", r.Sharing, r.GPUAllocationRatio, r.PlacedPods, want[r.Sharing])
		}
	}
}

// TestSnapshotMIGConfigHeld: docs/examples/mig-config.yaml MIG-enables
// GPUs 0-3 of the A100 nodes, and docs/examples/snapshot.json's running
// pod team-a/train holds GPUs 2-7 of a100-0 (annotation gpuplane.io/gpus):
// those two stay whole, with a warning naming the config's line and the
// pod, and the run goes on.
func TestSnapshotMIGConfigHeld(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.MIGConfig, o.Policies, o.Seeds, o.Sharing, o.Format = "../../../docs/examples/snapshot.json", "../../../docs/examples/mig-config.yaml", "fgd", 1, "mig", "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, g := range []string{"2", "3"} {
		want := `mig-config.yaml:8: mig-configs."half-mig": node "a100-0" GPU ` + g + ` is held by running pod "team-a/train" (annotation gpuplane.io/gpus): left whole`
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	if s := stderr.String(); strings.Contains(s, "chosen again") || strings.Contains(s, "does not fit") {
		t.Errorf("stderr %q: team-a/train keeps its GPUs", s)
	}
}

// runMIGPods adds 5 pending pods of one 3g.40gb device each to the
// snapshot items, runs --sharing mig,exclusive,fractional with fgd and one
// seed, and checks the pods placed: 4 under mig and fractional (two 428
// milli-GPU shares per GPU), 2 under exclusive, as both MIG tests' nodes
// give (4 instances, 2 free GPUs). It returns the report and stderr.
func runMIGPods(t *testing.T, items []string) (*engine.Report, string) {
	t.Helper()
	for _, p := range []string{"p0", "p1", "p2", "p3", "p4"} {
		items = append(items, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+p+`","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":`+
			`{"requests":{"cpu":"1","memory":"1Gi","nvidia.com/mig-3g.40gb":"1"},"limits":{"nvidia.com/mig-3g.40gb":"1"}}}]},"status":{"phase":"Pending"}}`)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(file, []byte(`{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Sharing, o.Format = file, "fgd", 1, "mig,exclusive,fractional", "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"mig": 4, "exclusive": 2, "fractional": 4}
	if rep.Sharing == nil || len(rep.Sharing.Rows) != 3 {
		t.Fatalf("sharing %+v", rep.Sharing)
	}
	for _, r := range rep.Sharing.Rows {
		if r.PlacedPods != want[r.Sharing] {
			t.Errorf("%s: %v placed, want %v", r.Sharing, r.PlacedPods, want[r.Sharing])
		}
	}
	return &rep, stderr.String()
}

// TestSnapshotSizeCordoned: the same snapshot with its one A100 server
// cordoned. train keeps running there (a cordon evicts nothing), but
// Kubernetes places nothing new on it (NodeUnschedulable) and --size never
// grows a cordoned node type, so big, which only an A100 server fits,
// fits no node type: --size says it cannot hold, and the warnings name
// the pod and the cordon.
func TestSnapshotSizeCordoned(t *testing.T) {
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), `"name": "a100-0"`)
	j := i + strings.Index(string(b[i:]), `"spec": {}`)
	if i < 0 || j < i {
		t.Fatal("a100-0 or its spec not found")
	}
	s := string(b[:j]) + `"spec": {"unschedulable": true}` + string(b[j+len(`"spec": {}`):])
	o := DefaultOptions()
	o.SnapshotFile = filepath.Join(t.TempDir(), "cordoned.json")
	if err := os.WriteFile(o.SnapshotFile, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Policies, o.Seeds, o.Size, o.Format = "fgd", 1, "placed>=100%", "json"
	var stdout, stderr strings.Builder
	err = Run(context.Background(), o, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 4 pods fit no node type even when empty") {
		t.Fatalf("err %v, want 1 of 4 pods fitting no node type\n%s", err, stderr.String())
	}
	for _, pod := range []string{`/big"`, "or a cordon: taint"} {
		if !strings.Contains(stderr.String(), pod) {
			t.Errorf("warnings do not say %s:\n%s", pod, stderr.String())
		}
	}
}

// TestSnapshotSizeNeverShort: --size on a snapshot never calls a cluster
// short for pods it runs. Without big, the pending pods (pair, infer-1,
// etl) fit beside the running ones as they run (2 free A100 GPUs, 1 +
// 2 free T4 GPUs): every type's search ends at 0 added. With no pending
// pod at all, --size says the cluster is not short.
func TestSnapshotSizeNeverShort(t *testing.T) {
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	write := func(drop func(string) bool) string {
		keep := list
		keep.Items = nil
		for _, it := range list.Items {
			if !drop(string(it)) {
				keep.Items = append(keep.Items, it)
			}
		}
		out, err := json.Marshal(keep)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "snapshot.json")
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	o := DefaultOptions()
	o.Policies, o.Seeds, o.Size, o.Format = "fgd", 1, "placed>=100%", "json"
	o.SnapshotFile = write(func(it string) bool { return strings.Contains(it, `"name": "big"`) })
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep sizing.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2 (fgd adding A100 or T4 servers)", len(rep.Results))
	}
	for _, r := range rep.Results {
		if !r.Reached || r.Answer.Added != 0 {
			t.Errorf("%s adding %s: reached %v with %d added, want 0 added", r.Policy, r.Model, r.Reached, r.Answer.Added)
		}
	}
	if a := rep.Recommendation; a != nil && a.Add != nil && a.Add.Nodes > 0 {
		t.Errorf("recommendation adds %+v, want nothing", a.Add)
	}
	o.SnapshotFile = write(func(it string) bool { return strings.Contains(it, `"phase": "Pending"`) })
	stdout.Reset()
	stderr.Reset()
	err = Run(context.Background(), o, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "the cluster is not short") {
		t.Errorf("every pod running: err %v, want the cluster is not short", err)
	}
}
