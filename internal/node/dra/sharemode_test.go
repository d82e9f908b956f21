// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// NVIDIA's consumable-shares demo claims (sigs.k8s.io/dra-driver-nvidia-gpu,
// commit 95932046, demo/specs/consumable-shares): unlimited-sharing.yaml's
// and integer-sharing.yaml's templates ask one device of class
// gpu.nvidia.com and nothing more; memory-sharing.yaml's asks
// capacity.requests.memory 4Gi. Written here as resource.k8s.io/v1
// DeviceRequests, the shape the templates make.
const (
	nvidiaPlainRequest  = `{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}`
	nvidiaMemory4GiReq  = `{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"memory":"4Gi"}}}}`
	nvidiaSharesTwoReq  = `{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"shares":"2"}}}}`
	a100MemMiB          = 81920 // A100-SXM4-80GB, the mock profile's gpu-1
	a100MemBytes        = a100MemMiB << 20
	nvidiaIntegerShares = 4 // integer-sharing.yaml runs with --consumable-shares=4
)

func TestParseShareMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ShareMode
		err  bool
	}{
		{"memory", ShareMode{}, false},
		{"unlimited", ShareMode{Unlimited: true}, false},
		{" 4 ", ShareMode{Shares: 4}, false},
		{"1000", ShareMode{Shares: 1000}, false},
		{"1001", ShareMode{}, true}, // shares below 1 milli-GPU
		{"0", ShareMode{}, true},
		{"-2", ShareMode{}, true},
		{"disabled", ShareMode{}, true}, // gpuplane: leave --dra-shares off
		{"4x", ShareMode{}, true},
	} {
		got, err := ParseShareMode(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseShareMode(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.err)
		}
	}
	if s := (ShareMode{Shares: 4}).String(); s != "4" {
		t.Errorf("String() = %q", s)
	}
}

// TestBuildShareModes: the capacities of gpu-1 as NVIDIA's
// applyConsumableShares (consumable_shares.go, commit 95932046) writes
// them for modes unlimited and 4: memory 81920Mi, default 0, 0..81920Mi
// in 1Mi steps; in mode 4 also shares 4, default 1, 1..4 step 1; and
// gpuplane's milliGPU 1000, default 1, in both.
func TestBuildShareModes(t *testing.T) {
	_, n := mockNode(t, twoA100)
	for _, m := range []ShareMode{{Unlimited: true}, {Shares: nvidiaIntegerShares}} {
		r, err := Build(n, Options{Shares: true, ShareMode: m})
		if err != nil {
			t.Fatal(err)
		}
		g := byName(r)["gpu-1"]
		if g.AllowMultipleAllocations == nil || !*g.AllowMultipleAllocations {
			t.Fatalf("%s: gpu-1 not shared", m)
		}
		mc := g.Capacity[apidra.CapacityMemory]
		p := mc.RequestPolicy
		if mc.Value.Cmp(mi(a100MemMiB)) != 0 || p == nil || p.Default.Value() != 0 || p.ValidRange.Min.Value() != 0 ||
			p.ValidRange.Max.Cmp(mi(a100MemMiB)) != 0 || p.ValidRange.Step.Cmp(mi(1)) != 0 {
			t.Errorf("%s: memory %+v", m, mc)
		}
		if c := g.Capacity[apidra.CapacityMilliGPU]; c.Value.Value() != 1000 || c.RequestPolicy.Default.Value() != 1 {
			t.Errorf("%s: milliGPU %+v", m, c)
		}
		s, ok := g.Capacity[apidra.CapacityShares]
		if m.Unlimited {
			if ok {
				t.Errorf("unlimited publishes shares %+v", s)
			}
			continue
		}
		p = s.RequestPolicy
		if !ok || s.Value.Value() != 4 || p == nil || p.Default.Value() != 1 || p.ValidRange.Min.Value() != 1 ||
			p.ValidRange.Max.Value() != 4 || p.ValidRange.Step.Value() != 1 {
			t.Errorf("shares %+v", s)
		}
	}
}

// allocateShares allocates claims of request req, one after another, on
// the slices of twoA100 published in mode m (MIG off: gpu-1 alone), with
// the scheduler's own allocator, until one does not fit or max are
// allocated; it returns each allocation's consumed capacity.
func allocateShares(t *testing.T, m ShareMode, req string, max int) []map[resourceapi.QualifiedName]resource.Quantity {
	t.Helper()
	ctx := context.Background()
	_, n := mockNode(t, twoA100)
	r, err := Build(n, Options{Shares: true, ShareMode: m})
	if err != nil {
		t.Fatal(err)
	}
	cls, err := kube.ChartClasses()
	if err != nil {
		t.Fatal(err)
	}
	var dr resourceapi.DeviceRequest
	if err := json.Unmarshal([]byte(req), &dr); err != nil {
		t.Fatal(err)
	}
	// The API server's defaults (k8s.io/api resource/v1
	// ExactDeviceRequest): allocationMode ExactCount, count 1.
	dr.Exactly.AllocationMode, dr.Exactly.Count = resourceapi.DeviceAllocationModeExactCount, 1
	state := structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](), AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}
	k8sNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"kubernetes.io/hostname": node}}}
	features := structured.Features{PartitionableDevices: true, DeviceTaints: true, ConsumableCapacity: true}
	cache := cel.NewCache(100, cel.Features{EnableConsumableCapacity: true})
	var out []map[resourceapi.QualifiedName]resource.Quantity
	for i := 0; i < max; i++ {
		claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("c", i), UID: types.UID(fmt.Sprint("c", i))}}
		claim.Spec.Devices.Requests = []resourceapi.DeviceRequest{dr}
		a, err := structured.NewAllocator(ctx, features, state, cls, poolSlices(r), cache)
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Allocate(ctx, k8sNode, []*resourceapi.ResourceClaim{claim})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 {
			break
		}
		d := res[0].Devices.Results[0]
		if d.Device != "gpu-1" || d.ShareID == nil {
			t.Fatalf("claim %d: %s, share ID %v: not a share of gpu-1", i, d.Device, d.ShareID)
		}
		id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device)
		state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, d.ShareID))
		state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, d.ConsumedCapacity))
		out = append(out, d.ConsumedCapacity)
	}
	return out
}

// TestAllocateShareModes: NVIDIA's demo claims on gpu-1 (81920 MiB)
// through the scheduler's allocator, and the share each holds
// (heldMilli), worked out by hand:
//   - mode 4, integer-sharing.yaml: 4 claims fit (shares default 1 of
//     4), a fifth does not; each holds 1000/4 = 250 milli-GPU;
//   - mode 4, a claim asking shares 2: 2 fit, each 500;
//   - unlimited, unlimited-sharing.yaml: memory defaults to 0 and each
//     holds milliGPU's default 1, the smallest share: 1000 fit (of 1100
//     tried), NVIDIA's would take them all;
//   - memory, memory-sharing.yaml (4Gi each): 81920/4096 = 20 fit, a 21st
//     does not; each holds 4096/81920 = 50 milli-GPU.
func TestAllocateShareModes(t *testing.T) {
	for _, c := range []struct {
		name      string
		mode      ShareMode
		req       string
		try, fits int
		consumed  map[resourceapi.QualifiedName]string
		milli     int64
	}{
		{"integer-sharing", ShareMode{Shares: nvidiaIntegerShares}, nvidiaPlainRequest, 10, 4,
			map[resourceapi.QualifiedName]string{"shares": "1", "memory": "0", "milliGPU": "1"}, 250},
		{"integer, 2 shares", ShareMode{Shares: nvidiaIntegerShares}, nvidiaSharesTwoReq, 10, 2,
			map[resourceapi.QualifiedName]string{"shares": "2", "memory": "0", "milliGPU": "1"}, 500},
		{"unlimited-sharing", ShareMode{Unlimited: true}, nvidiaPlainRequest, 1100, 1000,
			map[resourceapi.QualifiedName]string{"memory": "0", "milliGPU": "1"}, 1},
		{"memory-sharing", ShareMode{}, nvidiaMemory4GiReq, 30, 20,
			map[resourceapi.QualifiedName]string{"memory": "4Gi", "milliGPU": "1"}, 50},
	} {
		got := allocateShares(t, c.mode, c.req, c.try)
		if len(got) != c.fits {
			t.Errorf("%s: %d claims fit, want %d", c.name, len(got), c.fits)
			continue
		}
		cc := got[0]
		if len(cc) != len(c.consumed) {
			t.Errorf("%s: consumed %v, want %v", c.name, cc, c.consumed)
		}
		for k, v := range c.consumed {
			if q, ok := cc[k]; !ok || q.Cmp(resource.MustParse(v)) != 0 {
				t.Errorf("%s: consumed %s = %v, want %s", c.name, k, cc[k], v)
			}
		}
		pd := PreparedDevice{ConsumedCapacity: cc}
		if m := heldMilli(pd, a100MemBytes, c.mode.Shares); m != c.milli {
			t.Errorf("%s: holds %d milli-GPU, want %d", c.name, m, c.milli)
		}
	}
}

// TestPrepareShareModes prepares on the mock backend, through the
// kubelet's DRA API, a claim of integer-sharing.yaml's shape allocated as
// the allocator does in mode 4 (shares 1, memory 0, milliGPU 1): it is a
// share (its own CDI device, GPUPLANE_GPU_SHARE=250, 1/4 of the GPU), and
// ClaimShare prices it at 0.25; in mode unlimited the same claim without
// shares holds 0.001 and GPUPLANE_GPU_SHARE=1.
func TestPrepareShareModes(t *testing.T) {
	for _, c := range []struct {
		mode     ShareMode
		consumed map[resourceapi.QualifiedName]resource.Quantity
		env      string
		share    float64
	}{
		{ShareMode{Shares: nvidiaIntegerShares}, map[resourceapi.QualifiedName]resource.Quantity{
			apidra.CapacityShares: resource.MustParse("1"), apidra.CapacityMemory: resource.MustParse("0"), apidra.CapacityMilliGPU: resource.MustParse("1")},
			"GPUPLANE_GPU_SHARE=250", 0.25},
		{ShareMode{Unlimited: true}, map[resourceapi.QualifiedName]resource.Quantity{
			apidra.CapacityMemory: resource.MustParse("0"), apidra.CapacityMilliGPU: resource.MustParse("1")},
			"GPUPLANE_GPU_SHARE=1", 0.001},
	} {
		b, n := mockNode(t, twoA100)
		k := newKubelet(t)
		k.dirs.Shares, k.dirs.ShareMode = true, c.mode
		d := k.start(b)
		devs, _ := k.slices(2)
		if _, ok := devs["gpu-1"].Capacity[apidra.CapacityShares]; ok != (c.mode.Shares > 0) {
			t.Errorf("%s: shares published %v", c.mode, ok)
		}
		cl := k.claim("a", "gpu-1")
		k.setConsumed(cl, "s-a", c.consumed)
		ids, errStr := k.prepare(cl)
		want := "nvidia.com/gpu=" + n.GPUs[1].UUID + ",gpuplane.io/claim=uid-a-gpu-1"
		if errStr != "" || strings.Join(ids, ",") != want {
			t.Fatalf("%s: prepare: %v %q, want %s", c.mode, ids, errStr, want)
		}
		data, err := os.ReadFile(claimCDISpecPath(k.dirs.CDIDir, cl.UID, "gpu-1"))
		if err != nil {
			t.Fatal(err)
		}
		var spec cdispec.Spec
		if err := json.Unmarshal(data, &spec); err != nil {
			t.Fatal(err)
		}
		if len(spec.Devices) != 1 || strings.Join(spec.Devices[0].ContainerEdits.Env, ",") != c.env {
			t.Errorf("%s: claim spec %s, want env %s", c.mode, data, c.env)
		}
		if s, ok := d.ClaimShare("default", "a", "gpu-1", "s-a"); !ok || s != c.share {
			t.Errorf("%s: ClaimShare = %v, %v; want %v", c.mode, s, ok, c.share)
		}
		k.unprepare(cl)
		d.Stop()
	}
}
