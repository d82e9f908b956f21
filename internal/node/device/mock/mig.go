// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mock

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

var _ device.MIGManager = (*Backend)(nil)

// migState is the live MIG layout of one GPU once MIG devices were
// created or destroyed on it (or listed): until then Discover reports
// the profile's layout.
type migState struct {
	insts []device.MIGInstance
	// created counts the MIG devices created so far; it seeds their UUIDs,
	// so that a device created again after a destroy gets a new UUID, as
	// on real GPUs.
	created int
}

// gpuIndex returns the index of the GPU uuid (not a MIG device).
func (b *Backend) gpuIndex(uuid string) (int, error) {
	for i, g := range b.node.GPUs {
		if g.UUID == uuid {
			return i, nil
		}
	}
	return 0, fmt.Errorf("mock: no GPU %s", uuid)
}

// state returns GPU i's live MIG layout, starting from the profile's: its
// GPU instances are placed as gpu.PlaceMIG places them. b.migMu is held.
func (b *Backend) state(i int) (*migState, error) {
	g := b.node.GPUs[i]
	if st, ok := b.migs[g.UUID]; ok {
		return st, nil
	}
	spec := b.specs()[i]
	names := make([]string, len(spec.MIG))
	for j, x := range spec.MIG {
		names[j] = x.Profile
	}
	st := &migState{}
	if len(names) > 0 {
		starts, err := gpu.PlaceMIG(g.Model, names)
		if err != nil {
			return nil, fmt.Errorf("mock: GPU %s: %w", g.UUID, err)
		}
		for _, m := range g.MIG {
			j := m.GPUInstanceID - 1
			mp, _ := gpu.LookupMIGProfile(g.Model, names[j])
			st.insts = append(st.insts, device.MIGInstance{MIGDevice: m, GIProfile: names[j], Placement: device.MIGPlacement{Start: starts[j], Size: mp.Size}})
		}
	}
	if b.migs == nil {
		b.migs = map[string]*migState{}
	}
	b.migs[g.UUID] = st
	return st, nil
}

// overlayMIG replaces the profile's MIG devices of n with the live
// layouts of the GPUs whose layout was touched.
func (b *Backend) overlayMIG(n *device.Node) {
	b.migMu.Lock()
	defer b.migMu.Unlock()
	for i := range n.GPUs {
		st, ok := b.migs[n.GPUs[i].UUID]
		if !ok {
			continue
		}
		n.GPUs[i].MIG = nil
		for _, in := range st.insts {
			if !in.NoComputeInstance { // no MIG device
				n.GPUs[i].MIG = append(n.GPUs[i].MIG, in.MIGDevice)
			}
		}
	}
}

// MIGInstances returns the GPU's live MIG devices, ordered by GPU
// instance and compute instance ID.
func (b *Backend) MIGInstances(ctx context.Context, gpuUUID string) ([]device.MIGInstance, error) {
	i, err := b.gpuIndex(gpuUUID)
	if err != nil {
		return nil, err
	}
	b.migMu.Lock()
	defer b.migMu.Unlock()
	st, err := b.state(i)
	if err != nil {
		return nil, err
	}
	return append([]device.MIGInstance(nil), st.insts...), nil
}

// CreateMIG creates a GPU instance of giProfile at start with one compute
// instance spanning it, refusing what NVML refuses: a GPU without MIG
// mode, a profile the model lacks, a start the profile does not allow, a
// placement overlapping a live instance, more instances of the profile
// than the GPU has, more than 7 compute slices in all. The GPU instance
// gets the smallest free ID.
func (b *Backend) CreateMIG(ctx context.Context, gpuUUID, giProfile string, start int) (device.MIGInstance, error) {
	return b.create(gpuUUID, giProfile, start, true)
}

// CreateGPUInstance creates a GPU instance of giProfile at start without
// a compute instance, what a crash between NVML's two creations or an
// administrator (nvidia-smi mig -cgi without -C) leaves: no MIG device,
// listed by MIGInstances as NoComputeInstance. It refuses what CreateMIG
// refuses.
func (b *Backend) CreateGPUInstance(ctx context.Context, gpuUUID, giProfile string, start int) (device.MIGInstance, error) {
	return b.create(gpuUUID, giProfile, start, false)
}

// create is CreateMIG, with a compute instance spanning the GPU instance
// when ci.
func (b *Backend) create(gpuUUID, giProfile string, start int, ci bool) (device.MIGInstance, error) {
	i, err := b.gpuIndex(gpuUUID)
	if err != nil {
		return device.MIGInstance{}, err
	}
	g := b.node.GPUs[i]
	if !g.MIGEnabled {
		return device.MIGInstance{}, fmt.Errorf("mock: GPU %s: MIG mode is disabled", gpuUUID)
	}
	mp, ok := gpu.LookupMIGProfile(g.Model, giProfile)
	if !ok {
		return device.MIGInstance{}, fmt.Errorf("mock: GPU %s (%s) has no MIG profile %q", gpuUUID, g.Model, giProfile)
	}
	okStart := false
	for _, s := range mp.Starts {
		okStart = okStart || s == start
	}
	if !okStart {
		return device.MIGInstance{}, fmt.Errorf("mock: GPU %s: MIG profile %s cannot start at memory slot %d (allowed: %v)", gpuUUID, giProfile, start, mp.Starts)
	}
	b.migMu.Lock()
	defer b.migMu.Unlock()
	st, err := b.state(i)
	if err != nil {
		return device.MIGInstance{}, err
	}
	gi, err := freeMIGSlot(gpuUUID, g.Model, giProfile, mp, start, st.insts)
	if err != nil {
		return device.MIGInstance{}, err
	}
	name, err := device.MIGProfileName(mp.GIProfileID, device.CIProfiles[mp.ComputeSlices], mp.MemoryMiB, g.MemoryMiB)
	if err != nil {
		return device.MIGInstance{}, err
	}
	in := device.MIGInstance{
		MIGDevice: device.MIGDevice{
			UUID:              "MIG-" + uuidFrom(fmt.Sprintf("%s/created/%d", g.UUID, st.created)),
			Profile:           name,
			GPUInstanceID:     gi,
			ComputeInstanceID: 0,
			MemoryMiB:         mp.MemoryMiB,
			Multiprocessors:   mp.Multiprocessors,
		},
		GIProfile: giProfile,
		Placement: device.MIGPlacement{Start: start, Size: mp.Size},
	}
	if !ci {
		in.MIGDevice = device.MIGDevice{GPUInstanceID: gi, MemoryMiB: mp.MemoryMiB}
		in.NoComputeInstance = true
	}
	st.created++
	st.insts = append(st.insts, in)
	sort.Slice(st.insts, func(a, c int) bool {
		x, y := st.insts[a], st.insts[c]
		if x.GPUInstanceID != y.GPUInstanceID {
			return x.GPUInstanceID < y.GPUInstanceID
		}
		return x.ComputeInstanceID < y.ComputeInstanceID
	})
	if err := b.saveMIGState(); err != nil {
		return device.MIGInstance{}, err
	}
	return in, nil
}

// freeMIGSlot returns the smallest free GPU instance ID for a GPU
// instance of giProfile (mp) at start on the GPU (gpuUUID, of model) that
// holds insts, or NVML's refusal: a placement overlapping a live
// instance, more instances of the profile than the GPU has, more than 7
// compute slices in all.
func freeMIGSlot(gpuUUID, model, giProfile string, mp gpu.MIGProfile, start int, insts []device.MIGInstance) (int, error) {
	slices, count := mp.ComputeSlices, 0
	used := map[int]bool{}
	for _, in := range insts {
		if in.ComputeInstanceID != 0 {
			continue // one per GPU instance below
		}
		p := in.Placement
		if start < p.Start+p.Size && p.Start < start+mp.Size {
			return 0, fmt.Errorf("mock: GPU %s: insufficient resources: MIG profile %s at slots %d..%d overlaps GPU instance %d (%s) at %d..%d",
				gpuUUID, giProfile, start, start+mp.Size-1, in.GPUInstanceID, in.GIProfile, p.Start, p.Start+p.Size-1)
		}
		q, _ := gpu.LookupMIGProfile(model, in.GIProfile)
		slices += q.ComputeSlices
		if in.GIProfile == giProfile {
			count++
		}
		used[in.GPUInstanceID] = true
	}
	if count >= mp.MaxInstances {
		return 0, fmt.Errorf("mock: GPU %s: insufficient resources: at most %d instances of MIG profile %s", gpuUUID, mp.MaxInstances, giProfile)
	}
	if slices > 7 {
		return 0, fmt.Errorf("mock: GPU %s: insufficient resources: %d compute slices needed, 7 in all", gpuUUID, slices)
	}
	gi := 1
	for used[gi] {
		gi++
	}
	return gi, nil
}

// DestroyMIG destroys GPU instance giID of the GPU with its compute
// instances when its MIG device is migUUID (device.MIGManager); it fails
// when there is no such instance (device.ErrNotFound) or its device is
// another (device.ErrNotOwned, nothing destroyed).
func (b *Backend) DestroyMIG(ctx context.Context, gpuUUID string, giID int, migUUID string) error {
	i, err := b.gpuIndex(gpuUUID)
	if err != nil {
		return err
	}
	b.migMu.Lock()
	defer b.migMu.Unlock()
	st, err := b.state(i)
	if err != nil {
		return err
	}
	var found []string
	for _, in := range st.insts {
		if in.GPUInstanceID == giID {
			found = append(found, in.UUID)
		}
	}
	if len(found) == 0 {
		return fmt.Errorf("mock: GPU %s: no GPU instance %d: %w", gpuUUID, giID, device.ErrNotFound)
	}
	if migUUID == "" || !slices.Contains(found, migUUID) {
		return fmt.Errorf("mock: GPU %s: GPU instance %d holds MIG device %q, not %s: %w", gpuUUID, giID, strings.Join(found, ","), migUUID, device.ErrNotOwned)
	}
	st.insts = slices.DeleteFunc(st.insts, func(in device.MIGInstance) bool { return in.GPUInstanceID == giID })
	return b.saveMIGState()
}
