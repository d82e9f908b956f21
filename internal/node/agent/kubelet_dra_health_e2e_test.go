// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// taints returns the published device's taints as key=value:effect.
func (d *draEnv) taints(device string) ([]string, error) {
	l, err := d.c.Client.ResourceV1().ResourceSlices().List(d.ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range l.Items {
		for _, dev := range s.Spec.Devices {
			if dev.Name != device {
				continue
			}
			var out []string
			for _, t := range dev.Taints {
				out = append(out, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("device %s not published", device)
}

func (d *draEnv) waitTaints(device string, want ...string) {
	d.t.Helper()
	d.poll(fmt.Sprintf("%s tainted %v", device, want), func() error {
		got, err := d.taints(device)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("taints %v", got)
		}
		return nil
	})
}

// TestRealKubeletDRAHealth: a critical XID (79, the GPU fell off the bus)
// on GPU 0 in the mock's faults file taints its device
// gpu.nvidia.com/xid=79:NoSchedule in the ResourceSlice. Of two pods
// then (a with a claim of class gpu.nvidia.com, b asking nvidia.com/gpu:
// 1), a runs on gpu-1 and b waits:
// the scheduler does not allocate a tainted device. An XID 79 on GPU 1
// taints gpu-1 too, and its pod keeps running (NoSchedule evicts
// nothing). The recovery of GPU 0 (the fault gone from the file) clears
// its taint and the waiting pod runs on gpu-0. The plugin's device health
// stream (dra-health v1, WatchHealthStatus) reaches the pods' status
// (allocatedResourcesStatus, ResourceHealthStatus, beta and on): a's
// device Unhealthy; b, asking nvidia.com/gpu, shows none (below).
func TestRealKubeletDRAHealth(t *testing.T) {
	d := startDRAEnv(t, draTwoGPUs)
	d.waitTaints("gpu-0")
	d.setFaults("faults:\n  - uuid: " + realUUID(0) + "\n    xid: 79\n")
	d.waitTaints("gpu-0", "gpu.nvidia.com/xid=79:NoSchedule")
	d.waitTaints("gpu-1")
	d.createTemplate("gpu", "gpu.nvidia.com", nil)
	d.createClaimPod("a", "gpu") // a claim in the spec: its health reaches the pod's status
	d.waitRunning("a")
	if got := d.devices("a"); !slices.Equal(got, []string{"gpu-1"}) {
		t.Errorf("pod a on %v, want [gpu-1]: gpu-0 is tainted", got)
	}
	d.createLimitsPod("b", map[corev1.ResourceName]string{gpuresource.GPU: "1"})
	t.Logf("pod b with gpu-0 tainted and gpu-1 taken: %s", d.waitUnschedulable("b"))

	d.setFaults("faults:\n  - uuid: " + realUUID(0) + "\n    xid: 79\n  - uuid: " + realUUID(1) + "\n    xid: 79\n")
	d.waitTaints("gpu-1", "gpu.nvidia.com/xid=79:NoSchedule")
	d.setFaults("faults:\n  - uuid: " + realUUID(1) + "\n    xid: 79\n")
	d.waitTaints("gpu-0")
	d.waitRunning("b")
	if got := d.devices("b"); !slices.Equal(got, []string{"gpu-0"}) {
		t.Errorf("pod b on %v, want [gpu-0]", got)
	}
	if err := d.running("a"); err != nil {
		t.Errorf("pod a after its GPU was tainted: %v", err)
	}
	// The kubelet's health stream (the plugin's WatchHealthStatus) puts
	// the device's health in the pod's status: a (its claim in the spec)
	// on gpu-1, now tainted, is Unhealthy there. b, a plain nvidia.com/gpu
	// pod, gets none: kubelet v1.37.2 reports health only for containers
	// with resources.claims (cm/dra/manager.go
	// UpdateAllocatedResourcesStatus), and the claim the scheduler made
	// for an extended resource is not among them.
	health := func(pod, want string) {
		d.poll(fmt.Sprintf("pod %s's device %s in its status", pod, want), func() error {
			p, err := d.pod(pod)
			if err != nil {
				return err
			}
			var got []string
			for _, cs := range p.Status.ContainerStatuses {
				for _, rs := range cs.AllocatedResourcesStatus {
					for _, r := range rs.Resources {
						got = append(got, fmt.Sprintf("%s %s", r.ResourceID, r.Health))
					}
				}
			}
			if len(got) == 1 && strings.HasSuffix(got[0], " "+want) {
				return nil
			}
			return fmt.Errorf("allocatedResourcesStatus %v", got)
		})
	}
	health("a", "Unhealthy")
	p, err := d.pod("b")
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Status.ContainerStatuses[0].AllocatedResourcesStatus; len(st) != 0 {
		t.Errorf("pod b (extended resource): allocatedResourcesStatus %+v, want none", st)
	}
}
