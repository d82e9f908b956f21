// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"io"
	"testing"

	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
)

// benchPlugin starts the nvidia.com/gpu server of a mock profile on a unix
// socket and returns it with a gRPC client.
func benchPlugin(b *testing.B, profile string) (*device.Node, *Plugin, pluginapi.DevicePluginClient) {
	n := testNode(b, profile)
	res, err := BuildResources(n, configv1.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	p := NewPlugin(&n, &res[0], configv1.DefaultConfig(), NewHealth(n, configv1.DefaultIgnoredXIDs), shortDir(b))
	if err := p.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Stop)
	return &n, p, dialPlugin(b, p.Socket())
}

// BenchmarkAllocate is one Allocate round trip over gRPC on a unix socket.
func BenchmarkAllocate(b *testing.B) {
	for _, size := range []int{1, 8} {
		b.Run(map[int]string{1: "1GPU", 8: "8GPUs"}[size], func(b *testing.B) {
			n, _, c := benchPlugin(b, "dgx-h100")
			var ids []string
			for i := 0; i < size; i++ {
				ids = append(ids, n.GPUs[i].UUID)
			}
			req := &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Allocate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetPreferredAllocation is one GetPreferredAllocation round trip
// over gRPC on the DGX-1V cube mesh: 8 of 8 GPUs and 4 of 8 (the search
// over all 70 sets of 4).
func BenchmarkGetPreferredAllocation(b *testing.B) {
	for _, size := range []int32{8, 4} {
		b.Run(map[int32]string{8: "8of8", 4: "4of8"}[size], func(b *testing.B) {
			n, _, c := benchPlugin(b, "dgx1-v100")
			var all []string
			for _, g := range n.GPUs {
				all = append(all, g.UUID)
			}
			req := &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{AvailableDeviceIDs: all, AllocationSize: size}}}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.GetPreferredAllocation(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPreferred is the selection alone, without gRPC.
func BenchmarkPreferred(b *testing.B) {
	n := testNode(b, "dgx1-v100")
	p := testPlugin(b, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	var all []string
	for _, g := range n.GPUs {
		all = append(all, g.UUID)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Preferred(&n, p.res, p.byID, all, nil, 4, configv1.ReplicaSpread); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHealthToListAndWatch is the time from a health event (an XID,
// then a recovery, alternately) to the kubelet receiving the updated
// ListAndWatch list over gRPC.
func BenchmarkHealthToListAndWatch(b *testing.B) {
	n, p, c := benchPlugin(b, "dgx-h100")
	stream, err := c.ListAndWatch(context.Background(), &pluginapi.Empty{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		b.Fatal(err)
	}
	uuid := n.GPUs[3].UUID
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := device.HealthEvent{UUID: uuid, Kind: device.HealthXID, XID: 79}
		want := pluginapi.Unhealthy
		if i%2 == 1 {
			ev, want = device.HealthEvent{UUID: uuid, Kind: device.HealthRecovered}, pluginapi.Healthy
		}
		p.health.Apply(ev)
		r, err := stream.Recv()
		if err != nil {
			b.Fatal(err)
		}
		if r.Devices[3].Health != want {
			b.Fatalf("device 3 is %s, want %s", r.Devices[3].Health, want)
		}
	}
}

// BenchmarkBackendHealthToListAndWatch is the whole path of a health event
// in the agent: backend WatchHealth -> Manager -> Health -> ListAndWatch
// stream -> kubelet, over gRPC on unix sockets, alternating an XID and a
// recovery on one GPU.
func BenchmarkBackendHealthToListAndWatch(b *testing.B) {
	// The manager logs every health change; keep the figures readable.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	defer klog.LogToStderr(true)
	dir := shortDir(b)
	k, err := kubelettest.Start(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Stop()
	fb := &fakeBackend{node: testNode(b, "dgx-h100"), events: make(chan device.HealthEvent)}
	m, err := NewManager(context.Background(), fb, configv1.DefaultConfig(), dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	if _, err := k.Plugin(ctx, "nvidia.com/gpu"); err != nil {
		b.Fatal(err)
	}
	c := dialPlugin(b, m.Plugins()[0].Socket())
	stream, err := c.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		b.Fatal(err)
	}
	uuid := fb.node.GPUs[3].UUID
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev, want := device.HealthEvent{UUID: uuid, Kind: device.HealthXID, XID: 79}, pluginapi.Unhealthy
		if i%2 == 1 {
			ev, want = device.HealthEvent{UUID: uuid, Kind: device.HealthRecovered}, pluginapi.Healthy
		}
		fb.events <- ev
		r, err := stream.Recv()
		if err != nil {
			b.Fatal(err)
		}
		if r.Devices[3].Health != want {
			b.Fatalf("device 3 is %s, want %s", r.Devices[3].Health, want)
		}
	}
}
