// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package nvml

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

var _ device.MIGManager = (*Backend)(nil)

// The MIG manager creates and destroys MIG devices (a GPU instance with one
// compute instance spanning it) on GPUs whose MIG mode is already on, in
// the call sequence of NVIDIA's DRA driver (sigs.k8s.io/dra-driver-nvidia-gpu,
// cmd/gpu-kubelet-plugin/nvlib.go: createMigDevice, deleteMigDevice):
// nvmlDeviceGetGpuInstanceProfileInfo, nvmlDeviceCreateGpuInstanceWithPlacement,
// nvmlGpuInstanceGetComputeInstanceProfileInfo,
// nvmlGpuInstanceCreateComputeInstance; destroy the compute instances, then
// the GPU instance. Unlike NVIDIA's driver it never changes MIG mode.

// migGPU is a GPU the MIG manager works on.
type migGPU struct {
	uuid   string
	d      nvml.Device
	model  string // internal/gpu catalog name; "" when unknown
	memMiB int64
}

// migHandle returns the GPU uuid and whether its MIG mode is on.
func (b *Backend) migHandle(uuid string) (migGPU, bool, error) {
	g := migGPU{uuid: uuid}
	d, ret := b.lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return g, false, nvErr("GPU "+uuid, ret)
	}
	g.d = d
	cur, _, ret := d.GetMigMode()
	if ret == nvml.ERROR_NOT_SUPPORTED {
		return g, false, nil
	}
	if ret != nvml.SUCCESS {
		return g, false, nvErr("GPU "+uuid+" MIG mode", ret)
	}
	if name, ret := d.GetName(); ret == nvml.SUCCESS {
		if m, ok := b.cat.FromProductName(name); ok {
			g.model = m.Name
		}
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return g, false, nvErr("GPU "+uuid+" memory", ret)
	}
	g.memMiB = int64(mem.Total >> 20)
	return g, cur == nvml.DEVICE_MIG_ENABLE, nil
}

var _ device.MIGOfferer = (*Backend)(nil)

// MIGOffer returns the placements' starts the GPU lists for each GPU
// instance profile it supports (nvmlDeviceGetGpuInstanceProfileInfo,
// nvmlDeviceGetGpuInstancePossiblePlacements); nil for a GPU without
// MIG mode.
func (b *Backend) MIGOffer(ctx context.Context, gpuUUID string) (device.MIGOffer, error) {
	b.migMu.Lock()
	defer b.migMu.Unlock()
	g, on, err := b.migHandle(gpuUUID)
	if err != nil || !on {
		return nil, err
	}
	infos, err := g.giProfiles()
	if err != nil {
		return nil, err
	}
	out := device.MIGOffer{}
	for p, info := range infos {
		places, ret := g.d.GetGpuInstancePossiblePlacements(&info)
		if ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("GPU %s: placements of GPU instance profile %d", gpuUUID, p), ret)
		}
		starts := make([]int, len(places))
		for i, pl := range places {
			starts[i] = int(pl.Start)
		}
		out[p] = starts
	}
	return out, nil
}

// giProfiles returns the GPU instance profiles g supports, by NVML's
// constant (nvmlDeviceGetGpuInstanceProfileInfo of each: one answering
// NOT_SUPPORTED or INVALID_ARGUMENT is left out).
func (g migGPU) giProfiles() (map[int]nvml.GpuInstanceProfileInfo, error) {
	out := map[int]nvml.GpuInstanceProfileInfo{}
	for p := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := g.d.GetGpuInstanceProfileInfo(p)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("GPU %s: GPU instance profile %d", g.uuid, p), ret)
		}
		out[p] = info
	}
	return out, nil
}

// CreateMIG creates a GPU instance of the internal/gpu MIG table's profile
// giProfile (e.g. "3g.40gb") at the placement NVML lists for it that starts
// at memory slot start, with one compute instance spanning it. It fails
// on a GPU without MIG mode, for a start NVML does not list, and when NVML
// refuses (an overlapping instance: ERROR_INSUFFICIENT_RESOURCES); a GPU
// instance whose compute instance cannot be made is destroyed again.
func (b *Backend) CreateMIG(ctx context.Context, gpuUUID, giProfile string, start int) (device.MIGInstance, error) {
	b.migMu.Lock()
	defer b.migMu.Unlock()
	g, on, err := b.migHandle(gpuUUID)
	if err != nil {
		return device.MIGInstance{}, err
	}
	if !on {
		return device.MIGInstance{}, fmt.Errorf("nvml: GPU %s: MIG mode is disabled", gpuUUID)
	}
	mp, ok := gpu.LookupMIGProfile(g.model, giProfile)
	if !ok {
		return device.MIGInstance{}, fmt.Errorf("nvml: GPU %s (%q) has no MIG profile %q", gpuUUID, g.model, giProfile)
	}
	what := fmt.Sprintf("GPU %s: %s at memory slot %d", gpuUUID, giProfile, start)
	info, ret := g.d.GetGpuInstanceProfileInfo(mp.GIProfileID)
	if ret != nvml.SUCCESS {
		return device.MIGInstance{}, nvErr(what+": GPU instance profile", ret)
	}
	places, ret := g.d.GetGpuInstancePossiblePlacements(&info)
	if ret != nvml.SUCCESS {
		return device.MIGInstance{}, nvErr(what+": placements", ret)
	}
	i := slices.IndexFunc(places, func(p nvml.GpuInstancePlacement) bool { return int(p.Start) == start })
	if i < 0 {
		starts := make([]int, len(places))
		for k, p := range places {
			starts[k] = int(p.Start)
		}
		return device.MIGInstance{}, fmt.Errorf("nvml: %s: not a placement of the profile (NVML's starts: %v)", what, starts)
	}
	name, err := device.MIGProfileName(mp.GIProfileID, device.CIProfiles[mp.ComputeSlices], int64(info.MemorySizeMB), g.memMiB)
	if err != nil {
		return device.MIGInstance{}, fmt.Errorf("nvml: %s: %w", what, err)
	}
	pl := places[i]
	gi, ret := g.d.CreateGpuInstanceWithPlacement(&info, &pl)
	if ret != nvml.SUCCESS {
		return device.MIGInstance{}, nvErr(what+": creating the GPU instance", ret)
	}
	in, err := b.computeInstance(g, gi, mp, what)
	if err != nil {
		if ret := gi.Destroy(); ret != nvml.SUCCESS {
			err = errors.Join(err, nvErr(what+": destroying the GPU instance again", ret))
		}
		return device.MIGInstance{}, err
	}
	in.GIProfile, in.Placement = giProfile, device.MIGPlacement{Start: int(pl.Start), Size: int(pl.Size)}
	in.Profile, in.MemoryMiB = name, int64(info.MemorySizeMB)
	return in, nil
}

// computeInstance creates the compute instance spanning gi and returns its
// MIG device's UUID, IDs and SMs; on error after creating it, it destroys
// it again.
func (b *Backend) computeInstance(g migGPU, gi nvml.GpuInstance, mp gpu.MIGProfile, what string) (device.MIGInstance, error) {
	giInfo, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		return device.MIGInstance{}, nvErr(what+": GPU instance info", ret)
	}
	ciProfile := device.CIProfiles[mp.ComputeSlices]
	ciInfo, ret := gi.GetComputeInstanceProfileInfo(ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		return device.MIGInstance{}, nvErr(what+": compute instance profile", ret)
	}
	ci, ret := gi.CreateComputeInstance(&ciInfo)
	if ret != nvml.SUCCESS {
		return device.MIGInstance{}, nvErr(what+": creating the compute instance", ret)
	}
	in, err := func() (device.MIGInstance, error) {
		cii, ret := ci.GetInfo()
		if ret != nvml.SUCCESS {
			return device.MIGInstance{}, nvErr(what+": compute instance info", ret)
		}
		uuids, err := b.migUUIDs(g.d)
		if err != nil {
			return device.MIGInstance{}, err
		}
		uuid, ok := uuids[[2]int{int(giInfo.Id), int(cii.Id)}]
		if !ok {
			return device.MIGInstance{}, fmt.Errorf("nvml: %s: no MIG device handle of GPU instance %d, compute instance %d", what, giInfo.Id, cii.Id)
		}
		return device.MIGInstance{MIGDevice: device.MIGDevice{UUID: uuid, GPUInstanceID: int(giInfo.Id),
			ComputeInstanceID: int(cii.Id), Multiprocessors: int(ciInfo.MultiprocessorCount)}}, nil
	}()
	if err != nil {
		if ret := ci.Destroy(); ret != nvml.SUCCESS {
			err = errors.Join(err, nvErr(what+": destroying the compute instance again", ret))
		}
	}
	return in, err
}

// migUUIDs returns the UUIDs of the GPU's MIG devices by GPU and compute
// instance ID, walking its MIG device handles as Discover does (nvml.h
// documents nvmlComputeInstanceInfo_t.device as the parent GPU, so the
// handle is looked up, not taken from the compute instance).
func (b *Backend) migUUIDs(d nvml.Device) (map[[2]int]string, error) {
	max, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, nvErr("max MIG device count", ret)
	}
	out := map[[2]int]string{}
	for i := 0; i < max; i++ {
		md, ret := d.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("MIG device %d handle", i), ret)
		}
		giID, ret1 := md.GetGpuInstanceId()
		ciID, ret2 := md.GetComputeInstanceId()
		uuid, ret3 := md.GetUUID()
		if ret := cmp.Or(ret1, ret2, ret3); ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("MIG device %d", i), ret)
		}
		out[[2]int{giID, ciID}] = uuid
	}
	return out, nil
}

// MIGInstances returns the GPU's live MIG devices, one per compute
// instance, and each GPU instance without a compute instance (no MIG
// device: NoComputeInstance, no UUID), ordered by GPU and compute
// instance ID; none when MIG mode is off. GIProfile is the MIG table's name of the GPU instance profile
// (NVIDIA's name with a spanning compute instance when the model is not in
// the table).
func (b *Backend) MIGInstances(ctx context.Context, gpuUUID string) ([]device.MIGInstance, error) {
	b.migMu.Lock()
	defer b.migMu.Unlock()
	g, on, err := b.migHandle(gpuUUID)
	if err != nil || !on {
		return nil, err
	}
	uuids, err := b.migUUIDs(g.d)
	if err != nil {
		return nil, err
	}
	infos, err := g.giProfiles()
	if err != nil {
		return nil, err
	}
	var out []device.MIGInstance
	for _, p := range slices.Sorted(maps.Keys(infos)) {
		info := infos[p]
		gis, ret := g.d.GetGpuInstances(&info)
		if ret != nvml.SUCCESS {
			return nil, nvErr(fmt.Sprintf("GPU %s: GPU instances of profile %d", gpuUUID, p), ret)
		}
		giName := giProfileName(g, p, info)
		for _, gi := range gis {
			ins, err := b.instancesOf(g, gi, p, info, giName, uuids)
			if err != nil {
				return nil, err
			}
			out = append(out, ins...)
		}
	}
	slices.SortFunc(out, func(a, c device.MIGInstance) int {
		return cmp.Or(cmp.Compare(a.GPUInstanceID, c.GPUInstanceID), cmp.Compare(a.ComputeInstanceID, c.ComputeInstanceID))
	})
	return out, nil
}

// giProfileName is the MIG table's name of NVML's GPU instance profile p
// on g, else NVIDIA's name of it with a spanning compute instance.
func giProfileName(g migGPU, p int, info nvml.GpuInstanceProfileInfo) string {
	for _, mp := range gpu.MIGProfiles(g.model) {
		if mp.GIProfileID == p {
			return mp.Name
		}
	}
	name, _ := device.MIGProfileName(p, device.CIProfiles[int(info.SliceCount)], int64(info.MemorySizeMB), g.memMiB)
	return name
}

// instancesOf returns the MIG devices of GPU instance gi (of NVML profile
// p): one per compute instance; with none, the GPU instance alone
// (NoComputeInstance).
func (b *Backend) instancesOf(g migGPU, gi nvml.GpuInstance, p int, info nvml.GpuInstanceProfileInfo, giName string, uuids map[[2]int]string) ([]device.MIGInstance, error) {
	gii, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		return nil, nvErr(fmt.Sprintf("GPU %s: GPU instance info", g.uuid), ret)
	}
	var out []device.MIGInstance
	err := eachComputeInstance(gi, func(ci nvml.ComputeInstance, cp int, cinfo nvml.ComputeInstanceProfileInfo) error {
		cii, ret := ci.GetInfo()
		if ret != nvml.SUCCESS {
			return fmt.Errorf("compute instance info: %v", ret)
		}
		name, err := device.MIGProfileName(p, cp, int64(info.MemorySizeMB), g.memMiB)
		if err != nil {
			return err
		}
		out = append(out, device.MIGInstance{
			MIGDevice: device.MIGDevice{UUID: uuids[[2]int{int(gii.Id), int(cii.Id)}], Profile: name, GPUInstanceID: int(gii.Id),
				ComputeInstanceID: int(cii.Id), MemoryMiB: int64(info.MemorySizeMB), Multiprocessors: int(cinfo.MultiprocessorCount)},
			GIProfile: giName,
			Placement: device.MIGPlacement{Start: int(gii.Placement.Start), Size: int(gii.Placement.Size)},
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("nvml: GPU %s: GPU instance %d: %w", g.uuid, gii.Id, err)
	}
	if len(out) == 0 {
		out = append(out, device.MIGInstance{
			MIGDevice:         device.MIGDevice{GPUInstanceID: int(gii.Id), MemoryMiB: int64(info.MemorySizeMB)},
			GIProfile:         giName,
			Placement:         device.MIGPlacement{Start: int(gii.Placement.Start), Size: int(gii.Placement.Size)},
			NoComputeInstance: true,
		})
	}
	return out, nil
}

// eachComputeInstance calls f with each compute instance of gi, its NVML
// profile constant and profile info.
func eachComputeInstance(gi nvml.GpuInstance, f func(ci nvml.ComputeInstance, p int, info nvml.ComputeInstanceProfileInfo) error) error {
	for p := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		info, ret := gi.GetComputeInstanceProfileInfo(p, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return fmt.Errorf("compute instance profile %d: %v", p, ret)
		}
		cis, ret := gi.GetComputeInstances(&info)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("compute instances of profile %d: %v", p, ret)
		}
		for _, ci := range cis {
			if err := f(ci, p, info); err != nil {
				return err
			}
		}
	}
	return nil
}

// DestroyMIG destroys GPU instance giID of the GPU, its compute instances
// first (NVML refuses to destroy a GPU instance that has some), when one
// of its MIG devices is migUUID. A GPU instance that does not exist, or
// a GPU whose MIG mode is off, is an error wrapping device.ErrNotFound;
// one whose MIG devices are others, or none, is left as it is with an
// error wrapping device.ErrNotOwned; one in use (a process on it) fails
// with NVML's ERROR_IN_USE. NVIDIA's driver keeps the UUID beside the
// IDs for this check (cmd/gpu-kubelet-plugin/mig.go MigLiveTuple) but
// leaves it commented out in deleteMigDevice (nvlib.go).
func (b *Backend) DestroyMIG(ctx context.Context, gpuUUID string, giID int, migUUID string) error {
	b.migMu.Lock()
	defer b.migMu.Unlock()
	g, on, err := b.migHandle(gpuUUID)
	if err != nil {
		return err
	}
	if !on {
		return fmt.Errorf("nvml: GPU %s: MIG mode is off, no GPU instance %d: %w", gpuUUID, giID, device.ErrNotFound)
	}
	gi, ret := g.d.GetGpuInstanceById(giID)
	if ret == nvml.ERROR_NOT_FOUND {
		return fmt.Errorf("nvml: GPU %s: no GPU instance %d: %w", gpuUUID, giID, device.ErrNotFound)
	}
	if ret != nvml.SUCCESS {
		return nvErr(fmt.Sprintf("GPU %s: GPU instance %d", gpuUUID, giID), ret)
	}
	what := fmt.Sprintf("GPU %s: GPU instance %d", gpuUUID, giID)
	if err := b.checkOwner(g, giID, migUUID, what); err != nil {
		return err
	}
	err = eachComputeInstance(gi, func(ci nvml.ComputeInstance, _ int, _ nvml.ComputeInstanceProfileInfo) error {
		if ret := ci.Destroy(); ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_FOUND {
			return fmt.Errorf("destroying a compute instance: %v", ret)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nvml: %s: %w", what, err)
	}
	if ret := gi.Destroy(); ret != nvml.SUCCESS {
		return nvErr(what+": destroying it", ret)
	}
	return nil
}

// checkOwner says whether a MIG device of GPU instance giID on g is
// migUUID; an error wrapping device.ErrNotOwned when none is.
func (b *Backend) checkOwner(g migGPU, giID int, migUUID, what string) error {
	uuids, err := b.migUUIDs(g.d)
	if err != nil {
		return err
	}
	var held []string
	for id, uuid := range uuids {
		if id[0] == giID {
			if uuid == migUUID && migUUID != "" {
				return nil
			}
			held = append(held, uuid)
		}
	}
	slices.Sort(held)
	return fmt.Errorf("nvml: %s holds MIG devices %v, not %s: %w", what, held, migUUID, device.ErrNotOwned)
}
