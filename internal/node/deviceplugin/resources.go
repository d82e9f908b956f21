// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Device is one device as the kubelet sees it.
type Device struct {
	// ID is the kubelet device ID: the GPU or MIG device UUID, or
	// replica n's ID when shared by time-slicing.
	ID device.ID
	// UUID is the GPU or MIG device UUID.
	UUID string
	// GPU is the index of the (parent) GPU in device.Node.GPUs.
	GPU int
	// MIG is the index in GPU.MIG of the MIG device, -1 for a whole GPU.
	MIG int
	// Replica is the time-slicing replica number (0 when not shared), or
	// the milli-GPU unit number (0..999) of a gpuplane.io/gpu-milli device.
	Replica int
}

// Resource is one extended resource served by one device-plugin server.
type Resource struct {
	// Name is the resource name, e.g. nvidia.com/gpu or
	// nvidia.com/mig-1g.10gb.shared.
	Name string
	// Replicas is the replica count, time-slicing or MPS (1: not shared).
	Replicas int
	// MPS marks replicas served through MPS (sharing.mps, mps.go).
	MPS bool
	// Milli marks gpuplane.io/gpu-milli, whose devices are the milli-GPU
	// units of GPUs (configv1.Extensions.MilliGPU).
	Milli bool
	// Devices are the resource's devices, ordered by GPU, MIG device and
	// replica (or milli-GPU unit).
	Devices []Device
}

// BuildResources works out the resources of node n under configuration c:
// the MIG strategy decides which devices are exposed under which name, and
// time-slicing multiplies them. It fails when a shared resource does not
// exist on the node and no device was left out. Devices that the strategy cannot serve are left out,
// not an error, so the agent keeps serving the rest; Excluded says which
// and why. With gpuplane.milliGPU, gpuplane.io/gpu-milli lists
// device.MilliUnits devices per GPU with MIG disabled, whatever the MIG
// strategy. Resources are sorted by name; a resource with no devices is
// left out.
func BuildResources(n device.Node, c *configv1.Config) ([]Resource, error) {
	byName, excluded, err := migPlan(n, c)
	if err != nil {
		return nil, err
	}
	shared, section := c.SharedResources()
	for i, r := range shared {
		// A resource whose devices the strategy left out is not an error:
		// Excluded reports those.
		if len(byName[r.Name]) == 0 && len(excluded) == 0 {
			return nil, fmt.Errorf("%s.resources[%d].name: resource %s does not exist on this node under migStrategy %s", section, i, r.Name, c.Flags.MIGStrategy)
		}
	}
	var out []Resource
	for name, devs := range byName {
		reps := c.Replicas(name)
		r := Resource{Name: c.SharedName(name, reps), Replicas: reps, MPS: mpsResource(c, reps)}
		for _, d := range devs {
			if r.MPS && d.MIG >= 0 {
				// NVIDIA's plugin: "sharing using MPS is not supported
				// for MIG devices" (internal/plugin/mps.go).
				return nil, fmt.Errorf("%s: sharing using MPS is not supported for MIG devices (GPU %d has MIG devices under migStrategy %s)", section, d.GPU, c.Flags.MIGStrategy)
			}
			for k := 0; k < reps; k++ {
				d.Replica = k
				d.ID = device.NewID(d.UUID, k, reps)
				r.Devices = append(r.Devices, d)
			}
		}
		out = append(out, r)
	}
	if c.Gpuplane.MilliGPU {
		r := Resource{Name: resource.GPUMilli, Replicas: 1, Milli: true}
		for i, g := range n.GPUs {
			if g.MIGEnabled {
				continue
			}
			for k := 0; k < device.MilliUnits; k++ {
				r.Devices = append(r.Devices, Device{ID: device.NewMilliID(g.UUID, k), UUID: g.UUID, GPU: i, MIG: -1, Replica: k})
			}
		}
		if len(r.Devices) > 0 {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Excluded returns, one error each, the GPUs and MIG devices of node n that
// no resource serves under configuration c, as NVIDIA's device plugin and
// gpu-feature-discovery refuse them:
//
//   - under single, every GPU when device.CheckSingleMIG fails (a
//     MIG-enabled GPU without MIG devices, MIG enabled and disabled GPUs,
//     more than one MIG profile): gpu-feature-discovery labels the node
//     <product>-MIG-INVALID with count 0 (k8s-device-plugin
//     internal/lm/mig-strategy.go), so nothing is advertised;
//   - under mixed, a MIG-enabled GPU without MIG devices (NVIDIA's plugin
//     warns "has no MIG devices configured", internal/rm/device_map.go),
//     and a MIG device whose compute instance is smaller than its GPU
//     instance, e.g. 1c.7g.40gb (device.MIGResourceProfile).
func Excluded(n device.Node, c *configv1.Config) []error {
	_, excluded, _ := migPlan(n, c)
	return excluded
}

// migPlan sorts the devices of node n into resources (before time-slicing)
// under c's MIG strategy, and lists those left out.
func migPlan(n device.Node, c *configv1.Config) (map[string][]Device, []error, error) {
	byName := map[string][]Device{}
	var excluded []error
	whole := func(i int) {
		byName[resource.GPU] = append(byName[resource.GPU], Device{UUID: n.GPUs[i].UUID, GPU: i, MIG: -1})
	}
	switch c.Flags.MIGStrategy {
	case configv1.MIGStrategyNone:
		for i := range n.GPUs {
			whole(i)
		}
	case configv1.MIGStrategySingle:
		if err := device.CheckSingleMIG(n); err != nil {
			excluded = append(excluded, fmt.Errorf("migStrategy single: %w; no GPU is advertised as %s (use mixed)", err, resource.GPU))
			break
		}
		anyMIG := false
		for _, g := range n.GPUs {
			anyMIG = anyMIG || g.MIGEnabled
		}
		for i, g := range n.GPUs {
			if !g.MIGEnabled {
				// With MIG on elsewhere, CheckSingleMIG let this GPU
				// through only because it was lost at discovery with its
				// MIG mode unknown: it is not served.
				if !anyMIG {
					whole(i)
				}
				continue
			}
			for j, m := range g.MIG {
				byName[resource.GPU] = append(byName[resource.GPU], Device{UUID: m.UUID, GPU: i, MIG: j})
			}
		}
	case configv1.MIGStrategyMixed:
		for i, g := range n.GPUs {
			if !g.MIGEnabled {
				whole(i)
				continue
			}
			if len(g.MIG) == 0 {
				excluded = append(excluded, fmt.Errorf("migStrategy mixed: GPU %d (%s) has MIG enabled but no MIG devices; nothing is advertised for it", i, g.UUID))
			}
			for j, m := range g.MIG {
				p, err := device.MIGResourceProfile(m.Profile)
				if err != nil {
					excluded = append(excluded, fmt.Errorf("migStrategy mixed: GPU %d (%s) MIG device %s: %w", i, g.UUID, m.UUID, err))
					continue
				}
				name := resource.MIGResource(p)
				byName[name] = append(byName[name], Device{UUID: m.UUID, GPU: i, MIG: j})
			}
		}
	default:
		return nil, nil, fmt.Errorf("flags.migStrategy: %q; want none, single or mixed", c.Flags.MIGStrategy)
	}
	return byName, excluded, nil
}

// SocketName returns the socket file name of a resource's server, e.g.
// "gpuplane-nvidia.com-mig-1g.10gb.sock".
func SocketName(resource string) string {
	return "gpuplane-" + strings.ReplaceAll(resource, "/", "-") + ".sock"
}
