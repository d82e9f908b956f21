package gpu

import (
	"fmt"
	"sort"
)

// MIGProfile is one Multi-Instance GPU profile of one GPU model: a GPU
// instance size with its compute instance spanning the whole GPU instance.
// The table serves placement (the simulator, the mock backend's layouts);
// the names of MIG devices on a node follow NVIDIA's rule from memory sizes
// (internal/device MIGProfileName), which can differ for a product the
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

// migProfiles maps catalog model names to their MIG profiles. All four
// models share A100's slot grid (MIG user guide, "MIG Device Names" and
// "Supported Profiles"); they differ in memory and SM counts.
var migProfiles = map[string][]MIGProfile{
	"A100-40GB":  migTable(4864, 9856, 9856, 19968, 19968, 40192, "5gb", "10gb", "10gb", "20gb", "20gb", "40gb", 14, 14, 28, 42, 56, 98),
	"A100-80GB":  migTable(9856, 19968, 19968, 40192, 40192, 80384, "10gb", "20gb", "20gb", "40gb", "40gb", "80gb", 14, 14, 28, 42, 56, 98),
	"H100-80GB":  migTable(10240, 20480, 20480, 40960, 40960, 81920, "10gb", "20gb", "20gb", "40gb", "40gb", "80gb", 16, 26, 32, 60, 64, 132),
	"H200-141GB": migTable(18432, 35840, 35840, 72704, 72704, 144384, "18gb", "35gb", "35gb", "71gb", "71gb", "141gb", 16, 26, 32, 60, 64, 132),
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
