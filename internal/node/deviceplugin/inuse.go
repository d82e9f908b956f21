// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"fmt"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// The node's truth over any guess: the kubelet hands out its own device
// IDs, but a container given gpuplane-scheduler's choice runs on other
// GPUs, and a pod the scheduler did not place (spec.nodeName set at
// creation, a DaemonSet, another scheduler) runs on the kubelet's. Before
// the agent gives a container any GPU it checks that no other live
// container really holds it, from the kubelet's pod-resources List with
// the given devices (given.go) in place of the kubelet's.

// holding is one container's hold on one GPU.
type holding struct {
	owner    podresources.Owner
	resource string
	// milli is the milli-GPU it holds: device.MilliUnits for a whole GPU,
	// a MIG device or a time-slicing replica of it, one per gpu-milli
	// unit.
	milli int64
}

// gpuUse is the holds on the node's GPUs, by GPU index (in device.Node).
type gpuUse map[int][]holding

// useOf returns the holds of the device-plugin allocations allocs on the
// GPUs of n; devices of no GPU of n (another vendor's) and DRA devices are
// left out.
func useOf(n *device.Node, allocs []podresources.Allocation) gpuUse {
	u := gpuUse{}
	for _, al := range allocs {
		if al.ResourceName == "" {
			continue
		}
		g, milli, ok := gpuOfID(n, device.ID(al.DeviceID))
		if !ok {
			continue
		}
		hs, merged := u[g], false
		for i := range hs {
			if hs[i].owner == al.Owner && hs[i].resource == al.ResourceName {
				hs[i].milli = min(hs[i].milli+milli, device.MilliUnits)
				merged = true
				break
			}
		}
		if !merged {
			hs = append(hs, holding{owner: al.Owner, resource: al.ResourceName, milli: milli})
		}
		u[g] = hs
	}
	return u
}

// gpuOfID returns the index of the GPU of n that device id is (or is a MIG
// device, replica or milli-GPU unit of), and the milli-GPU it holds there.
func gpuOfID(n *device.Node, id device.ID) (gpu int, milli int64, ok bool) {
	uuid := id.UUID()
	for i := range n.GPUs {
		g := &n.GPUs[i]
		match := g.UUID == uuid
		for j := 0; !match && j < len(g.MIG); j++ {
			match = g.MIG[j].UUID == uuid
		}
		if match {
			if id.IsMilli() {
				return i, 1, true
			}
			return i, device.MilliUnits, true
		}
	}
	return 0, 0, false
}

// InUseError refuses a GPU that a live container of another pod holds.
type InUseError struct {
	// GPU and UUID name the GPU.
	GPU  int
	UUID string
	// Holder is the container that holds it, Resource the resource it
	// holds it by.
	Holder   podresources.Owner
	Resource string
	// Pod is the pod refused ("namespace/name"); "" when the kubelet's
	// request names none.
	Pod string
}

func (e *InUseError) Error() string {
	to := "this container"
	if e.Pod != "" {
		to = "pod " + e.Pod
	}
	return fmt.Sprintf("GPU %d (%s) is in use by container %s of pod %s/%s (%s, per the kubelet's pod-resources); refusing to give it to %s too",
		e.GPU, e.UUID, e.Holder.Container, e.Holder.Namespace, e.Holder.Pod, e.Resource, to)
}

// check refuses the GPUs gpus for a container of pod ("namespace/name",
// whose own holds are left out) when another container holds one of them:
// any hold for whole GPUs (milli ≥ device.MilliUnits), and for a share of
// milli, a hold that is not gpu-milli or shares that would sum over a GPU.
func (u gpuUse) check(n *device.Node, gpus []int, milli int64, pod string) error {
	for _, g := range gpus {
		used := int64(0)
		for _, h := range u[g] {
			if h.owner.Namespace+"/"+h.owner.Pod == pod {
				continue
			}
			used += h.milli
			if milli >= device.MilliUnits || h.resource != string(gpuresource.GPUMilli) || used+milli > device.MilliUnits {
				return &InUseError{GPU: g, UUID: n.GPUs[g].UUID, Holder: h.owner, Resource: h.resource, Pod: pod}
			}
		}
	}
	return nil
}

// free returns the GPUs of u no container holds.
func (u gpuUse) free(n *device.Node) map[int]bool {
	out := map[int]bool{}
	for i := range n.GPUs {
		if len(u[i]) == 0 {
			out[i] = true
		}
	}
	return out
}
