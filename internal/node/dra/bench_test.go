// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// h100x8 is 8 H100-80GB with MIG mode on and no MIG devices: every
// placement published.
const h100x8 = "name: x\ngpus:\n  - count: 8\n    productName: NVIDIA H100 80GB HBM3\n    migEnabled: true\n"

// sliceSizes returns the pool's ResourceSlices as kubeletplugin writes
// them, and their total size as JSON and as protobuf, in bytes.
func sliceSizes(tb testing.TB, r Resources) (slices []*resourceapi.ResourceSlice, jsonBytes, protoBytes int) {
	tb.Helper()
	slices = poolSlices(r)
	for _, s := range slices {
		j, err := json.Marshal(s)
		if err != nil {
			tb.Fatal(err)
		}
		p, err := s.Marshal()
		if err != nil {
			tb.Fatal(err)
		}
		jsonBytes += len(j)
		protoBytes += len(p)
	}
	return slices, jsonBytes, protoBytes
}

// TestH100x8Slices: the counts of proof 7, by hand: an H100-80GB has 25
// MIG placements (1g.10gb and 1g.10gb+me at slots 0..6: 7 each; 1g.20gb
// at 0, 2, 4, 6: 4; 2g.20gb at 0, 2, 4: 3; 3g.40gb at 0, 4: 2; 4g.40gb,
// 7g.80gb at 0: 1 each), no whole GPU in MIG mode: 200 devices for 8; in
// slices of at most 64 devices (they consume counters): 64+64+64+8, and
// the 8 counter sets in one slice of their own: 5 slices.
func TestH100x8Slices(t *testing.T) {
	_, n := mockNode(t, h100x8)
	r, err := Build(n, Options{MIG: true})
	if err != nil {
		t.Fatal(err)
	}
	slices, j, p := sliceSizes(t, r)
	devices, sets := 0, 0
	for _, s := range slices {
		devices += len(s.Spec.Devices)
		sets += len(s.Spec.SharedCounters)
	}
	if devices != 200 || sets != 8 || len(slices) != 5 {
		t.Errorf("%d devices, %d counter sets in %d slices; want 200, 8, 5", devices, sets, len(slices))
	}
	t.Logf("8 H100-80GB, every MIG placement: %d devices, %d slices, %d bytes JSON, %d bytes protobuf", devices, len(slices), j, p)
}

// BenchmarkResourceSlicesH100x8 builds the slices of 8 H100-80GB with
// every MIG placement and reports their size (json-bytes, proto-bytes),
// devices and slices.
func BenchmarkResourceSlicesH100x8(b *testing.B) {
	n := h100x8Node(b)
	var r Resources
	for b.Loop() {
		var err error
		if r, err = Build(n, Options{MIG: true}); err != nil {
			b.Fatal(err)
		}
	}
	slices, j, pb := sliceSizes(b, r)
	b.ReportMetric(float64(j), "json-bytes")
	b.ReportMetric(float64(pb), "proto-bytes")
	b.ReportMetric(float64(len(r.Devices)), "devices")
	b.ReportMetric(float64(len(slices)), "slices")
}

// benchDriver returns a plugin over a mock H100 with MIG mode on (GPU 0)
// and one without (GPU 1), its checkpoint and CDI specs in a temporary
// directory, not started: the kubelet's calls are made directly.
func benchDriver(b *testing.B) *Driver {
	b.Helper()
	p, err := mock.ParseProfile("b.yaml", []byte("name: x\ngpus:\n  - productName: NVIDIA H100 80GB HBM3\n    migEnabled: true\n  - productName: NVIDIA H100 80GB HBM3\n"))
	if err != nil {
		b.Fatal(err)
	}
	be, err := mock.New(p, mock.Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	d, err := New(context.Background(), be, Config{NodeName: node, PluginDir: filepath.Join(dir, "plugin"), CDIDir: filepath.Join(dir, "cdi"), PCIeRoot: fakeRoot})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "cdi"), 0o755); err != nil {
		b.Fatal(err)
	}
	return d
}

// benchPrepare prepares and unprepares a claim of device each iteration.
func benchPrepare(b *testing.B, device string) {
	d := benchDriver(b)
	ctx := context.Background()
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c", UID: "uid-c"}}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "r0", Driver: apidra.DriverName, Pool: node, Device: device},
	}}}
	ref := []kubeletplugin.NamespacedObject{{UID: c.UID}}
	for b.Loop() {
		res, err := d.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{c})
		if err == nil {
			err = res[c.UID].Err
		}
		if err != nil {
			b.Fatal(err)
		}
		un, err := d.UnprepareResourceClaims(ctx, ref)
		if err == nil {
			err = un[c.UID]
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if n := len(d.Prepared()); n != 0 {
		b.Fatalf("%d claims left prepared", n)
	}
}

// BenchmarkPrepareWholeGPU: prepare and unprepare of a whole GPU (CDI
// spec and checkpoint written, each with fsync).
func BenchmarkPrepareWholeGPU(b *testing.B) { benchPrepare(b, "gpu-1") }

// BenchmarkPrepareMIG: prepare and unprepare of a 3g.40gb MIG device at
// slot 4, created and destroyed on the mock backend.
func BenchmarkPrepareMIG(b *testing.B) { benchPrepare(b, "gpu-0-mig-3g40gb-9-4") }

// BenchmarkReorderH100x8: what reorder computes after each prepare and
// unprepare on 8 H100-80GB of MIG on demand, a 3g at GPU 0's slot 4 held:
// every profile's placements ranked against the built-in target
// workload (the node agent's default) and the devices ordered.
func BenchmarkReorderH100x8(b *testing.B) {
	n := h100x8Node(b)
	pods, err := trace.ReadTargetPods("")
	if err != nil {
		b.Fatal(err)
	}
	tw := placement.NewTargetWorkload(pods, placement.DefaultPopularity)
	held := map[string][]PreparedMIG{n.GPUs[0].UUID: {{GIProfile: "3g.40gb", Start: 4}}}
	r, err := Build(n, Options{MIG: true})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		orderMIG(r.Devices, r.Entries, n, rankMIG(tw, n, nil, held))
	}
}

// h100x8Node discovers the mock node of h100x8: 8 H100-80GB in MIG mode.
func h100x8Node(b *testing.B) device.Node {
	b.Helper()
	p, err := mock.ParseProfile("h100x8.yaml", []byte(h100x8))
	if err != nil {
		b.Fatal(err)
	}
	be, err := mock.New(p, mock.Options{})
	if err != nil {
		b.Fatal(err)
	}
	n, err := be.Discover(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return n
}
