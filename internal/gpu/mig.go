// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"math"
	"sort"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
)

// MIGProfile is one Multi-Instance GPU profile of one GPU model: a GPU
// instance size with its compute instance spanning the whole GPU instance.
// The table serves placement (the simulator, the mock backend's layouts);
// the names of MIG devices on a node follow NVIDIA's rule from memory sizes
// (internal/node/device MIGProfileName), which can differ for a product the
// catalog maps to one of these models (H100 NVL: 1g.12gb).
//
// Sources: NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"
// (profile names, SM counts, instance counts) and "A100 MIG profile
// placement" (the slot grid: 8 memory slices, 7 compute slices); memory MiB
// are the sizes NVML reports for the GPU instance profile
// (nvmlGpuInstanceProfileInfo_t.memorySizeMB), as transcribed in go-nvml's
// mock machines (pkg/nvml/mock/gpus).
type MIGProfile struct {
	// Name is the profile name, e.g. "1g.10gb" or "1g.10gb+me".
	Name string
	// GIProfileID is NVML's GPU instance profile constant
	// (NVML_GPU_INSTANCE_PROFILE_*, e.g. 0 for 1-slice, 7 for 1-slice with
	// media extensions), not the per-GPU profile ID NVML reports in
	// nvmlGpuInstanceProfileInfo_t.id (19 for 1g.10gb on A100-80GB).
	GIProfileID int
	// ComputeSlices is the number of compute slices (the "Ng" of the name).
	ComputeSlices int
	// MemoryMiB is the memory of one instance in MiB.
	MemoryMiB int64
	// Multiprocessors is the number of SMs of one instance.
	Multiprocessors int
	// MaxInstances is the most instances of this profile on one GPU.
	MaxInstances int
	// Size is the number of memory slots (of 8) one instance occupies.
	Size int
	// Starts are the slots (0..7) where an instance may start.
	Starts []int
}

// NVML GPU instance profile IDs (nvml.h NVML_GPU_INSTANCE_PROFILE_*).
const (
	giProfile1Slice     = 0
	giProfile2Slice     = 1
	giProfile3Slice     = 2
	giProfile4Slice     = 3
	giProfile7Slice     = 4
	giProfile1SliceRev1 = 7 // 1g with media extensions (+me)
	giProfile1SliceRev2 = 9 // 1g with double memory
)

func migTable(mem1, mem1x2, mem2, mem3, mem4, mem7 int64, gb1, gb1x2, gb2, gb3, gb4, gb7 string, sm1, sm1x2, sm2, sm3, sm4, sm7 int) []MIGProfile {
	return []MIGProfile{
		{Name: "1g." + gb1, GIProfileID: giProfile1Slice, ComputeSlices: 1, MemoryMiB: mem1, Multiprocessors: sm1, MaxInstances: 7, Size: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6}},
		{Name: "1g." + gb1 + "+me", GIProfileID: giProfile1SliceRev1, ComputeSlices: 1, MemoryMiB: mem1, Multiprocessors: sm1, MaxInstances: 1, Size: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6}},
		{Name: "1g." + gb1x2, GIProfileID: giProfile1SliceRev2, ComputeSlices: 1, MemoryMiB: mem1x2, Multiprocessors: sm1x2, MaxInstances: 4, Size: 2, Starts: []int{0, 2, 4, 6}},
		{Name: "2g." + gb2, GIProfileID: giProfile2Slice, ComputeSlices: 2, MemoryMiB: mem2, Multiprocessors: sm2, MaxInstances: 3, Size: 2, Starts: []int{0, 2, 4}},
		{Name: "3g." + gb3, GIProfileID: giProfile3Slice, ComputeSlices: 3, MemoryMiB: mem3, Multiprocessors: sm3, MaxInstances: 2, Size: 4, Starts: []int{0, 4}},
		{Name: "4g." + gb4, GIProfileID: giProfile4Slice, ComputeSlices: 4, MemoryMiB: mem4, Multiprocessors: sm4, MaxInstances: 1, Size: 4, Starts: []int{0}},
		{Name: "7g." + gb7, GIProfileID: giProfile7Slice, ComputeSlices: 7, MemoryMiB: mem7, Multiprocessors: sm7, MaxInstances: 1, Size: 8, Starts: []int{0}},
	}
}

// migProfiles maps catalog model names to their MIG profiles. All the
// models share A100's slot grid (MIG user guide, "MIG Device Names" and
// "Supported MIG Profiles": 7 compute and 8 memory slices on every GPU of
// 7 instances, https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
// supported-mig-profiles.html; the GPUs and memory sizes of "Supported
// GPUs"); they differ in memory and SM counts. Profile names are the
// guide's and those of the GPU Operator's default mig-parted config
// (all-1g.12gb, all-3g.47gb, ...). Memory MiB of H100-NVL, H20 and
// GH200, which go-nvml does not mock, are an estimate: the card's memory × slots/8, which
// gives the profile names' sizes (3g.47gb: 4 × 12,032 MiB = 47 GiB). SM
// counts of H100-NVL and GH200 are H100-80GB's (132 SMs; an estimate), of
// H20 78 × slices/7 rounded down (78 SMs; an estimate); they serve only
// the mock backend's MIG device attributes.
var migProfiles = map[string][]MIGProfile{
	"A100-40GB":  migTable(4864, 9856, 9856, 19968, 19968, 40192, "5gb", "10gb", "10gb", "20gb", "20gb", "40gb", 14, 14, 28, 42, 56, 98),
	"A100-80GB":  migTable(9856, 19968, 19968, 40192, 40192, 80384, "10gb", "20gb", "20gb", "40gb", "40gb", "80gb", 14, 14, 28, 42, 56, 98),
	"H100-80GB":  migTable(10240, 20480, 20480, 40960, 40960, 81920, "10gb", "20gb", "20gb", "40gb", "40gb", "80gb", 16, 26, 32, 60, 64, 132),
	"H200-141GB": migTable(18432, 35840, 35840, 72704, 72704, 144384, "18gb", "35gb", "35gb", "71gb", "71gb", "141gb", 16, 26, 32, 60, 64, 132),
	"H100-NVL":   migTable(12032, 24064, 24064, 48128, 48128, 96256, "12gb", "24gb", "24gb", "47gb", "47gb", "94gb", 16, 26, 32, 60, 64, 132),
	"H20":        migTable(12288, 24576, 24576, 49152, 49152, 98304, "12gb", "24gb", "24gb", "48gb", "48gb", "96gb", 11, 11, 22, 33, 44, 78),
	"GH200":      migTable(12288, 24576, 24576, 49152, 49152, 98304, "12gb", "24gb", "24gb", "48gb", "48gb", "96gb", 16, 26, 32, 60, 64, 132),
	// B200: go-nvml's mock (pkg/nvml/mock/gpus/b200.go), profiles 1g.23gb,
	// 1g.45gb, 2g.45gb, 3g.90gb, 4g.90gb, 7g.180gb as the MIG user guide
	// names them.
	"B200": migTable(23552, 46080, 46080, 92160, 92160, 184320, "23gb", "45gb", "45gb", "90gb", "90gb", "180gb", 18, 18, 36, 54, 72, 126),
}

// MIGProfiles returns the MIG profiles of the named catalog model, ordered
// by size (1g first); nil when the model does not support MIG or is unknown
// to this table.
func MIGProfiles(model string) []MIGProfile {
	ps := migProfiles[model]
	out := make([]MIGProfile, len(ps))
	copy(out, ps)
	if len(out) == 0 {
		return nil
	}
	return out
}

// LookupMIGProfile returns the named profile (e.g. "1g.10gb") of the named
// catalog model.
func LookupMIGProfile(model, profile string) (MIGProfile, bool) {
	for _, p := range migProfiles[model] {
		if p.Name == profile {
			return p, true
		}
	}
	return MIGProfile{}, false
}

// PlaceMIG checks that the MIG devices with the given profile names fit
// together on one GPU of the named model, under the placement rules: each
// instance starts at one of its profile's Starts and occupies Size of the 8
// memory slots without overlap, at most MaxInstances per profile and at most
// 7 compute slices in all. It returns the start slot of each instance, in
// input order. Errors name the model, the profile or the rule broken.
func PlaceMIG(model string, profiles []string) ([]int, error) {
	if _, ok := migProfiles[model]; !ok {
		return nil, fmt.Errorf("model %q does not support MIG", model)
	}
	ps := make([]MIGProfile, len(profiles))
	count := map[string]int{}
	compute := 0
	for i, name := range profiles {
		p, ok := LookupMIGProfile(model, name)
		if !ok {
			return nil, fmt.Errorf("model %s has no MIG profile %q", model, name)
		}
		count[name]++
		if count[name] > p.MaxInstances {
			return nil, fmt.Errorf("model %s allows at most %d instances of MIG profile %s", model, p.MaxInstances, name)
		}
		compute += p.ComputeSlices
		ps[i] = p
	}
	if compute > 7 {
		return nil, fmt.Errorf("MIG profiles %v need %d compute slices; model %s has 7", profiles, compute, model)
	}
	// Place the largest instances first (fewest choices), backtracking.
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ps[order[a]].Size > ps[order[b]].Size })
	starts := make([]int, len(ps))
	var used [8]bool
	var place func(k int) bool
	place = func(k int) bool {
		if k == len(order) {
			return true
		}
		p := ps[order[k]]
	next:
		for _, s := range p.Starts {
			for j := s; j < s+p.Size; j++ {
				if j >= 8 || used[j] {
					continue next
				}
			}
			for j := s; j < s+p.Size; j++ {
				used[j] = true
			}
			starts[order[k]] = s
			if place(k + 1) {
				return true
			}
			for j := s; j < s+p.Size; j++ {
				used[j] = false
			}
		}
		return false
	}
	if !place(0) {
		return nil, fmt.Errorf("MIG profiles %v do not fit together on one %s (no valid placement)", profiles, model)
	}
	return starts, nil
}

// NumMIGProfiles is the number of MIG profiles of every MIG-capable model:
// MIGProfiles returns them in one order for all models (1g, 1g+me, 1g with
// double memory, 2g, 3g, 4g, 7g), so a profile index means the same slot
// shape on every model.
const NumMIGProfiles = 7

// MIGSlices returns the compute slices (of 7) of profile index k of
// MIGProfiles' order; 0 when k is out of range.
func MIGSlices(k int) int {
	if k < 0 || k >= NumMIGProfiles {
		return 0
	}
	return migProfiles["A100-80GB"][k].ComputeSlices
}

// MIGMemorySlots returns the memory slots (of MIGGridSlots) that profile
// index k of MIGProfiles' order occupies on its GPU's placement grid
// (MIGProfile.Size: 3g.40gb 4, like 4g.40gb); 0 when k is out of range.
func MIGMemorySlots(k int) int {
	if k < 0 || k >= NumMIGProfiles {
		return 0
	}
	return migProfiles["A100-80GB"][k].Size
}

// MIGGridSlots is the number of memory slots of a MIG GPU's placement grid
// (NVIDIA's MIG user guide, "A100 MIG profiles": 8 memory slices of which a
// 7g.80gb takes all).
const MIGGridSlots = 8

// MIGShareMilli is MIG's share rule, the one the simulator, the scheduler
// and the snapshot reader count a MIG instance by: an instance of slices
// compute slices holds slices/7 of its GPU (apidra.MIGComputeSlices), in
// milli-GPU rounded down (1g: 142, 3g: 428, 7g: 1000), so that the share
// maps back to a profile of that many slices (SmallestMIGProfile:
// slices/7 ≥ milli/1000; 143 would not).
func MIGShareMilli(slices int) int64 {
	return int64(slices) * resource.MilliPerGPU / apidra.MIGComputeSlices
}

// isMediaProfile reports whether profile k is the media-extension variant
// (1g.*+me), which the simulator never chooses: it holds the same compute
// and memory as 1g and at most one fits a GPU.
func isMediaProfile(k int) bool { return k == 1 }

// SmallestMIGProfile returns the index (MIGProfiles' order) of the
// smallest MIG profile of model that holds a pod asking for milli
// milli-GPU (1..1000) and, when memMiB > 0, memMiB MiB of GPU memory:
// the fewest compute slices whose share holds milli (MIGShareMilli ≥
// milli, the same as slices/7 ≥ milli/1000), then the fewest
// memory slots, among the profiles with enough memory. A share is compared
// with the compute slices, as MIG gives an instance slices/7 of the SMs
// (NVIDIA MIG user guide, "Supported MIG Profiles": 1g has 1/7 of the
// compute, 7g all of it). ok is false when the model has no MIG or no
// profile holds the request.
func SmallestMIGProfile(model string, milli, memMiB int64) (k int, ok bool) {
	ps := migProfiles[model]
	best := -1
	for i, p := range ps {
		if isMediaProfile(i) || MIGShareMilli(p.ComputeSlices) < milli || p.MemoryMiB < memMiB {
			continue
		}
		if best < 0 || p.ComputeSlices < ps[best].ComputeSlices ||
			(p.ComputeSlices == ps[best].ComputeSlices && p.Size < ps[best].Size) {
			best = i
		}
	}
	return best, best >= 0
}

// MIGLayout is the number of instances of each profile (MIGProfiles'
// order) on one MIG-enabled GPU.
type MIGLayout [NumMIGProfiles]int

// Slices returns the compute slices the layout's instances hold.
func (l MIGLayout) Slices() int {
	s := 0
	for k, c := range l {
		s += c * MIGSlices(k)
	}
	return s
}

// Names returns the layout as profile names of model, largest first, as
// a cluster YAML's mig field or PlaceMIG take them.
func (l MIGLayout) Names(model string) []string {
	ps := migProfiles[model]
	var out []string
	for k := len(l) - 1; k >= 0; k-- {
		for range l[k] {
			out = append(out, ps[k].Name)
		}
	}
	return out
}

// MIGLayoutOf counts the profile names of one GPU's layout of model. It
// does not check the layout (PlaceMIG does).
func MIGLayoutOf(model string, names []string) (MIGLayout, error) {
	var l MIGLayout
	for _, n := range names {
		k, ok := MIGProfileIndex(model, n)
		if !ok {
			return l, fmt.Errorf("model %s has no MIG profile %q", model, n)
		}
		l[k]++
	}
	return l, nil
}

// MIGLayouts returns every maximal valid layout of model without media
// extensions: the instance counts PlaceMIG accepts to which no further
// instance can be added. For A100 these are the layouts of the MIG user
// guide's "A100 MIG profile placement" figure.
func MIGLayouts(model string) []MIGLayout {
	ps := migProfiles[model]
	if ps == nil {
		return nil
	}
	valid := func(l MIGLayout) bool {
		if l.Slices() > 7 {
			return false
		}
		_, err := PlaceMIG(model, l.Names(model))
		return err == nil
	}
	var all []MIGLayout
	var l MIGLayout
	var walk func(k int)
	walk = func(k int) {
		if k == len(ps) {
			if l.Slices() > 0 && valid(l) {
				all = append(all, l)
			}
			return
		}
		for c := 0; c <= ps[k].MaxInstances; c++ {
			if c > 0 && isMediaProfile(k) {
				break
			}
			l[k] = c
			if l.Slices() <= 7 {
				walk(k + 1)
			}
		}
		l[k] = 0
	}
	walk(0)
	var out []MIGLayout
	for _, l := range all {
		maximal := true
		for k := range l {
			if isMediaProfile(k) {
				continue
			}
			m := l
			m[k]++
			if m[k] <= ps[k].MaxInstances && valid(m) {
				maximal = false
				break
			}
		}
		if maximal {
			out = append(out, l)
		}
	}
	return out
}

// ChooseMIGLayout returns the maximal valid layout of model (MIGLayouts)
// whose compute slices are split among the profiles most like the demand:
// demand[k] is how many instances of profile k the workload asks for, and
// the layout minimises Σ_k |layout slices of k / layout slices − demand
// slices of k / demand slices|; ties go to the layout with more compute
// slices, then to the first in MIGLayouts' order. ok is false when the
// model has no MIG or the demand is empty.
func ChooseMIGLayout(model string, demand [NumMIGProfiles]float64) (MIGLayout, bool) {
	total := 0.0
	for k, d := range demand {
		total += d * float64(MIGSlices(k))
	}
	if total <= 0 {
		return MIGLayout{}, false
	}
	var best MIGLayout
	bestDist, found := 0.0, false
	for _, l := range MIGLayouts(model) {
		s := float64(l.Slices())
		dist := 0.0
		for k := range l {
			dist += math.Abs(float64(l[k]*MIGSlices(k))/s - demand[k]*float64(MIGSlices(k))/total)
		}
		if !found || dist < bestDist-1e-12 || (math.Abs(dist-bestDist) <= 1e-12 && l.Slices() > best.Slices()) {
			best, bestDist, found = l, dist, true
		}
	}
	return best, found
}

// MIGFullCount returns how many instances of the named profile alone one
// GPU of model holds (the layout of mig-parted's all-<profile> configs, as
// under NVIDIA's single MIG strategy: 7 of 1g.10gb, 3 of 2g.20gb, 2 of
// 3g.40gb on an A100-80GB); ok is false when the model has no such
// profile.
func MIGFullCount(model, profile string) (n int, ok bool) {
	p, ok := LookupMIGProfile(model, profile)
	if !ok {
		return 0, false
	}
	for k := p.MaxInstances; k >= 1; k-- {
		names := make([]string, k)
		for i := range names {
			names[i] = profile
		}
		if _, err := PlaceMIG(model, names); err == nil {
			return k, true
		}
	}
	return 0, false
}

// MIGProfileIndex returns the index (MIGProfiles' order) of the MIG
// profile named profile on model ("1g.10gb" on an A100-80GB: 0); ok is
// false when the model has no such profile.
func MIGProfileIndex(model, profile string) (int, bool) {
	for k, p := range MIGProfiles(model) {
		if p.Name == profile {
			return k, true
		}
	}
	return 0, false
}
