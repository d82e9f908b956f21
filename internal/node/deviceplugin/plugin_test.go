// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

func allocate(p *Plugin, ids ...string) (*pluginapi.ContainerAllocateResponse, error) {
	resp, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
	if err != nil {
		return nil, err
	}
	return resp.ContainerResponses[0], nil
}

func TestAllocate(t *testing.T) {
	n := testNode(t, "dgx1-v100")
	u := gpuIDs(&n, 0, 1, 2, 3, 4, 5, 6, 7)

	p := testPlugin(t, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	r, err := allocate(p, u[3], u[5])
	if err != nil {
		t.Fatal(err)
	}
	want := &pluginapi.ContainerAllocateResponse{Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": u[3] + "," + u[5]}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("envvar: %v, want %v", r, want)
	}

	c := testConfig(t, "flags: {plugin: {passDeviceSpecs: true}}")
	p = testPlugin(t, &n, c, "nvidia.com/gpu")
	r, err = allocate(p, u[6])
	if err != nil {
		t.Fatal(err)
	}
	want = &pluginapi.ContainerAllocateResponse{
		Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": u[6]},
		Devices: []*pluginapi.DeviceSpec{
			{ContainerPath: "/dev/nvidiactl", HostPath: "/dev/nvidiactl", Permissions: "rw"},
			{ContainerPath: "/dev/nvidia-uvm", HostPath: "/dev/nvidia-uvm", Permissions: "rw"},
			{ContainerPath: "/dev/nvidia-uvm-tools", HostPath: "/dev/nvidia-uvm-tools", Permissions: "rw"},
			{ContainerPath: "/dev/nvidia6", HostPath: "/dev/nvidia6", Permissions: "rw"},
		},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("passDeviceSpecs: %v, want %v", r, want)
	}
}

func TestAllocateReplicasAndMIG(t *testing.T) {
	n := testNode(t, "dgx-a100-80gb-mig")
	c := testConfig(t, "flags: {migStrategy: mixed}\nsharing: {timeSlicing: {failRequestsGreaterThanOne: true, resources: [{name: nvidia.com/gpu, replicas: 2}]}}")
	p := testPlugin(t, &n, c, "nvidia.com/gpu")
	g6 := n.GPUs[6].UUID
	r, err := allocate(p, g6+"::1")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Envs["NVIDIA_VISIBLE_DEVICES"]; got != g6 {
		t.Errorf("replica: NVIDIA_VISIBLE_DEVICES=%s, want %s", got, g6)
	}
	if _, err := allocate(p, g6+"::0", g6+"::1"); err == nil || !strings.Contains(err.Error(), "request for 2 replicas refused") {
		t.Errorf("two replicas: %v", err)
	}
	m := testPlugin(t, &n, c, "nvidia.com/mig-3g.40gb")
	mig := n.GPUs[5].MIG[0].UUID
	r, err = allocate(m, mig)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Envs["NVIDIA_VISIBLE_DEVICES"]; got != mig {
		t.Errorf("MIG: NVIDIA_VISIBLE_DEVICES=%s, want %s", got, mig)
	}
}

func TestAllocateMilli(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	c := testConfig(t, "gpuplane: {milliGPU: true}\nflags: {plugin: {passDeviceSpecs: true}}")
	p := testPlugin(t, &n, c, "gpuplane.io/gpu-milli")
	units := func(g, from, to int) []string {
		var out []string
		for k := from; k < to; k++ {
			out = append(out, fmt.Sprintf("%s::m%d", n.GPUs[g].UUID, k))
		}
		return out
	}
	// 300 units of GPU 2: that GPU, and the share in milli-GPU.
	r, err := allocate(p, units(2, 100, 400)...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Envs["NVIDIA_VISIBLE_DEVICES"] != n.GPUs[2].UUID || r.Envs["GPUPLANE_GPU_SHARE"] != "300" || len(r.Devices) != 4 || r.Devices[3].HostPath != "/dev/nvidia2" {
		t.Errorf("300 units of GPU 2: %v", r)
	}
	if _, err := allocate(p, append(units(0, 0, 10), units(1, 0, 10)...)...); err == nil || !strings.Contains(err.Error(), "the 20 milli-GPU units span 2 GPUs") {
		t.Errorf("units of two GPUs: %v", err)
	}
	// All 1000 units of one GPU: that GPU, and the share.
	p = testPlugin(t, &n, testConfig(t, "gpuplane: {milliGPU: true}"), "gpuplane.io/gpu-milli")
	if r, err = allocate(p, units(3, 0, 1000)...); err != nil || len(r.Envs) != 2 || r.Envs["GPUPLANE_GPU_SHARE"] != "1000" || r.Envs["NVIDIA_VISIBLE_DEVICES"] != n.GPUs[3].UUID {
		t.Errorf("all of GPU 3: %v, %v", r, err)
	}
}

func TestAllocateRefuses(t *testing.T) {
	n := testNode(t, "dgx1-v100")
	p := testPlugin(t, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	u := gpuIDs(&n, 0, 1)
	if _, err := allocate(p, u[0], "GPU-unknown"); err == nil || !strings.Contains(err.Error(), `unknown device ID "GPU-unknown"`) {
		t.Errorf("unknown: %v", err)
	}
	p.health.Apply(device.HealthEvent{UUID: u[1], Kind: device.HealthXID, XID: 79})
	if _, err := allocate(p, u[1]); err == nil || !strings.Contains(err.Error(), "is unhealthy") {
		t.Errorf("unhealthy: %v", err)
	}
	p.health.Apply(device.HealthEvent{UUID: u[1], Kind: device.HealthRecovered})
	if _, err := allocate(p, u[1]); err != nil {
		t.Errorf("recovered: %v", err)
	}
}

func TestHealth(t *testing.T) {
	// The policy itself is internal/node/health's (tested there); here: the
	// wake-ups and a MIG device unhealthy with its GPU.
	n := device.Node{GPUs: []device.GPU{{UUID: "GPU-a", MIG: []device.MIGDevice{{UUID: "MIG-x"}}}, {UUID: "GPU-b"}}}
	h := NewHealth(n, configv1.DefaultIgnoredXIDs)
	wake, cancel := h.Subscribe()
	defer cancel()
	if h.Apply(device.HealthEvent{UUID: "GPU-a", Kind: device.HealthXID, XID: 13}) {
		t.Error("XID 13 (application error) changed health")
	}
	select {
	case <-wake:
		t.Error("wake-up without a change")
	default:
	}
	if !h.Apply(device.HealthEvent{UUID: "GPU-a", Kind: device.HealthXID, XID: 79}) || h.Healthy("GPU-a") {
		t.Error("XID 79 did not make the GPU unhealthy")
	}
	select {
	case <-wake:
	default:
		t.Error("no wake-up")
	}
	if h.Apply(device.HealthEvent{UUID: "GPU-a", Kind: device.HealthLost}) {
		t.Error("lost after XID counted as a change")
	}
	// A MIG device is unhealthy with its parent.
	if h.Healthy("MIG-x") || !h.Healthy("GPU-b") {
		t.Error("parent health not inherited")
	}
	if !h.Apply(device.HealthEvent{UUID: "GPU-a", Kind: device.HealthRecovered}) || !h.Healthy("GPU-a") || !h.Healthy("MIG-x") {
		t.Error("recovery not applied")
	}
}

// fakeBackend serves a fixed node and forwards events from a channel.
type fakeBackend struct {
	node   device.Node
	events chan device.HealthEvent
}

func (f *fakeBackend) Discover(context.Context) (device.Node, error) { return f.node, nil }
func (f *fakeBackend) Sample(context.Context) ([]device.Sample, error) {
	return nil, nil
}
func (f *fakeBackend) Close() error { return nil }
func (f *fakeBackend) WatchHealth(ctx context.Context, ch chan<- device.HealthEvent) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-f.events:
			ch <- ev
		}
	}
}

func TestListAndWatchUnhealthy(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	p := testPlugin(t, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	c := dialPlugin(t, p.Socket())
	stream, err := c.ListAndWatch(context.Background(), &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Devices) != 4 || first.Devices[2].Health != pluginapi.Healthy || first.Devices[2].Topology.Nodes[0].ID != 1 {
		t.Fatalf("first list: %v", first.Devices)
	}
	p.health.Apply(device.HealthEvent{UUID: n.GPUs[2].UUID, Kind: device.HealthXID, XID: 48})
	got := make(chan *pluginapi.ListAndWatchResponse, 1)
	go func() {
		r, _ := stream.Recv()
		got <- r
	}()
	select {
	case r := <-got:
		if r == nil || r.Devices[2].Health != pluginapi.Unhealthy || r.Devices[1].Health != pluginapi.Healthy {
			t.Fatalf("update: %v", r)
		}
	case <-time.After(30 * time.Second):
		// A generous bound, not a timing assertion: BenchmarkHealthToListAndWatch measures the latency.
		t.Fatal("no ListAndWatch update")
	}
}
