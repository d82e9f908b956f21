// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"fmt"
	"sort"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// maxCombinations bounds the exhaustive search of GPU sets; above it,
// preferredGPUs grows the set greedily. C(16,8) = 12870 fits, so every
// node with up to 16 GPUs gets the exact best set.
const maxCombinations = 20000

// setScore is how well a set of GPUs is connected, compared field by field:
// the sum of the pairs' link scores (linkScore), then the pairs on one NUMA
// node.
type setScore struct{ links, numa int }

func (a setScore) less(b setScore) bool {
	if a.links != b.links {
		return a.links < b.links
	}
	return a.numa < b.numa
}

func (a setScore) add(b setScore) setScore {
	return setScore{a.links + b.links, a.numa + b.numa}
}

// linkScore is the score of one link level, as NVIDIA's device plugin
// scores it through go-gpuallocator (calculateGPUPairScore in
// github.com/NVIDIA/go-gpuallocator gpuallocator/besteffort_policy.go):
// SYS 10, NODE 20, PHB 30, PXB 40, PIX 50, and 100 per NVLink; unknown 0.
// go-gpuallocator adds a pair's PCIe score to its NVLink score; a
// device.Link holds only the better level, so an NVLink pair scores its
// NVLinks alone.
func linkScore(l device.Link) int {
	switch l.Type {
	case device.LinkCrossSocket:
		return 10
	case device.LinkSameSocket:
		return 20
	case device.LinkHostBridge:
		return 30
	case device.LinkMultiSwitch:
		return 40
	case device.LinkPCIeSwitch:
		return 50
	case device.LinkNVLink:
		return 100 * l.NVLinks
	}
	return 0
}

// pairScore is the score contribution of the pair (i, j).
func pairScore(n *device.Node, i, j int) setScore {
	var s setScore
	if i < len(n.Links) && j < len(n.Links[i]) {
		s.links = linkScore(n.Links[i][j])
	}
	if a, b := n.GPUs[i].NUMANode, n.GPUs[j].NUMANode; a >= 0 && a == b {
		s.numa = 1
	}
	return s
}

// Preferred picks size devices of resource r out of available, containing
// mustInclude, for GetPreferredAllocation:
//   - whole GPUs: the set with the highest sum of link scores over its
//     pairs (linkScore: every level, NV#, PIX, PXB, PHB, NODE, SYS), then
//     with the most pairs on one NUMA node, ties going to the lowest GPU
//     indices. NVIDIA's best-effort policy instead picks the best set of
//     the best partition of all available GPUs into sets of the size; this
//     is the best set itself;
//   - time-slicing replicas: spread over GPUs (policy spread: each next
//     replica from the GPU least used by this request, then with the most
//     free replicas) or packed (policy pack: on the GPU most used by this
//     request, then with the fewest free replicas);
//   - milli-GPU units (gpuplane.io/gpu-milli): all from one GPU, the GPU
//     of the must-include units or else the GPU with the fewest free units
//     that holds the whole request (best fit), ties going to the lowest
//     index; when no one GPU holds it, packed as replicas are (and
//     Allocate refuses the result);
//   - MIG devices: in device order.
//
// It returns an error when an ID is not a device of r, or when size is
// smaller than mustInclude or larger than available.
func Preferred(n *device.Node, r *Resource, byID map[device.ID]*Device, available, mustInclude []string, size int, policy string) ([]string, error) {
	avail, err := lookup(byID, available)
	if err != nil {
		return nil, fmt.Errorf("available devices: %w", err)
	}
	must, err := lookup(byID, mustInclude)
	if err != nil {
		return nil, fmt.Errorf("must-include devices: %w", err)
	}
	if size < len(must) || size > len(avail) || size < 0 {
		return nil, fmt.Errorf("allocation size %d: want between %d (must-include) and %d (available)", size, len(must), len(avail))
	}
	isMust := map[device.ID]bool{}
	for _, d := range must {
		isMust[d.ID] = true
	}
	var rest []*Device
	for _, d := range avail {
		if !isMust[d.ID] {
			rest = append(rest, d)
		}
	}
	var chosen []*Device
	switch {
	case r.Milli:
		chosen = preferredMilli(must, rest, size)
	case r.Replicas > 1:
		chosen = preferredReplicas(must, rest, size, policy)
	case len(r.Devices) > 0 && r.Devices[0].MIG >= 0:
		sort.Slice(rest, func(i, j int) bool { return less(rest[i], rest[j]) })
		chosen = append(must, rest[:size-len(must)]...)
	default:
		chosen = preferredGPUs(n, must, rest, size)
	}
	ids := make([]string, len(chosen))
	for i, d := range chosen {
		ids[i] = string(d.ID)
	}
	return ids, nil
}

func lookup(byID map[device.ID]*Device, ids []string) ([]*Device, error) {
	out := make([]*Device, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		d, ok := byID[device.ID(id)]
		if !ok {
			return nil, fmt.Errorf("unknown device ID %q", id)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, d)
	}
	return out, nil
}

func less(a, b *Device) bool {
	if a.GPU != b.GPU {
		return a.GPU < b.GPU
	}
	if a.MIG != b.MIG {
		return a.MIG < b.MIG
	}
	return a.Replica < b.Replica
}

// preferredGPUs returns must plus the best size-len(must) of rest.
func preferredGPUs(n *device.Node, must, rest []*Device, size int) []*Device {
	sort.Slice(rest, func(i, j int) bool { return rest[i].GPU < rest[j].GPU })
	k := size - len(must)
	var base setScore
	for i := range must {
		for j := i + 1; j < len(must); j++ {
			base = base.add(pairScore(n, must[i].GPU, must[j].GPU))
		}
	}
	if k == 0 {
		return must
	}
	// gain[i] is rest[i]'s score with must.
	gain := make([]setScore, len(rest))
	for i, d := range rest {
		for _, m := range must {
			gain[i] = gain[i].add(pairScore(n, d.GPU, m.GPU))
		}
	}
	if binomial(len(rest), k) > maxCombinations {
		return greedyGPUs(n, must, rest, gain, k)
	}
	best, bestScore := []int(nil), setScore{-1, -1}
	idx := make([]int, k)
	var walk func(pos, from int, s setScore)
	walk = func(pos, from int, s setScore) {
		if pos == k {
			if bestScore.less(s) {
				bestScore = s
				best = append(best[:0], idx...)
			}
			return
		}
		for i := from; i <= len(rest)-(k-pos); i++ {
			t := s.add(gain[i])
			for _, p := range idx[:pos] {
				t = t.add(pairScore(n, rest[p].GPU, rest[i].GPU))
			}
			idx[pos] = i
			walk(pos+1, i+1, t)
		}
	}
	walk(0, 0, base)
	out := append([]*Device(nil), must...)
	for _, i := range best {
		out = append(out, rest[i])
	}
	return out
}

// greedyGPUs adds, k times, the GPU of rest that adds the most score.
func greedyGPUs(n *device.Node, must, rest []*Device, gain []setScore, k int) []*Device {
	out := append([]*Device(nil), must...)
	used := make([]bool, len(rest))
	for ; k > 0; k-- {
		bi := -1
		for i := range rest {
			if !used[i] && (bi < 0 || gain[bi].less(gain[i])) {
				bi = i
			}
		}
		used[bi] = true
		out = append(out, rest[bi])
		for i := range rest {
			gain[i] = gain[i].add(pairScore(n, rest[i].GPU, rest[bi].GPU))
		}
	}
	return out
}

func binomial(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
		if r > maxCombinations {
			return r
		}
	}
	return r
}

// preferredReplicas picks replicas per the policy; see Preferred.
func preferredReplicas(must, rest []*Device, size int, policy string) []*Device {
	used := map[int]int{} // replicas of each GPU in this request
	free := map[int][]*Device{}
	for _, d := range must {
		used[d.GPU]++
	}
	for _, d := range rest {
		free[d.GPU] = append(free[d.GPU], d)
	}
	gpus := make([]int, 0, len(free))
	for g, ds := range free {
		sort.Slice(ds, func(i, j int) bool { return ds[i].Replica < ds[j].Replica })
		gpus = append(gpus, g)
	}
	sort.Ints(gpus)
	out := append([]*Device(nil), must...)
	for len(out) < size {
		bg := -1
		for _, g := range gpus {
			if len(free[g]) == 0 {
				continue
			}
			if bg < 0 {
				bg = g
				continue
			}
			u, bu, f, bf := used[g], used[bg], len(free[g]), len(free[bg])
			var better bool
			if policy == configv1.ReplicaPack {
				better = u > bu || (u == bu && f < bf)
			} else {
				better = u < bu || (u == bu && f > bf)
			}
			if better {
				bg = g
			}
		}
		out = append(out, free[bg][0])
		free[bg] = free[bg][1:]
		used[bg]++
	}
	return out
}

// preferredMilli picks milli-GPU units on one GPU; see Preferred.
func preferredMilli(must, rest []*Device, size int) []*Device {
	mustGPU := -1
	for _, d := range must {
		if mustGPU >= 0 && d.GPU != mustGPU {
			return preferredReplicas(must, rest, size, configv1.ReplicaPack)
		}
		mustGPU = d.GPU
	}
	free := map[int][]*Device{}
	for _, d := range rest {
		free[d.GPU] = append(free[d.GPU], d)
	}
	need, best := size-len(must), -1
	for g, ds := range free {
		if len(ds) < need || (mustGPU >= 0 && g != mustGPU) {
			continue
		}
		if best < 0 || len(ds) < len(free[best]) || (len(ds) == len(free[best]) && g < best) {
			best = g
		}
	}
	if best < 0 {
		if need == 0 {
			return must
		}
		return preferredReplicas(must, rest, size, configv1.ReplicaPack)
	}
	ds := free[best]
	sort.Slice(ds, func(i, j int) bool { return ds[i].Replica < ds[j].Replica })
	return append(append([]*Device(nil), must...), ds[:need]...)
}
