// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	kptr "k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// draSlice is a ResourceSlice of driver gpu.nvidia.com for node n's pool
// as internal/node/dra Build publishes one: whole GPUs gpu-<minor> with
// type and productName, capacity memory; shared ones with
// allowMultipleAllocations and milliGPU.
func draSlice(name, node string, gen int64, shared bool, minors ...int) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: apidra.DriverName, NodeName: kptr.To(node),
			Pool: resourceapi.ResourcePool{Name: node, Generation: gen, ResourceSliceCount: 1},
		},
	}
	for _, m := range minors {
		d := resourceapi.Device{
			Name: fmt.Sprintf("gpu-%d", m),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"type":        {StringValue: kptr.To("gpu")},
				"productName": {StringValue: kptr.To("NVIDIA H100 80GB HBM3")},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
		}
		if shared {
			d.AllowMultipleAllocations = kptr.To(true)
			d.Capacity[apidra.CapacityMilliGPU] = resourceapi.DeviceCapacity{Value: resource.MustParse("1000")}
		}
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	return s
}

func allocated(node string, devices ...string) *structured.AllocatedState {
	st := &structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}
	for _, d := range devices {
		st.AllocatedDevices.Insert(structured.MakeDeviceID(apidra.DriverName, node, d))
	}
	return st
}

// TestDRANodeHealth is issue 21's hand-worked case on the DRA path: 8
// GPUs, gpu-3 tainted (gpu.nvidia.com/xid=79:NoSchedule), claims holding
// gpu-0..2 and gpu-4..6: the one GPU free is gpu-7, and a 1-GPU pod gets
// it by upstream's rule (placement.DRAGPUs, the first free GPU in the
// allocator's order). A slice of an older pool generation and a slice of
// another driver are ignored.
func TestDRANodeHealth(t *testing.T) {
	s := draSlice("n1-gpu.nvidia.com-0", "n1", 2, false, 0, 1, 2, 3, 4, 5, 6, 7)
	s.Spec.Devices[3].Taints = []resourceapi.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: "79", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
	stale := draSlice("n1-gpu.nvidia.com-old", "n1", 1, false, 8, 9)
	other := draSlice("n1-other", "n1", 2, false, 10)
	other.Spec.Driver = "nic.example.com"
	v := buildDRAView([]*resourceapi.ResourceSlice{s, stale, other}, allocated("n1", "gpu-0", "gpu-1", "gpu-2", "gpu-4", "gpu-5", "gpu-6"))
	dn := v["n1"]
	if len(v) != 1 || dn == nil || len(dn.gpus) != 8 {
		t.Fatalf("view %v: want node n1 with 8 GPUs", v)
	}
	st, err := buildNodeWith(nodeInfo(gpuNode("n1", "", 0, "64", "512Gi")), "", noRecord, dn)
	if err != nil {
		t.Fatal(err)
	}
	if !st.dra || st.node.Model != "H100-80GB" || st.unhealthy != 1<<3 {
		t.Errorf("dra %v, model %q, unhealthy %v; want a DRA node of H100-80GB, GPU 3 unhealthy", st.dra, st.node.Model, st.unhealthy.Indices())
	}
	if got := fmt.Sprint(st.node.GPUFree); got != "[0 0 0 0 0 0 0 1000]" {
		t.Errorf("GPU free %s, want [0 0 0 0 0 0 0 1000]", got)
	}
	p := cluster.Pod{Name: "p", NumGPU: 1, GPUMilli: 1000}
	if got := st.devicesOf(placement.DRAGPUs(&st.node, &p)); fmt.Sprint(got) != "[gpu-7]" {
		t.Errorf("a 1-GPU pod gets %v, want [gpu-7]", got)
	}
	two := cluster.Pod{Name: "q", NumGPU: 2, GPUMilli: 1000}
	if ok, _ := cluster.Fits(&st.node, &two); ok {
		t.Error("a 2-GPU pod fits; only gpu-7 is free")
	}
	// The view follows the allocations: gpu-7 taken changes it.
	v2 := buildDRAView([]*resourceapi.ResourceSlice{s}, allocated("n1", "gpu-0", "gpu-1", "gpu-2", "gpu-4", "gpu-5", "gpu-6", "gpu-7"))
	if v2["n1"].equal(dn) {
		t.Error("view unchanged after gpu-7 was allocated")
	}
}

func noRecord(types.UID) (cluster.GPUSet, bool) { return 0, false }

// TestDRANodeShares: on GPUs published shared, claims' consumed milliGPU
// is the GPU's use (300 + 200 on gpu-0: 500 free); a shared GPU
// allocated without a milliGPU request (a whole-GPU claim: the default,
// all) is full. A 600 milli-GPU share then gets gpu-2 by upstream's
// first fit, a 500 one gpu-0. The CPU and memory of the node's pods count, their nvidia.com/gpu
// does not (DRA counts it as its claim).
func TestDRANodeShares(t *testing.T) {
	s := draSlice("n1-0", "n1", 1, true, 0, 1, 2, 3)
	st := allocated("n1")
	id0, id1 := structured.MakeDeviceID(apidra.DriverName, "n1", "gpu-0"), structured.MakeDeviceID(apidra.DriverName, "n1", "gpu-1")
	st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id0, map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("300"), "memory": resource.MustParse("1Mi")}))
	st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id0, map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("200"), "memory": resource.MustParse("1Mi")}))
	st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id1, map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("1000"), "memory": resource.MustParse("80Gi")}))
	dn := buildDRAView([]*resourceapi.ResourceSlice{s}, st)["n1"]
	held := newPod("held", "4", "8Gi", withGPUs(1), onNode("n1"))
	ns, err := buildNodeWith(nodeInfo(gpuNode("n1", "", 0, "64", "512Gi"), held), "", noRecord, dn)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ns.node.GPUFree); got != "[500 0 1000 1000]" || !ns.shares {
		t.Errorf("GPU free %s, shares %v; want [500 0 1000 1000], shared", got, ns.shares)
	}
	if ns.node.CPUFree != 60000 || ns.node.MemoryFree != 512*1024-8*1024 {
		t.Errorf("CPU free %d, memory free %d MiB; want 60000, %d", ns.node.CPUFree, ns.node.MemoryFree, 512*1024-8*1024)
	}
	for milli, want := range map[int64]string{600: "[gpu-2]", 500: "[gpu-0]"} {
		p := cluster.Pod{Name: "p", NumGPU: 1, GPUMilli: milli}
		if got := ns.devicesOf(placement.DRAGPUs(&ns.node, &p)); fmt.Sprint(got) != want {
			t.Errorf("a %d milli-GPU share gets %v, want %s", milli, got, want)
		}
	}
}

// TestModelClaims: the claim shapes the core models, and those it leaves
// to upstream's allocator alone.
func TestModelClaims(t *testing.T) {
	exact := func(f func(r *resourceapi.ExactDeviceRequest)) *resourceapi.ResourceClaimSpec {
		r := &resourceapi.ExactDeviceRequest{DeviceClassName: apidra.GPUDeviceClass}
		f(r)
		return &resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: r}}}}
	}
	capacity := func(milli string) *resourceapi.CapacityRequirements {
		return &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse(milli), "memory": resource.MustParse("1Mi")}}
	}
	mig := func(cel string) *resourceapi.ResourceClaimSpec {
		return exact(func(r *resourceapi.ExactDeviceRequest) {
			r.DeviceClassName = "mig.nvidia.com"
			r.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: cel}}}
		})
	}
	one := func(s *resourceapi.ResourceClaimSpec) []*resourceapi.ResourceClaimSpec {
		return []*resourceapi.ResourceClaimSpec{s}
	}
	for _, tc := range []struct {
		name  string
		specs []*resourceapi.ResourceClaimSpec
		want  draAsk
		ok    bool
	}{
		{name: "one GPU, count defaulted (plain: no capacity)", specs: one(exact(func(*resourceapi.ExactDeviceRequest) {})), want: draAsk{gpus: 1, milli: 1000, plain: true}, ok: true},
		{name: "four GPUs", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.Count = 4 })), want: draAsk{gpus: 4, milli: 1000}, ok: true},
		{name: "a share of 250", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.Capacity = capacity("250") })), want: draAsk{gpus: 1, milli: 250}, ok: true},
		{name: "milliGPU 1000 is whole", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.Capacity = capacity("1000") })), want: draAsk{gpus: 1, milli: 1000}, ok: true},
		{name: "a MIG profile", specs: one(mig("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")), want: draAsk{gpus: 1, milli: 1000, profile: "1g.10gb"}, ok: true},
		{name: "a MIG profile, double quotes", specs: one(mig(`device.attributes["gpu.nvidia.com"].profile == "3g.40gb"`)), want: draAsk{gpus: 1, milli: 1000, profile: "3g.40gb"}, ok: true},
		{name: "MIG, other CEL", specs: one(mig("device.attributes['gpu.nvidia.com'].profile.startsWith('1g')"))},
		{name: "MIG without a selector", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.DeviceClassName = "mig.nvidia.com" }))},
		{name: "two shares", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.Count = 2; r.Capacity = capacity("500") }))},
		{name: "a selector", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) {
			r.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "true"}}}
		}))},
		{name: "another class", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.DeviceClassName = "nic.example.com" }))},
		{name: "all devices", specs: one(exact(func(r *resourceapi.ExactDeviceRequest) { r.AllocationMode = resourceapi.DeviceAllocationModeAll }))},
		{name: "two claims", specs: []*resourceapi.ResourceClaimSpec{exact(func(*resourceapi.ExactDeviceRequest) {}), exact(func(*resourceapi.ExactDeviceRequest) {})}},
		{name: "a constraint", specs: func() []*resourceapi.ResourceClaimSpec {
			s := exact(func(r *resourceapi.ExactDeviceRequest) { r.Count = 2 })
			s.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: kptr.To(resourceapi.FullyQualifiedName("resource.kubernetes.io/pcieRoot"))}}
			return []*resourceapi.ResourceClaimSpec{s}
		}()},
		{name: "prioritized list", specs: one(&resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{{Name: "a", DeviceClassName: apidra.GPUDeviceClass}}}}}})},
		{name: "no claims"},
	} {
		got, ok := modelClaims(tc.specs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %+v, ok %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// migSlices are the slices gpuplane's driver publishes for a node of gpus
// MIG-enabled A100-80GB of MIG on demand (dra.Build with MIG), split as
// the driver splits them (Resources.Pool).
func migSlices(t testing.TB, node string, gpus int) []*resourceapi.ResourceSlice {
	t.Helper()
	n := device.Node{DriverVersion: "550.54.15", CUDADriverMajor: 12, CUDADriverMinor: 4}
	for i := range gpus {
		n.GPUs = append(n.GPUs, device.GPU{Index: i, Minor: i, UUID: fmt.Sprintf("GPU-a100-%d", i), ProductName: "NVIDIA A100-SXM4-80GB",
			Model: "A100-80GB", MemoryMiB: 81920, NUMANode: -1, ComputeMajor: 8, ComputeMinor: 0, MIGEnabled: true})
	}
	r, err := dra.Build(n, dra.Options{MIG: true})
	if err != nil {
		t.Fatal(err)
	}
	pool := r.Pool()
	var out []*resourceapi.ResourceSlice
	for i, s := range pool.Slices {
		out = append(out, &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%04x", node, i)},
			Spec: resourceapi.ResourceSliceSpec{Driver: apidra.DriverName, NodeName: kptr.To(node),
				Pool:    resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters},
		})
	}
	return out
}

// TestDRANodeMIG: an A100-80GB of MIG on demand with a 1g.10gb allocated
// at slot 3 (gpu-0-mig-1g10gb-19-3): a claim of mig.nvidia.com for a
// 3g.40gb (slots 0-3 or 4-7) fits only at start 4, the device
// gpu-0-mig-3g40gb-9-4, which is upstream's first free 3g.40gb too; a
// whole GPU does not fit (its counters are partly consumed); the GPU has
// 1000 - ⌊1000/7⌋ = 858 milli-GPU free. The claim's profile gives the
// models whose MIG table has it at each index: a 3g.40gb is A100-80GB's
// and H100-80GB's (index 4), not A100-40GB's.
func TestDRANodeMIG(t *testing.T) {
	dn := buildDRAView(migSlices(t, "n1", 1), allocated("n1", "gpu-0-mig-1g10gb-19-3"))["n1"]
	if dn == nil || len(dn.gpus) != 1 || !dn.gpus[0].mig || len(dn.gpus[0].migHeld) != 1 {
		t.Fatalf("view %+v: want one MIG GPU with one device held", dn)
	}
	ns, err := buildNodeWith(nodeInfo(gpuNode("n1", "", 0, "64", "512Gi")), "", noRecord, dn)
	if err != nil {
		t.Fatal(err)
	}
	if ns.node.Model != "A100-80GB" || ns.node.GPUFree[0] != 858 {
		t.Fatalf("model %q, GPU free %v; want A100-80GB, [858]", ns.node.Model, ns.node.GPUFree)
	}
	id := func(m string) cluster.ModelSet { i, _ := gpu.ModelID(m); return 1 << uint(i) }
	byIndex := migProfileModels("3g.40gb")
	k, models := 4, byIndex[4]
	if len(byIndex) != 1 || models&id("A100-80GB") == 0 || models&id("H100-80GB") == 0 || models&id("A100-40GB") != 0 {
		t.Errorf("3g.40gb: %v; want index 4 only, of A100-80GB and H100-80GB, not A100-40GB", byIndex)
	}
	// 1g.10gb is A100-80GB's 1-slot profile (index 0) and A100-40GB's
	// 2-slot one (index 2): a pod of it has a variant per index.
	if one := migProfileModels("1g.10gb"); one[0]&id("A100-80GB") == 0 || one[2] != id("A100-40GB") {
		t.Errorf("1g.10gb: %v; want A100-80GB at 0, A100-40GB alone at 2", one)
	}
	p := cluster.Pod{Name: "p", NumGPU: 1, MIGProfile: int8(k + 1), GPUMilli: cluster.MIGMilli(k), Models: models, Resource: cluster.ResourceMIG}
	g := placement.DRAGPUs(&ns.node, &p)
	if g != 1 {
		t.Fatalf("3g.40gb on GPUs %v, want [0]", g.Indices())
	}
	if err := ns.node.Add(&p, g); err != nil {
		t.Fatal(err)
	}
	if starts := ns.node.DynamicMIGStarts(0, k); fmt.Sprint(starts) != "[4]" {
		t.Errorf("3g.40gb at starts %v, want [4] (gpu-0-mig-3g40gb-9-4)", starts)
	}
	whole := cluster.Pod{Name: "w", NumGPU: 1, GPUMilli: 1000}
	if ok, _ := cluster.Fits(&ns.node, &whole); ok {
		t.Error("a whole GPU fits a GPU with MIG devices")
	}
}

// TestDRAFilter: a claim pod only on DRA nodes; a share only on DRA GPUs
// published shared; a MIG instance on DRA GPUs that are not (MIG GPUs
// never are); a pod without GPUs anywhere.
func TestDRAFilter(t *testing.T) {
	dp := &nodeState{}
	whole := &nodeState{dra: true}
	shared := &nodeState{dra: true, shares: true}
	share := cluster.Pod{NumGPU: 1, GPUMilli: 300}
	mig := cluster.Pod{NumGPU: 1, GPUMilli: cluster.MIGMilli(4), MIGProfile: 5, Resource: cluster.ResourceMIG}
	gpus := cluster.Pod{NumGPU: 2, GPUMilli: 1000}
	for _, tc := range []struct {
		name   string
		s      podState
		ns     *nodeState
		refuse bool
	}{
		{"claim pod on a device-plugin node", podState{pod: gpus, claimGPUs: true}, dp, true},
		{"claim pod on a DRA node", podState{pod: gpus, claimGPUs: true}, whole, false},
		{"nvidia.com/gpu pod on a device-plugin node", podState{pod: gpus}, dp, false},
		{"share on unshared DRA GPUs", podState{pod: share, claimGPUs: true}, whole, true},
		{"share on shared DRA GPUs", podState{pod: share, claimGPUs: true}, shared, false},
		{"MIG on unshared DRA GPUs", podState{pod: mig, claimGPUs: true}, whole, false},
		{"no GPUs", podState{claimGPUs: true}, dp, false},
	} {
		if st := draFilter(&tc.s, tc.ns); (st != nil) != tc.refuse {
			t.Errorf("%s: %v, want refused %v", tc.name, st, tc.refuse)
		}
	}
}

// BenchmarkBuildDRAView is the per-cycle cost of reading DRA (PreFilter
// gathers the view once a cycle): 1,000 nodes of 8 MIG-mode A100-80GB,
// every placement published (208 devices a node, dra.Build), 2,000 MIG
// devices allocated; every node built afresh (buildDRAView), and by the
// plugin's cache (draCache.update) when one node's allocation changed
// since the last cycle (a MIG device taken and given back in turn).
func BenchmarkBuildDRAView(b *testing.B) {
	var sl []*resourceapi.ResourceSlice
	st := allocated("")
	for i := range 1000 {
		node := fmt.Sprintf("n%04d", i)
		sl = append(sl, migSlices(b, node, 8)...)
		for g := range 2 {
			st.AllocatedDevices.Insert(structured.MakeDeviceID(apidra.DriverName, node, fmt.Sprintf("gpu-%d-mig-1g10gb-19-0", g)))
		}
	}
	b.Run("full", func(b *testing.B) {
		for range b.N {
			if v := buildDRAView(sl, st); len(v) != 1000 {
				b.Fatalf("%d nodes", len(v))
			}
		}
	})
	b.Run("cache", func(b *testing.B) {
		c := newDRACache()
		c.update(sl, st)
		id := structured.MakeDeviceID(apidra.DriverName, "n0000", "gpu-5-mig-1g10gb-19-0")
		b.ResetTimer()
		for range b.N {
			if st.AllocatedDevices.Has(id) {
				st.AllocatedDevices.Delete(id)
			} else {
				st.AllocatedDevices.Insert(id)
			}
			if ch := c.update(sl, st); len(ch) != 1 || len(c.view) != 1000 {
				b.Fatalf("%d nodes changed of %d", len(ch), len(c.view))
			}
		}
	})
}

// TestMIGClaimPerModel: a pod whose claim (from a template) asks a
// 1g.10gb of mig.nvidia.com is, on an A100-80GB, the 1-slot profile
// (index 0, 142 milli-GPU: 1 of 7 slices, rounded down) and, on an A100-40GB, the
// 2-slot one (index 2, also 1 slice); a T4 has no such profile.
func TestMIGClaimPerModel(t *testing.T) {
	p := newPod("p", "1", "1Gi")
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: kptr.To("t")}}
	// The claim the resourceclaim controller made from template t, owned
	// by p and named in its status.
	p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: kptr.To("p-gpu-x")}}
	made := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "p-gpu-x", Namespace: p.Namespace,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: kptr.To(true)}}},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: "mig.nvidia.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
			Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}},
		}}}}}}
	cs := claimSource{claim: func(ns, name string) (*resourceapi.ResourceClaim, error) {
		if ns != made.Namespace || name != made.Name {
			return nil, fmt.Errorf("no claim %s/%s", ns, name)
		}
		return made, nil
	}}
	// Until the controller names the claim, the pod's demand is unknown.
	unnamed := p.DeepCopy()
	unnamed.Status.ResourceClaimStatuses = nil
	if _, ok := cs.claimSpecs(unnamed); ok {
		t.Error("claim specs read before the claim was made")
	}
	// A claim of that name made for another pod is not this pod's.
	other := p.DeepCopy()
	other.UID = "other"
	if _, ok := cs.claimSpecs(other); ok {
		t.Error("another pod's claim read as this pod's")
	}
	req, err := podRequest(p)
	if err != nil {
		t.Fatal(err)
	}
	migs, plain, ok := cs.addClaimGPUs(p, &req)
	if !ok || plain || len(migs) != 2 || req.MIGProfile != 1 || req.GPUMilli != 142 {
		t.Fatalf("ok %v, %d variants, pod %+v; want 2 variants, profile index 0 (MIGProfile 1), 142 milli-GPU", ok, len(migs), req)
	}
	s := &podState{pod: req, migs: map[int8]migVariant{}}
	for k, v := range migs {
		s.migs[k] = migVariant{pod: v}
	}
	for model, want := range map[string]int8{"A100-80GB": 1, "A100-40GB": 3, "T4": 0} {
		n, err := cluster.NewNode("n", model, 1000, 1000, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, _, ok := s.forNode(&n)
		if ok != (want != 0) || ok && (got.MIGProfile != want || got.GPUMilli != 142) {
			t.Errorf("%s: %+v, ok %v; want MIGProfile %d (0: none)", model, got, ok, want)
		}
	}
}
