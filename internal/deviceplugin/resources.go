package deviceplugin

import (
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/device"
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
	// Replicas is the time-slicing replica count (1: not shared).
	Replicas int
	// Milli marks gpuplane.io/gpu-milli, whose devices are the milli-GPU
	// units of GPUs (configv1.Extensions.MilliGPU).
	Milli bool
	// Devices are the resource's devices, ordered by GPU, MIG device and
	// replica (or milli-GPU unit).
	Devices []Device
}

// BuildResources works out the resources of node n under configuration c:
// the MIG strategy decides which devices are exposed under which name, and
// time-slicing multiplies them. It fails, naming the GPU, when the node does
// not suit the strategy (single with mixed profiles, for example) or a
// shared resource does not exist on the node. With gpuplane.milliGPU,
// gpuplane.io/gpu-milli lists device.MilliUnits devices per GPU with MIG
// disabled, whatever the MIG strategy. Resources are sorted by name; a
// resource with no devices is left out.
func BuildResources(n device.Node, c *configv1.Config) ([]Resource, error) {
	byName := map[string][]Device{}
	whole := func(i int) {
		byName[configv1.ResourceGPU] = append(byName[configv1.ResourceGPU], Device{UUID: n.GPUs[i].UUID, GPU: i, MIG: -1})
	}
	switch c.Flags.MIGStrategy {
	case configv1.MIGStrategyNone:
		for i := range n.GPUs {
			whole(i)
		}
	case configv1.MIGStrategySingle:
		// A GPU lost at discovery with its MIG mode unknown (NVML answers
		// nothing for it) does not decide the strategy: it is served whole
		// (unhealthy) when MIG is off everywhere else, else not at all.
		lost := map[string]bool{}
		for _, ev := range n.Faults {
			if ev.Kind == device.HealthLost {
				lost[ev.UUID] = true
			}
		}
		var known []int
		for i, g := range n.GPUs {
			if !lost[g.UUID] || g.MIGEnabled {
				known = append(known, i)
			}
		}
		migOn, profile := 0, ""
		for _, i := range known {
			g := n.GPUs[i]
			if g.MIGEnabled {
				migOn++
			}
			for _, m := range g.MIG {
				if profile == "" {
					profile = m.Profile
				} else if m.Profile != profile {
					return nil, fmt.Errorf("migStrategy single: GPU %d (%s) has MIG profile %s besides %s; single needs one profile on every GPU (use mixed)", i, g.UUID, m.Profile, profile)
				}
			}
		}
		switch {
		case migOn == 0:
			for i := range n.GPUs {
				whole(i)
			}
		case migOn < len(known):
			for _, i := range known {
				if g := n.GPUs[i]; !g.MIGEnabled {
					return nil, fmt.Errorf("migStrategy single: GPU %d (%s) has MIG disabled while %d others have it enabled; single needs all or none (use mixed)", i, g.UUID, migOn)
				}
			}
		default:
			for _, i := range known {
				g := n.GPUs[i]
				if len(g.MIG) == 0 {
					return nil, fmt.Errorf("migStrategy single: GPU %d (%s) has MIG enabled but no MIG devices", i, g.UUID)
				}
				for j, m := range g.MIG {
					byName[configv1.ResourceGPU] = append(byName[configv1.ResourceGPU], Device{UUID: m.UUID, GPU: i, MIG: j})
				}
			}
		}
	case configv1.MIGStrategyMixed:
		for i, g := range n.GPUs {
			if !g.MIGEnabled {
				whole(i)
				continue
			}
			for j, m := range g.MIG {
				name := configv1.MIGResource(m.Profile)
				byName[name] = append(byName[name], Device{UUID: m.UUID, GPU: i, MIG: j})
			}
		}
	default:
		return nil, fmt.Errorf("flags.migStrategy: %q; want none, single or mixed", c.Flags.MIGStrategy)
	}
	for i, r := range c.Sharing.TimeSlicing.Resources {
		if len(byName[r.Name]) == 0 {
			return nil, fmt.Errorf("sharing.timeSlicing.resources[%d].name: resource %s does not exist on this node under migStrategy %s", i, r.Name, c.Flags.MIGStrategy)
		}
	}
	var out []Resource
	for name, devs := range byName {
		reps := c.Replicas(name)
		r := Resource{Name: c.SharedName(name, reps), Replicas: reps}
		for _, d := range devs {
			for k := 0; k < reps; k++ {
				d.Replica = k
				d.ID = device.NewID(d.UUID, k, reps)
				r.Devices = append(r.Devices, d)
			}
		}
		out = append(out, r)
	}
	if c.Gpuplane.MilliGPU {
		r := Resource{Name: configv1.ResourceGPUMilli, Replicas: 1, Milli: true}
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

// SocketName returns the socket file name of a resource's server, e.g.
// "gpuplane-nvidia.com-mig-1g.10gb.sock".
func SocketName(resource string) string {
	return "gpuplane-" + strings.ReplaceAll(resource, "/", "-") + ".sock"
}
