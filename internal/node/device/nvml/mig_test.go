// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package nvml

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuplane/gpuplane/internal/node/device"
)

// nvmlRules adds to go-nvml's mock device the rules of NVML its mock
// leaves out: a GPU instance overlapping a live one is refused with
// ERROR_INSUFFICIENT_RESOURCES, and one that still has compute instances
// cannot be destroyed (ERROR_IN_USE), and a GPU instance's compute
// instances are looked up by ID. failCI makes compute instance
// creation fail while it is true.
func nvmlRules(d *server.Device, failCI *bool) {
	create := d.CreateGpuInstanceWithPlacementFunc
	d.CreateGpuInstanceWithPlacementFunc = func(info *nvml.GpuInstanceProfileInfo, p *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
		d.RLock()
		for gi := range d.GpuInstances {
			q := gi.Info.Placement
			if p.Start < q.Start+q.Size && q.Start < p.Start+p.Size {
				d.RUnlock()
				return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
			}
		}
		d.RUnlock()
		created, ret := create(info, p)
		if ret != nvml.SUCCESS {
			return nil, ret
		}
		gi := created.(*server.GpuInstance)
		// What go-nvlib's MigDevice.GetProfile asks (Discover).
		gi.GetComputeInstanceByIdFunc = func(id int) (nvml.ComputeInstance, nvml.Return) {
			for ci := range gi.ComputeInstances {
				if int(ci.Info.Id) == id {
					return ci, nvml.SUCCESS
				}
			}
			return nil, nvml.ERROR_NOT_FOUND
		}
		destroy, ci := gi.DestroyFunc, gi.CreateComputeInstanceFunc
		gi.DestroyFunc = func() nvml.Return {
			gi.RLock()
			n := len(gi.ComputeInstances)
			gi.RUnlock()
			if n > 0 {
				return nvml.ERROR_IN_USE
			}
			return destroy()
		}
		gi.CreateComputeInstanceFunc = func(info *nvml.ComputeInstanceProfileInfo) (nvml.ComputeInstance, nvml.Return) {
			if *failCI {
				return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
			}
			return ci(info)
		}
		return gi, nvml.SUCCESS
	}
}

func migString(in device.MIGInstance) string {
	return fmt.Sprintf("%s %s gi%d ci%d %dMiB %dSM %s@%d+%d", in.UUID, in.Profile, in.GPUInstanceID, in.ComputeInstanceID, in.MemoryMiB, in.Multiprocessors, in.GIProfile, in.Placement.Start, in.Placement.Size)
}

func liveMIG(t *testing.T, b *Backend, uuid string) string {
	t.Helper()
	ins, err := b.MIGInstances(context.Background(), uuid)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ins {
		out = append(out, migString(in))
	}
	return strings.Join(out, ", ")
}

// TestMIGManager creates and destroys MIG devices on GPU 2 of the mock DGX
// A100 (A100-SXM4-40GB, MIG mode on, no instances). By hand, from go-nvml's
// A100-40GB profiles (mock/gpus/a100.go): 3g.20gb is NVML's 3-slice GPU
// instance profile, 19968 MiB, its spanning compute instance 42 SMs,
// placements at memory slots 0 and 4 of size 4; 1g.5gb the 1-slice one,
// 4864 MiB, 14 SMs, at 0..6 of size 1. The mock numbers GPU instances from
// 0 and compute instances from 0 in each; the test's MIG device handles
// are named MIG-<GPU>-<GI>-<CI>.
func TestMIGManager(t *testing.T) {
	m := newMachine(t)
	d2 := m.Devices[2].(*server.Device)
	d2.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	failCI := false
	nvmlRules(d2, &failCI)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g2, g3 := d2.UUID, m.Devices[3].(*server.Device).UUID
	a, err := b.CreateMIG(ctx, g2, "3g.20gb", 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := migString(a), "MIG-00000002-0-0 3g.20gb gi0 ci0 19968MiB 42SM 3g.20gb@4+4"; got != want {
		t.Errorf("created %s, want %s", got, want)
	}
	if _, err := b.CreateMIG(ctx, g2, "1g.5gb", 1); err != nil {
		t.Fatal(err)
	}
	want := "MIG-00000002-0-0 3g.20gb gi0 ci0 19968MiB 42SM 3g.20gb@4+4, MIG-00000002-1-0 1g.5gb gi1 ci0 4864MiB 14SM 1g.5gb@1+1"
	if got := liveMIG(t, b, g2); got != want {
		t.Errorf("live:\n got %s\nwant %s", got, want)
	}
	n, err := b.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := n.GPUs[2]; !g.MIGEnabled || len(g.MIG) != 2 || g.MIG[0].UUID != a.UUID || g.MIG[1].Profile != "1g.5gb" {
		t.Errorf("discovered GPU 2 MIG devices %+v", g.MIG)
	}

	for _, tc := range []struct {
		gpu, profile string
		start        int
		err          string
	}{
		{g2, "3g.20gb", 2, "nvml: GPU " + g2 + ": 3g.20gb at memory slot 2: not a placement of the profile (NVML's starts: [0 4])"},
		{g2, "3g.20gb", 0, "nvml: GPU " + g2 + ": 3g.20gb at memory slot 0: creating the GPU instance: " + nvml.ERROR_INSUFFICIENT_RESOURCES.Error()},
		{g2, "2g.20gb", 0, "nvml: GPU " + g2 + ` ("A100-40GB") has no MIG profile "2g.20gb"`},
		{g3, "1g.5gb", 0, "nvml: GPU " + g3 + ": MIG mode is disabled"},
	} {
		if _, err := b.CreateMIG(ctx, tc.gpu, tc.profile, tc.start); err == nil || err.Error() != tc.err {
			t.Errorf("CreateMIG(%s, %s, %d):\n got %v\nwant %s", tc.gpu, tc.profile, tc.start, err, tc.err)
		}
	}
	// A compute instance NVML refuses: the GPU instance made for it is
	// destroyed again.
	failCI = true
	if _, err := b.CreateMIG(ctx, g2, "1g.5gb", 2); err == nil || !strings.Contains(err.Error(), "creating the compute instance") {
		t.Errorf("CreateMIG with the compute instance refused: %v", err)
	}
	failCI = false
	if got := liveMIG(t, b, g2); got != want || len(d2.GpuInstances) != 2 {
		t.Errorf("after a refused compute instance: %d GPU instances, live %s", len(d2.GpuInstances), got)
	}

	// Destroy: compute instance first (else ERROR_IN_USE), then the GPU
	// instance; a second time is device.ErrNotFound.
	// By GPU instance 1 with GPU instance 0's UUID: nothing destroyed.
	if err := b.DestroyMIG(ctx, g2, 1, a.UUID); !errors.Is(err, device.ErrNotOwned) || !strings.Contains(err.Error(), "GPU instance 1 holds MIG devices [MIG-00000002-1-0], not "+a.UUID) {
		t.Errorf("destroying gi1 by gi0's UUID: %v, want ErrNotOwned", err)
	}
	if got := liveMIG(t, b, g2); got != want {
		t.Errorf("after a refused destroy:\n got %s\nwant %s", got, want)
	}
	if err := b.DestroyMIG(ctx, g2, 1, "MIG-00000002-1-0"); err != nil {
		t.Fatal(err)
	}
	if got := liveMIG(t, b, g2); got != "MIG-00000002-0-0 3g.20gb gi0 ci0 19968MiB 42SM 3g.20gb@4+4" {
		t.Errorf("after destroying gi1: %s", got)
	}
	if err := b.DestroyMIG(ctx, g2, 1, "MIG-00000002-1-0"); !errors.Is(err, device.ErrNotFound) {
		t.Errorf("destroying gi1 again: %v, want ErrNotFound", err)
	}
	if err := b.DestroyMIG(ctx, g3, 0, "MIG-x"); !errors.Is(err, device.ErrNotFound) {
		t.Errorf("destroying on a GPU without MIG mode: %v, want ErrNotFound", err)
	}
	if ins, err := b.MIGInstances(ctx, g3); err != nil || len(ins) != 0 {
		t.Errorf("MIG devices of a GPU without MIG mode: %v, %v", ins, err)
	}
	if _, err := b.MIGInstances(ctx, "GPU-none"); err == nil {
		t.Error("MIGInstances of an unknown GPU: no error")
	}
}

// TestMIGInstancesHalfMade: a GPU instance without a compute instance
// (made here straight through NVML, as a crash between the two creations
// or nvidia-smi mig -cgi without -C leaves it) is listed, with no UUID
// and NoComputeInstance, so that the DRA plugin keeps its placement
// unpublished; Discover lists no MIG device for it. By hand, from
// go-nvml's A100-40GB profiles: the 1-slice GPU instance profile, 4864
// MiB, at slot 3 of size 1; go-nvml's mock numbers it GPU instance 0.
func TestMIGInstancesHalfMade(t *testing.T) {
	m := newMachine(t)
	d2 := m.Devices[2].(*server.Device)
	d2.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	b, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	info, ret := d2.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	if _, ret := d2.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: 3, Size: 1}); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	ins, err := b.MIGInstances(context.Background(), d2.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || !ins[0].NoComputeInstance || migString(ins[0]) != "  gi0 ci0 4864MiB 0SM 1g.5gb@3+1" {
		t.Errorf("MIGInstances: %+v, want the GPU instance 1g.5gb@3+1 without a compute instance", ins)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(n.GPUs[2].MIG); got != 0 {
		t.Errorf("Discover: %d MIG devices on GPU 2, want none", got)
	}
	if err := b.DestroyMIG(context.Background(), d2.UUID, 0, ""); !errors.Is(err, device.ErrNotOwned) {
		t.Errorf("DestroyMIG of it: %v, want ErrNotOwned (it is nobody's)", err)
	}
}
