// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The setups NVIDIA's device plugin serves (github.com/NVIDIA/k8s-device-plugin),
// each a node with the labels gpu-feature-discovery publishes
// (internal/lm/resource.go baseLabeler: product, "-SHARED" when shared and
// not renamed (getProductName), count, replicas, sharing-strategy;
// internal/lm/mig-strategy.go: mig.strategy, "<gpu>-MIG-<profile>" and the
// count of MIG devices under single, replicas "0" on MIG-enabled GPUs,
// which it labels without sharing) and the allocatable the plugin serves
// (internal/rm/device_map.go updateDeviceMapWithReplicas: each GPU as
// replicas devices "<uuid>::<i>", under the rename when one is set;
// api/config/v1/replicas.go: renameByDefault renames nvidia.com/gpu to
// nvidia.com/gpu.shared), and running pods.

// runningItem is a pod bound to node, phase Running.
func runningItem(name, node, requests string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"ns"},"spec":{"nodeName":"` + node + `","containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi",` + requests + `}}}]},"status":{"phase":"Running"}}`
}

// runningPods returns n running pods on node, each with requests.
func runningPods(prefix, node, requests string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, runningItem(fmt.Sprintf("%s-%d", prefix, i), node, requests))
	}
	return out
}

// leftOut returns the pods the warnings leave out ("pod "ns/x" does not
// fit what node ... has left: left out").
func leftOut(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "left out") {
			if i := strings.Index(l, `pod "`); i >= 0 {
				out = append(out, strings.SplitN(l[i+5:], `"`, 2)[0])
			}
		}
	}
	return out
}

// nvidiaModes are the --sharing modes TestSnapshotNVIDIASetups runs, ""
// for none (each pod's share as the snapshot reads it).
var nvidiaModes = []string{"", "exclusive", "mig", "timeslice:2"}

// TestSnapshotNVIDIASetups: per setup, node n0 has gpus GPUs and holds
// exactly fit[mode] of its running pods p-0, p-1, ... (bound pods are put
// in place in order), worked out by hand below, in each --sharing mode;
// the rest are left out. A pending CPU pod makes the snapshot one to
// place. Replicas (time-slicing, MPS) stay replicas in every mode; a MIG
// instance is a share of slices/7 of a GPU (gpu.MIGShareMilli: 1g 142,
// 3g 428 milli-GPU), which, as docs/simulate.md says of running pods
// under --sharing, holds a whole GPU under exclusive and one of 2
// replicas under timeslice:2 (a share ≤ 500), and its instance under mig.
func TestSnapshotNVIDIASetups(t *testing.T) {
	for _, tc := range []struct {
		name, labels, alloc, req string
		gpus                     int
		fit                      [4]int // by nvidiaModes
	}{
		// Time-slicing, default naming: 4 L4 x 4 replicas = 16
		// nvidia.com/gpu, product "-SHARED"; 16 / 4 = 4 GPUs. A pod's
		// device is one replica, 1000 / 4 = 250 milli-GPU, in every mode:
		// 4 a GPU, 16 fit.
		{"time-slicing", `"nvidia.com/gpu.product":"NVIDIA-L4-SHARED","nvidia.com/gpu.count":"4","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"time-slicing"`,
			`"nvidia.com/gpu":"16"`, `"nvidia.com/gpu":"1"`, 4, [4]int{16, 16, 16, 16}},
		// The same with renameByDefault: no "-SHARED" (getProductName:
		// isShared && !isRenamed), 1 L4 as 4 nvidia.com/gpu.shared: 4 fit.
		{"time-slicing renamed", `"nvidia.com/gpu.product":"NVIDIA-L4","nvidia.com/gpu.count":"1","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"time-slicing"`,
			`"nvidia.com/gpu.shared":"4"`, `"nvidia.com/gpu.shared":"1"`, 1, [4]int{4, 4, 4, 4}},
		// MPS (sharing.go SharingStrategy "mps"): 2 A100-40GB x 4 = 8
		// devices, 2 GPUs, 250 milli-GPU each: 8 fit.
		{"mps", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB-SHARED","nvidia.com/gpu.count":"2","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"mps"`,
			`"nvidia.com/gpu":"8"`, `"nvidia.com/gpu":"1"`, 2, [4]int{8, 8, 8, 8}},
		// Time-slicing 3 ways, no sharing-strategy label (gpu-feature-
		// discovery before v0.15.0, which added it with MPS): 2 T4 x 3 =
		// 6; a replica is 1000 / 3 = 333 milli-GPU, 3 a GPU (999): 6 fit.
		{"time-slicing x3, no strategy label", `"nvidia.com/gpu.product":"Tesla-T4-SHARED","nvidia.com/gpu.count":"2","nvidia.com/gpu.replicas":"3"`,
			`"nvidia.com/gpu":"6"`, `"nvidia.com/gpu":"1"`, 2, [4]int{6, 6, 6, 6}},
		// Single MIG strategy: an H100 as 7 x 1g.10gb, served as 7
		// nvidia.com/gpu (count: the MIG devices), ⌈7 / 7⌉ = 1 GPU. A
		// pod's device is one instance, 142 milli-GPU. None: 7 x 142 =
		// 994 ≤ 1000, an 8th 1136: 7 fit. mig: the layout 7 x 1g.10gb: 7.
		// exclusive: a whole GPU each: 1. timeslice:2: a replica of 500
		// each: 2.
		{"mig single", `"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb","nvidia.com/gpu.count":"7","nvidia.com/gpu.replicas":"1","nvidia.com/gpu.sharing-strategy":"none","nvidia.com/mig.strategy":"single"`,
			`"nvidia.com/gpu":"7"`, `"nvidia.com/gpu":"1"`, 1, [4]int{7, 1, 7, 2}},
		// No sharing, no MIG: 2 T4, each pod a whole GPU: 2 fit.
		{"none", `"nvidia.com/gpu.product":"Tesla-T4","nvidia.com/gpu.count":"2","nvidia.com/gpu.replicas":"1","nvidia.com/gpu.sharing-strategy":"none","nvidia.com/mig.strategy":"none"`,
			`"nvidia.com/gpu":"2"`, `"nvidia.com/gpu":"1"`, 2, [4]int{2, 2, 2, 2}},
		// Mixed: 2 A100-80GB, both MIG-enabled as 3g.40gb + 3g.40gb: 4
		// nvidia.com/mig-3g.40gb, no nvidia.com/gpu; gpu-feature-discovery
		// labels the MIG-enabled GPUs without sharing, replicas "0"
		// (mig-strategy.go newGPULabelers, resource.go getReplicas; its
		// test "sharing is not applied to multiple MIG device; replicas
		// is zero"). A pod's device is 428 milli-GPU. None: 2 a GPU (856;
		// 3 are 1284): 4. mig: 2 instances a GPU: 4. exclusive: 2.
		// timeslice:2: 428 ≤ 500, a replica: 4.
		{"mig mixed", `"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"2","nvidia.com/gpu.replicas":"0","nvidia.com/gpu.sharing-strategy":"none","nvidia.com/mig.strategy":"mixed"`,
			`"nvidia.com/mig-3g.40gb":"4"`, `"nvidia.com/mig-3g.40gb":"1"`, 2, [4]int{4, 2, 4, 4}},
	} {
		most := slices.Max(tc.fit[:])
		items := append([]string{nodeItem("n0", tc.labels, tc.alloc), podItem("cpu", `"cpu":"1"`)}, runningPods("p", "n0", tc.req, most+1)...)
		for i, sharing := range nvidiaModes {
			rep, stderr := runItems(t, sharing, items...)
			if rep.GPUs != tc.gpus {
				t.Errorf("%s, --sharing %q: %d GPUs, want %d", tc.name, sharing, rep.GPUs, tc.gpus)
			}
			var want []string
			for k := tc.fit[i]; k <= most; k++ {
				want = append(want, fmt.Sprintf("ns/p-%d", k))
			}
			if out := leftOut(stderr); !slices.Equal(out, want) {
				t.Errorf("%s, --sharing %q: left out %v, want %v\n%s", tc.name, sharing, out, want, stderr)
			}
		}
	}
}
