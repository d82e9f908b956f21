// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package placement_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

const nodeName = "n"

// features are the allocator features kube-scheduler v1.37.2 turns on by
// default (k8s.io/kubernetes pkg/scheduler/framework/plugins/
// dynamicresources AllocatorFeatures over pkg/features/kube_features.go's
// defaults: the beta and GA DRA gates); NewAllocator then picks the
// "incubating" implementation, as in the scheduler.
var features = structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
	DeviceBindingAndStatus: true, ConsumableCapacity: true, FractionalCapacityRange: true}

// realAllocator is kube-scheduler's DRA allocator
// (k8s.io/dynamic-resource-allocation/structured, with features) over the slices gpuplane's DRA driver publishes for
// one node (dra.Build, split by Resources.Pool and named as the kubelet
// plugin's resourceslice controller names them: index first).
type realAllocator struct {
	t       *testing.T
	node    device.Node // the mock node the slices publish
	slices  []*resourceapi.ResourceSlice
	state   structured.AllocatedState
	held    map[string][]resourceapi.DeviceRequestAllocationResult
	classes kube.ClassLister // the chart's, as the cluster has them
}

func newRealAllocator(t *testing.T, profile string, o dra.Options) *realAllocator {
	t.Helper()
	n, err := mock.DiscoverProfile("node.yaml", []byte(profile))
	if err != nil {
		t.Fatal(err)
	}
	r, err := dra.Build(n, o)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := kube.ChartClasses()
	if err != nil {
		t.Fatal(err)
	}
	a := &realAllocator{t: t, node: n, classes: classes, held: map[string][]resourceapi.DeviceRequestAllocationResult{},
		state: structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}}
	a.publish(r)
	return a
}

// republish replaces the slices with what dra.Build publishes under o,
// as the driver does after a prepare or an unprepare.
func (a *realAllocator) republish(o dra.Options) {
	a.t.Helper()
	r, err := dra.Build(a.node, o)
	if err != nil {
		a.t.Fatal(err)
	}
	a.publish(r)
}

// publish sets the slices to r's, named as the kubelet plugin names them.
func (a *realAllocator) publish(r dra.Resources) {
	pool := r.Pool()
	a.slices = a.slices[:0]
	for i, s := range pool.Slices {
		a.slices = append(a.slices, &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%04x-gpu.nvidia.com-x%d", i, i)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver: apidra.DriverName, NodeName: ptr.To(nodeName),
				Pool:    resourceapi.ResourcePool{Name: nodeName, Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters,
			},
		})
	}
}

// allocate allocates claim name for req and returns its devices' names;
// nil when it does not fit.
func (a *realAllocator) allocate(name string, req resourceapi.ExactDeviceRequest) []string {
	a.t.Helper()
	ctx := context.Background()
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}
	claim.Spec.Devices.Requests = []resourceapi.DeviceRequest{{Name: "r", Exactly: &req}}
	al, err := structured.NewAllocator(ctx, features, a.state, a.classes, a.slices, cel.NewCache(100, cel.Features{EnableConsumableCapacity: true}))
	if err != nil {
		a.t.Fatal(err)
	}
	k8sNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{"kubernetes.io/hostname": nodeName}}}
	res, err := al.Allocate(ctx, k8sNode, []*resourceapi.ResourceClaim{claim})
	if err != nil {
		a.t.Fatalf("claim %s: %v", name, err)
	}
	if len(res) == 0 {
		return nil
	}
	var out []string
	for _, d := range res[0].Devices.Results {
		id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device)
		if d.ShareID != nil {
			a.state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, d.ShareID))
			a.state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, d.ConsumedCapacity))
		} else {
			a.state.AllocatedDevices.Insert(id)
		}
		out = append(out, d.Device)
	}
	a.held[name] = res[0].Devices.Results
	return out
}

// release frees claim name's devices.
func (a *realAllocator) release(name string) {
	for _, d := range a.held[name] {
		id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device)
		if d.ShareID != nil {
			a.state.AllocatedSharedDeviceIDs.Delete(structured.MakeSharedDeviceID(id, d.ShareID))
			a.state.AggregatedCapacity.Remove(structured.NewDeviceConsumedCapacity(id, d.ConsumedCapacity))
		} else {
			a.state.AllocatedDevices.Delete(id)
		}
	}
	delete(a.held, name)
}

// gpuNames names a GPU set's devices as dra.Build does (gpu-<minor>; the
// mock's minors are the indices).
func gpuNames(s cluster.GPUSet) []string {
	var out []string
	for _, g := range s.Indices() {
		out = append(out, fmt.Sprintf("gpu-%d", g))
	}
	return out
}

// TestDRAGPUsAgreeWithAllocator runs a random sequence of claims, and
// releases of earlier ones, on one node of 8 A100-80GB through the real
// allocator and through the placement core (cluster.Feasible, then
// placement.DRAGPUs), and requires the same devices, or no fit in both,
// at every step: whole GPUs (counts 1, 2, 4, 8) without shares, and whole
// GPUs with shares of a GPU (--dra-shares: milliGPU m and 1Mi of memory,
// so that compute alone decides, as in the simulator).
func TestDRAGPUsAgreeWithAllocator(t *testing.T) {
	const profile = "name: n\ngpus:\n  - count: 8\n    productName: NVIDIA A100-SXM4-80GB\n"
	for _, shares := range []bool{false, true} {
		t.Run(fmt.Sprintf("shares=%v", shares), func(t *testing.T) {
			real := newRealAllocator(t, profile, dra.Options{Shares: shares})
			n, err := cluster.NewNode(nodeName, "A100-80GB", 1<<20, 1<<30, 8)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(profile))))
			type bound struct {
				name string
				pod  cluster.Pod
				gpus cluster.GPUSet
			}
			var held []bound
			placed, full := 0, 0
			for step := range 400 {
				if len(held) > 0 && rng.IntN(10) < 3 {
					i := rng.IntN(len(held))
					b := held[i]
					real.release(b.name)
					if err := n.Remove(&b.pod, b.gpus); err != nil {
						t.Fatal(err)
					}
					held = append(held[:i], held[i+1:]...)
					continue
				}
				name := fmt.Sprintf("c%d", step)
				req := resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount}
				pod := cluster.Pod{Name: name, NumGPU: []int{1, 1, 1, 2, 4, 8}[rng.IntN(6)], GPUMilli: cluster.MilliGPU}
				if shares && rng.IntN(2) == 0 {
					pod.NumGPU, pod.GPUMilli = 1, 1+rng.Int64N(999)
					req.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
						apidra.CapacityMilliGPU: *resource.NewQuantity(pod.GPUMilli, resource.DecimalSI),
						apidra.CapacityMemory:   resource.MustParse("1Mi"),
					}}
				}
				req.Count = int64(pod.NumGPU)
				got := real.allocate(name, req)
				var want []string
				var gpus cluster.GPUSet
				if cluster.Feasible(&n, &pod) {
					gpus = placement.DRAGPUs(&n, &pod)
					want = gpuNames(gpus)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("step %d, %d GPUs of %d milli: allocator gave %v, the core's DRA choice %v", step, pod.NumGPU, pod.GPUMilli, got, want)
				}
				if want == nil {
					full++
					continue
				}
				if err := n.Add(&pod, gpus); err != nil {
					t.Fatal(err)
				}
				held = append(held, bound{name, pod, gpus})
				placed++
			}
			// The sequence must exercise both outcomes.
			if placed < 50 || full < 20 {
				t.Errorf("%d claims placed and %d refused: the sequence tests too little", placed, full)
			}
		})
	}
}

// migDevice names what the core chose for a MIG pod as the driver names
// its device: the GPU and, for an instance, the profile and start
// ("gpu-0", "gpu-1 3g.40gb@4").
func migDevice(g int, profile string, start int) string {
	if profile == "" {
		return fmt.Sprintf("gpu-%d", g)
	}
	return fmt.Sprintf("gpu-%d %s@%d", g, profile, start)
}

// TestDynamicMIGAgreesWithAllocator runs a random sequence of claims for
// whole GPUs and MIG instances (1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb,
// 4g.40gb, 7g.80gb), and releases, on a node of 2 A100-80GB in MIG mode
// published with MIG on demand (dra.Options.MIG), through the real
// allocator and through the core (GPUs of cluster.Node.EnableDynamicMIG,
// cluster.Feasible, placement.DRAGPUs), and requires the same GPU,
// profile and start, or no fit in both, at every step (a whole GPU fits
// neither: the driver publishes no whole GPU in MIG mode). A release frees
// the claim of the highest start of its profile on its GPU, which is the
// one the core frees (cluster.MIGGPU.Dynamic).
func TestDynamicMIGAgreesWithAllocator(t *testing.T) {
	testMIGAgreesWithAllocator(t, nil)
}

// TestRankedMIGAgreesWithAllocator is TestDynamicMIGAgreesWithAllocator
// with the driver's ranked order (dra.Options.Rank against a workload of
// 1g.10gb, 2g.20gb × 2, 3g.40gb and 4g.40gb shapes), republished after
// every claim and release with the claims' instances held, as the driver
// does after each prepare and unprepare: the real allocator's first fit
// is then the core's CoreOrder choice (TargetWorkload.RankMIG's first) at
// every step.
func TestRankedMIGAgreesWithAllocator(t *testing.T) {
	var shapes []cluster.Pod
	for _, k := range []int{0, 3, 3, 4, 5} {
		shapes = append(shapes, cluster.Pod{CPUMilli: 1000, NumGPU: 1, GPUMilli: cluster.MIGMilli(k), MIGProfile: int8(k + 1)})
	}
	testMIGAgreesWithAllocator(t, placement.NewTargetWorkload(shapes, 1))
}

// migBound is a claim both sides hold: its pod, GPU and MIG start.
type migBound struct {
	name       string
	pod        cluster.Pod
	gpu, start int
}

// testMIGAgreesWithAllocator runs the sequence; rank nil is the table's
// order (DRAGPUs, the first free start), else the driver's ranking.
func testMIGAgreesWithAllocator(t *testing.T, rank *placement.TargetWorkload) {
	const profile = "name: n\ngpus:\n  - count: 2\n    productName: NVIDIA A100-SXM4-80GB\n    migEnabled: true\n"
	real := newRealAllocator(t, profile, dra.Options{MIG: true, Rank: rank})
	c := cluster.New()
	if _, err := c.AddNode(nodeName, 1<<20, 1<<30, 2, "A100-80GB"); err != nil {
		t.Fatal(err)
	}
	for g := range 2 {
		if err := c.Nodes[0].EnableDynamicMIG(g); err != nil {
			t.Fatal(err)
		}
	}
	pol := placement.WithDRAOrder(placement.FGD{Target: rank}, placement.DRA, placement.CoreOrder, rank)
	var held []migBound
	rng := rand.New(rand.NewPCG(3, 11))
	placed, full := 0, 0
	for step := range 600 {
		if len(held) > 0 && rng.IntN(10) < 3 {
			held = releaseMIG(t, real, c, held, rng)
		} else if b, ok := claimMIG(t, real, c, pol, step, rng); ok {
			held = append(held, b)
			placed++
		} else {
			full++
		}
		if rank != nil {
			real.republish(dra.Options{MIG: true, Rank: rank, Held: heldMIG(real.node, held)})
		}
	}
	t.Logf("%d placed, %d refused", placed, full)
	if placed < 100 || full < 50 {
		t.Errorf("%d claims placed and %d refused: the sequence tests too little", placed, full)
	}
}

// releaseMIG releases, on both sides, the claim of the highest start of a
// random held claim's profile on its GPU, and returns the claims left.
func releaseMIG(t *testing.T, real *realAllocator, c *cluster.Cluster, held []migBound, rng *rand.Rand) []migBound {
	pick := held[rng.IntN(len(held))]
	i := -1
	for j, b := range held {
		if b.gpu == pick.gpu && b.pod.MIGProfile == pick.pod.MIGProfile && (i < 0 || b.start > held[i].start) {
			i = j
		}
	}
	b := held[i]
	real.release(b.name)
	if err := c.Nodes[0].Remove(&b.pod, 1<<uint(b.gpu)); err != nil {
		t.Fatal(err)
	}
	return append(held[:i], held[i+1:]...)
}

// claimMIG makes claim step (a whole GPU or a MIG profile drawn from
// rng) on both sides and fails the test unless they agree; ok is false
// when neither fits it. pol chooses the core's GPU and start when it
// ranks, else DRAGPUs and the first free start.
func claimMIG(t *testing.T, real *realAllocator, c *cluster.Cluster, pol placement.Policy, step int, rng *rand.Rand) (migBound, bool) {
	name := fmt.Sprintf("c%d", step)
	k := []int{-1, 0, 0, 0, 2, 3, 4, 4, 5, 6}[rng.IntN(10)]
	pod := cluster.Pod{Name: name, NumGPU: 1, GPUMilli: cluster.MilliGPU}
	req := resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}
	pname := ""
	if k >= 0 {
		pname = gpu.MIGProfiles("A100-80GB")[k].Name
		pod.MIGProfile, pod.GPUMilli, pod.Resource = int8(k+1), cluster.MIGMilli(k), cluster.ResourceMIG
		req.DeviceClassName = "mig.nvidia.com"
		req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "device.attributes['gpu.nvidia.com'].profile == '" + pname + "'"}}}
	}
	var got, want string
	if d := real.allocate(name, req); d != nil {
		got = parseDevice(t, d[0], pname)
	}
	n := &c.Nodes[0]
	b := migBound{name: name, pod: pod}
	if cluster.Feasible(n, &pod) {
		gs := pol.SelectGPUs(nil, n, &pod, nil)
		if gs.Count() != 1 {
			t.Fatalf("step %d: the core gave GPUs %b", step, uint64(gs))
		}
		b.gpu = gs.Indices()[0]
		var before []int
		if k >= 0 {
			before = n.DynamicMIGStarts(b.gpu, k)
		}
		if err := placement.Allocate(pol, c, 0, &pod, gs); err != nil {
			t.Fatal(err)
		}
		if k >= 0 {
			b.start = newStart(before, n.DynamicMIGStarts(b.gpu, k))
		}
		want = migDevice(b.gpu, pname, b.start)
	}
	if got != want {
		t.Fatalf("step %d, %q: allocator gave %q, the core %q", step, pname, got, want)
	}
	return b, want != ""
}

// heldMIG is dra.Options.Held for the claims held: their MIG instances by
// GPU UUID (the mock's GPU i is n.GPUs[i]).
func heldMIG(n device.Node, held []migBound) map[string][]dra.PreparedMIG {
	out := map[string][]dra.PreparedMIG{}
	for _, b := range held {
		if b.pod.MIGProfile == 0 {
			continue
		}
		uuid := n.GPUs[b.gpu].UUID
		out[uuid] = append(out[uuid], dra.PreparedMIG{GIProfile: gpu.MIGProfiles("A100-80GB")[b.pod.MIGProfile-1].Name, Start: b.start})
	}
	return out
}

// parseDevice turns the driver's device name ("gpu-1",
// "gpu-0-mig-3g40gb-9-4") into migDevice's form for profile pname.
func parseDevice(t *testing.T, d, pname string) string {
	t.Helper()
	var g, start int
	if _, err := fmt.Sscanf(d, "gpu-%d", &g); err != nil {
		t.Fatalf("device %q: %v", d, err)
	}
	if pname != "" {
		if _, err := fmt.Sscanf(d[strings.LastIndex(d, "-")+1:], "%d", &start); err != nil {
			t.Fatalf("device %q: %v", d, err)
		}
	}
	return migDevice(g, pname, start)
}

// newStart returns the start in after that is not in before.
func newStart(before, after []int) int {
	for _, s := range after {
		found := false
		for _, b := range before {
			found = found || b == s
		}
		if !found {
			return s
		}
	}
	return -1
}
