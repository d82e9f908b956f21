// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// indices maps chosen IDs back to sorted "gpu[::replica]" strings.
func indices(n *device.Node, ids []string) string {
	var out []string
	for _, id := range ids {
		u, r, _ := device.ID(id).Split()
		g, _, _ := n.GPUByUUID(u)
		if strings.Contains(id, "::") {
			out = append(out, fmt.Sprintf("%d::%d", g.Index, r))
		} else {
			out = append(out, fmt.Sprint(g.Index))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func except(all []int, drop ...int) []int {
	var out []int
	for _, x := range all {
		keep := true
		for _, d := range drop {
			keep = keep && x != d
		}
		if keep {
			out = append(out, x)
		}
	}
	return out
}

// TestPreferredCubeMesh checks sets worked out by hand from the DGX-1V link
// matrix (profiles/dgx1-v100.yaml). NVLinks per pair:
//
//	0-1:1 0-2:1 0-3:2 0-4:2 | 1-2:2 1-3:1 1-5:2 | 2-3:2 2-6:1 | 3-7:1
//	4-5:1 4-6:1 4-7:2 | 5-6:2 5-7:1 | 6-7:2     (every other pair: 0, SYS)
//
// NUMA node 0 holds GPUs 0-3, node 1 GPUs 4-7.
func TestPreferredCubeMesh(t *testing.T) {
	n := testNode(t, "dgx1-v100")
	p := testPlugin(t, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, tc := range []struct {
		name        string
		avail, must []int
		size        int
		want        string
	}{
		// Pairs with 2 NVLinks: 0-3 0-4 1-2 1-5 2-3 4-7 5-6 6-7; the lowest is 0-3.
		{"2 of 8", all, nil, 2, "0,3"},
		// With 1: 1-2 and 1-5 have 2 NVLinks; 1-2 is on one NUMA node.
		{"2 with 1", all, []int{1}, 2, "1,2"},
		// With 6: 5-6 and 6-7 have 2 NVLinks, both on NUMA node 1: lowest.
		{"2 with 6", all, []int{6}, 2, "5,6"},
		// Without 0 and 3: 1-2 (2 NVLinks, same NUMA node) beats 1-5, 4-7, ...
		{"2 of 6", except(all, 0, 3), nil, 2, "1,2"},
		// Each quad has 1+1+2+2+1+2 = 9 NVLinks, more than any mixed set.
		{"4 of 8", all, nil, 4, "0,1,2,3"},
		{"4 with 5", all, []int{5}, 4, "4,5,6,7"},
		{"4 of 7", except(all, 0), nil, 4, "4,5,6,7"},
		// With 0 and 4 (2 NVLinks): adding {2,3}, {3,7} or {6,7} gives 7
		// NVLinks, the most; {0,2,3,4} and {0,4,6,7} have 3 same-NUMA pairs
		// against 2 for {0,3,4,7}; the lower indices win: {0,2,3,4}.
		{"4 with 0 and 4", all, []int{0, 4}, 4, "0,2,3,4"},
		// Without 0 and 4: {1,2,3,5}, {1,2,5,6} and {1,5,6,7} have 7
		// NVLinks; {1,2,3,5} and {1,5,6,7} have 3 same-NUMA pairs; lowest.
		{"4 of 6", except(all, 0, 4), nil, 4, "1,2,3,5"},
		{"8 of 8", all, nil, 8, "0,1,2,3,4,5,6,7"},
		{"1 with 7", all, []int{7}, 1, "7"},
	} {
		got, err := Preferred(&n, p.res, p.byID, gpuIDs(&n, tc.avail...), gpuIDs(&n, tc.must...), tc.size, configv1.ReplicaSpread)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s := indices(&n, got); s != tc.want {
			t.Errorf("%s: got GPUs %s, want %s", tc.name, s, tc.want)
		}
	}
}

func TestPreferredPCIe(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	p := testPlugin(t, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	for _, tc := range []struct {
		avail, must []int
		size        int
		want        string
	}{
		{[]int{0, 1, 2, 3}, nil, 2, "0,1"},      // PIX pair on NUMA 0
		{[]int{0, 1, 2, 3}, []int{3}, 2, "2,3"}, // its PIX peer
		{[]int{0, 2, 3}, []int{0}, 2, "0,2"},    // all SYS: lowest index
		{[]int{1, 2, 3}, nil, 2, "2,3"},
	} {
		got, err := Preferred(&n, p.res, p.byID, gpuIDs(&n, tc.avail...), gpuIDs(&n, tc.must...), tc.size, configv1.ReplicaSpread)
		if err != nil {
			t.Fatal(err)
		}
		if s := indices(&n, got); s != tc.want {
			t.Errorf("avail %v must %v: got %s, want %s", tc.avail, tc.must, s, tc.want)
		}
	}
}

// topoNode is a node of len(matrix) GPUs, NUMA node unknown, with the
// links of an nvidia-smi topo -m matrix ("X" on the diagonal).
func topoNode(t *testing.T, matrix ...string) device.Node {
	t.Helper()
	var n device.Node
	for i, row := range matrix {
		n.GPUs = append(n.GPUs, device.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), NUMANode: -1})
		cells := strings.Fields(row)
		n.Links = append(n.Links, make([]device.Link, len(cells)))
		for j, c := range cells {
			if i == j {
				continue
			}
			l, err := device.ParseLink(c)
			if err != nil {
				t.Fatal(err)
			}
			n.Links[i][j] = l
		}
	}
	return n
}

// TestPreferredLinkLevels checks that every link level counts, with
// go-gpuallocator's pair scores (gpuallocator/besteffort_policy.go,
// calculateGPUPairScore): SYS 10, NODE 20, PHB 30, PXB 40, PIX 50, NV#
// 100 per link. NUMA nodes are unknown, so only the links decide.
func TestPreferredLinkLevels(t *testing.T) {
	nv := topoNode(t,
		"X    NV12 SYS  SYS",
		"NV12 X    SYS  SYS",
		"SYS  SYS  X    NODE",
		"SYS  SYS  NODE X")
	pcie := topoNode(t,
		"X   PHB SYS SYS SYS SYS",
		"PHB X   SYS SYS SYS SYS",
		"SYS SYS X   PXB SYS SYS",
		"SYS SYS PXB X   SYS SYS",
		"SYS SYS SYS SYS X   PIX",
		"SYS SYS SYS SYS PIX X")
	for _, tc := range []struct {
		name  string
		n     *device.Node
		avail []int
		size  int
		want  string
	}{
		// The node: {2,3} (NODE, 20) beats {1,2} and {1,3} (SYS, 10).
		{"NODE over SYS", &nv, []int{1, 2, 3}, 2, "2,3"},
		{"NV12 first", &nv, []int{0, 1, 2, 3}, 2, "0,1"},
		// {0,1,2} and {0,1,3} score 1200+10+10; lowest indices.
		{"3 of 4", &nv, []int{0, 1, 2, 3}, 3, "0,1,2"},
		{"PIX over PXB and PHB", &pcie, []int{0, 1, 2, 3, 4, 5}, 2, "4,5"},
		{"PXB over PHB", &pcie, []int{0, 1, 2, 3}, 2, "2,3"},
		{"PHB over SYS", &pcie, []int{0, 1, 2}, 2, "0,1"},
		// {2,3,4,5}: 40+50+4*10 = 130; {0,1,4,5}: 30+50+40 = 120;
		// {0,1,2,3}: 30+40+40 = 110.
		{"4 of 6", &pcie, []int{0, 1, 2, 3, 4, 5}, 4, "2,3,4,5"},
	} {
		p := testPlugin(t, tc.n, configv1.DefaultConfig(), "nvidia.com/gpu")
		got, err := Preferred(tc.n, p.res, p.byID, gpuIDs(tc.n, tc.avail...), nil, tc.size, configv1.ReplicaSpread)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := indices(tc.n, got); s != tc.want {
			t.Errorf("%s: got GPUs %s, want %s", tc.name, s, tc.want)
		}
	}
}

func TestPreferredReplicas(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	c := testConfig(t, "sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}")
	p := testPlugin(t, &n, c, "nvidia.com/gpu")
	rep := func(g, r int) string { return fmt.Sprintf("%s::%d", n.GPUs[g].UUID, r) }
	var all, partial []string
	for g := 0; g < 4; g++ {
		for r := 0; r < 4; r++ {
			all = append(all, rep(g, r))
			if g > 0 || r >= 2 {
				partial = append(partial, rep(g, r)) // GPU 0 has replicas 0, 1 in use
			}
		}
	}
	for _, tc := range []struct {
		name, policy string
		avail, must  []string
		size         int
		want         string
	}{
		{"spread 2 of all", configv1.ReplicaSpread, all, nil, 2, "0::0,1::0"},
		{"pack 2 of all", configv1.ReplicaPack, all, nil, 2, "0::0,0::1"},
		// GPU 0 has 2 free replicas, the others 4: spread avoids GPU 0.
		{"spread 3 of partial", configv1.ReplicaSpread, partial, nil, 3, "1::0,2::0,3::0"},
		// pack fills GPU 0 first, then the lowest free GPU.
		{"pack 3 of partial", configv1.ReplicaPack, partial, nil, 3, "0::2,0::3,1::0"},
		{"spread with must", configv1.ReplicaSpread, all, []string{rep(2, 3)}, 2, "0::0,2::3"},
		{"pack with must", configv1.ReplicaPack, all, []string{rep(2, 3)}, 2, "2::0,2::3"},
	} {
		got, err := Preferred(&n, p.res, p.byID, tc.avail, tc.must, tc.size, tc.policy)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := indices(&n, got); s != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, s, tc.want)
		}
	}
}

// milliUnits returns, per GPU, the range of milli-GPU units in ids, e.g.
// "2:500-799" (units are consecutive in every case below).
func milliUnits(n *device.Node, ids []string) string {
	first, last, count := map[int]int{}, map[int]int{}, map[int]int{}
	for _, id := range ids {
		u, k, _ := strings.Cut(id, "::m")
		g, _, _ := n.GPUByUUID(u)
		var unit int
		fmt.Sscan(k, &unit)
		if count[g.Index] == 0 || unit < first[g.Index] {
			first[g.Index] = unit
		}
		if count[g.Index] == 0 || unit > last[g.Index] {
			last[g.Index] = unit
		}
		count[g.Index]++
	}
	var out []string
	for g := range count {
		out = append(out, fmt.Sprintf("%d:%d-%d", g, first[g], last[g]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestPreferredMilli(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	p := testPlugin(t, &n, testConfig(t, "gpuplane: {milliGPU: true}"), "gpuplane.io/gpu-milli")
	unit := func(g, k int) string { return fmt.Sprintf("%s::m%d", n.GPUs[g].UUID, k) }
	// Free: GPU 0 units 800-999 (200), GPU 1 all (1000), GPU 2 units
	// 500-999 (500), GPU 3 all (1000).
	var avail []string
	for g, from := range []int{800, 0, 500, 0} {
		for k := from; k < 1000; k++ {
			avail = append(avail, unit(g, k))
		}
	}
	for _, tc := range []struct {
		name string
		must []string
		size int
		want string
	}{
		// Best fit: the GPU with the fewest free units that holds it all.
		{"300: GPU 2 (500 free)", nil, 300, "2:500-799"},
		{"150: GPU 0 (200 free)", nil, 150, "0:800-949"},
		{"200: GPU 0 exactly", nil, 200, "0:800-999"},
		// GPUs 1 and 3 tie with 1000 free: the lower index.
		{"600: GPU 1", nil, 600, "1:0-599"},
		{"must-include on GPU 3", []string{unit(3, 7)}, 3, "3:0-7"},
		// No GPU holds 1100: packed as replicas are, GPU 0 (fewest free)
		// first, then GPU 2, then GPU 1; Allocate refuses it.
		{"1100: packed", nil, 1100, "0:800-999 1:0-399 2:500-999"},
	} {
		got, err := Preferred(&n, p.res, p.byID, avail, tc.must, tc.size, configv1.ReplicaSpread)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := milliUnits(&n, got); s != tc.want || len(got) != tc.size {
			t.Errorf("%s: got %s (%d units), want %s", tc.name, s, len(got), tc.want)
		}
	}
}

func TestPreferredErrors(t *testing.T) {
	n := testNode(t, "dgx1-v100")
	p := testPlugin(t, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	all := gpuIDs(&n, 0, 1, 2, 3)
	for _, tc := range []struct {
		avail, must []string
		size        int
		want        string
	}{
		{append(all, "GPU-nope"), nil, 2, `available devices: unknown device ID "GPU-nope"`},
		{all, []string{"GPU-nope"}, 2, `must-include devices: unknown device ID "GPU-nope"`},
		{all, nil, 5, "allocation size 5: want between 0 (must-include) and 4 (available)"},
		{all, all[:3], 2, "allocation size 2: want between 3"},
	} {
		_, err := Preferred(&n, p.res, p.byID, tc.avail, tc.must, tc.size, configv1.ReplicaSpread)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestPreferredGreedyLargeNode(t *testing.T) {
	// 32 GPUs, 4 NVLink islands of 8 (NV4 inside, SYS across): C(32,8) is
	// beyond the exhaustive search, so the greedy path picks one island.
	n := device.Node{}
	for i := 0; i < 32; i++ {
		n.GPUs = append(n.GPUs, device.GPU{Index: i, UUID: fmt.Sprintf("GPU-%02d", i), NUMANode: i / 16})
	}
	n.Links = make([][]device.Link, 32)
	for i := range n.Links {
		n.Links[i] = make([]device.Link, 32)
		for j := range n.Links[i] {
			if i/8 == j/8 {
				n.Links[i][j] = device.Link{Type: device.LinkNVLink, NVLinks: 4}
			} else {
				n.Links[i][j] = device.Link{Type: device.LinkCrossSocket}
			}
		}
	}
	res, err := BuildResources(n, configv1.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlugin(&n, &res[0], configv1.DefaultConfig(), NewHealth(n, nil), t.TempDir())
	var avail []string
	for i := 0; i < 32; i++ {
		avail = append(avail, n.GPUs[i].UUID)
	}
	got, err := Preferred(&n, p.res, p.byID, avail, []string{"GPU-17"}, 8, configv1.ReplicaSpread)
	if err != nil {
		t.Fatal(err)
	}
	if s := indices(&n, got); s != "16,17,18,19,20,21,22,23" {
		t.Errorf("got %s, want island 16-23", s)
	}
}

// FuzzPreferred checks the invariants of Preferred on the cube mesh for
// any available set, must-include set and size: the answer has size
// distinct devices, all available, including every must-include device,
// and no set of that size has a higher link score.
func FuzzPreferred(f *testing.F) {
	f.Add(uint8(0xff), uint8(0x11), uint8(4))
	f.Add(uint8(0xee), uint8(0x00), uint8(4))
	f.Add(uint8(0xff), uint8(0x00), uint8(2))
	n := testNode(f, "dgx1-v100")
	p := testPlugin(f, &n, configv1.DefaultConfig(), "nvidia.com/gpu")
	f.Fuzz(func(t *testing.T, availMask, mustMask, size uint8) {
		var avail, must []int
		for i := 0; i < 8; i++ {
			if availMask&(1<<i) != 0 {
				avail = append(avail, i)
				if mustMask&(1<<i) != 0 {
					must = append(must, i)
				}
			}
		}
		got, err := Preferred(&n, p.res, p.byID, gpuIDs(&n, avail...), gpuIDs(&n, must...), int(size), configv1.ReplicaSpread)
		if int(size) < len(must) || int(size) > len(avail) {
			if err == nil {
				t.Fatalf("size %d with %d must-include of %d available: no error", size, len(must), len(avail))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		for _, id := range got {
			in[id] = true
		}
		if len(got) != int(size) || len(in) != len(got) {
			t.Fatalf("got %v for size %d", got, size)
		}
		for _, id := range gpuIDs(&n, must...) {
			if !in[id] {
				t.Fatalf("must-include %s missing from %v", id, got)
			}
		}
		// score sums go-gpuallocator's pair scores (besteffort_policy.go,
		// calculateGPUPairScore) from the nvidia-smi names of the links.
		score := func(set []int) int {
			s := 0
			for i := range set {
				for j := i + 1; j < len(set); j++ {
					l := n.Links[set[i]][set[j]]
					s += map[string]int{"SYS": 10, "NODE": 20, "PHB": 30, "PXB": 40, "PIX": 50, "NV": 100 * l.NVLinks}[l.Type.String()]
				}
			}
			return s
		}
		var chosen []int
		for _, id := range got {
			g, _, ok := n.GPUByUUID(id)
			if !ok || availMask&(1<<g.Index) == 0 {
				t.Fatalf("%s not available", id)
			}
			chosen = append(chosen, g.Index)
		}
		// Brute force: no valid set beats the answer's link score.
		best := score(chosen)
		for set := 0; set < 256; set++ {
			if set&int(availMask) != set || set&int(availMask&mustMask) != int(availMask&mustMask) || bitsSet(set) != int(size) {
				continue
			}
			var s []int
			for i := 0; i < 8; i++ {
				if set&(1<<i) != 0 {
					s = append(s, i)
				}
			}
			if score(s) > best {
				t.Fatalf("set %v scores %d, more than the answer %v (%d)", s, score(s), chosen, best)
			}
		}
	})
}

func bitsSet(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}
