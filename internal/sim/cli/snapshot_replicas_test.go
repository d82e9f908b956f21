// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestSnapshotPendingReplicas: ts-0 serves 4 L4 under time-slicing with
// NVIDIA's default naming, 4 replicas each: 16 nvidia.com/gpu devices,
// product "-SHARED" (the device plugin's internal/rm replicates each GPU
// "replicas" times, and kube-scheduler counts the devices). Two running
// pods hold one device each (2 x 250 milli-GPU). Pending, in order: "two"
// asks for 2 devices, w-0 ... w-11 for 1 each, "over" for 1. As
// kube-scheduler binds them, 2 + 2 + 12 = 16 devices fit and "over" (the
// 17th) does not; the simulator leaves one pod of one device (in its own
// order) pending likewise: each pending pod is served as the running ones are
// read, k devices k x 1000 / 4 milli-GPU of one GPU (cluster.Node.Served):
// "two" 500, each w 250; 500 + 500 + 3,000 = 4,000, ts-0 full. Replicas
// stay replicas in every --sharing mode, so every mode agrees.
func TestSnapshotPendingReplicas(t *testing.T) {
	items := []string{
		nodeItem("ts-0", `"nvidia.com/gpu.product":"NVIDIA-L4-SHARED","nvidia.com/gpu.count":"4","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"time-slicing"`, `"nvidia.com/gpu":"16"`),
		runningItem("r-0", "ts-0", `"nvidia.com/gpu":"1"`),
		runningItem("r-1", "ts-0", `"nvidia.com/gpu":"1"`),
		podItem("two", `"nvidia.com/gpu":"2"`),
	}
	for i := range 12 {
		items = append(items, podItem(fmt.Sprintf("w-%d", i), `"nvidia.com/gpu":"1"`))
	}
	items = append(items, podItem("over", `"nvidia.com/gpu":"1"`))
	for _, sharing := range nvidiaModes {
		rep, stderr := runItems(t, sharing, items...)
		if rep.GPUs != 4 {
			t.Errorf("--sharing %q: %d GPUs, want 4", sharing, rep.GPUs)
		}
		// The pending pods are placed in the simulator's order, not the
		// file's: count devices. 14 of the 14 pods' 15 devices fit
		// (16 less the 2 running), all on ts-0; the one left is a pod of
		// one device when "two" came early enough, else "two", whose 500
		// the 250s left may split over two GPUs.
		devices, left := 0, []string{}
		for _, p := range rep.SnapshotPods {
			k := 1
			if p.Pod == "ns/two" {
				k = 2
			}
			switch p.Node {
			case "ts-0":
				devices += k
			case "":
				left = append(left, p.Pod)
			default:
				t.Errorf("--sharing %q: %s on %s", sharing, p.Pod, p.Node)
			}
		}
		if devices < 13 || devices > 14 || len(left) != 1 || (devices == 13) != (left[0] == "ns/two") {
			t.Errorf("--sharing %q: %d devices placed, left %v; want 14 and one pod of one device (or 13 and ns/two)", sharing, devices, left)
		}
		if len(rep.SnapshotPods) != 14 {
			t.Errorf("--sharing %q: %d pending pods, want 14", sharing, len(rep.SnapshotPods))
		}
		if strings.Contains(stderr, "pending pods ask for") {
			t.Errorf("--sharing %q: a warning that pending pods get whole GPUs of other nodes:\n%s", sharing, stderr)
		}
	}
}
