// Package deviceplugin serves the kubelet device-plugin API (v1beta1) for a
// node's GPUs: one gRPC server per resource (nvidia.com/gpu, the MIG
// resources, their time-sliced variants) on a unix socket in the kubelet's
// device-plugin directory, registered with the kubelet and re-registered
// when the kubelet restarts. Its configuration is api/config/v1.
package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/device"
)

// Plugin is the device-plugin server of one resource. Allocate and
// GetPreferredAllocation depend only on the discovered node, the
// configuration and the request, never on earlier calls, so a restarted
// agent serves the kubelet's existing allocations as before.
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	node   *device.Node
	res    *Resource
	cfg    *configv1.Config
	health *Health
	byID   map[device.ID]*Device

	socket string // absolute path of the server's unix socket

	mu     sync.Mutex
	server *grpc.Server
	stop   chan struct{} // closed when the server stops
}

// NewPlugin returns the (not yet started) server of resource r, listening
// at dir/SocketName(r.Name) once started.
func NewPlugin(n *device.Node, r *Resource, c *configv1.Config, h *Health, dir string) *Plugin {
	p := &Plugin{node: n, res: r, cfg: c, health: h, byID: make(map[device.ID]*Device, len(r.Devices)), socket: filepath.Join(dir, SocketName(r.Name))}
	for i := range r.Devices {
		p.byID[r.Devices[i].ID] = &r.Devices[i]
	}
	return p
}

// Resource returns the plugin's resource.
func (p *Plugin) Resource() *Resource { return p.res }

// Socket returns the path of the plugin's unix socket.
func (p *Plugin) Socket() string { return p.socket }

// Start removes a stale socket file, listens on the socket and serves in
// the background. It stops a running server first.
func (p *Plugin) Start() error {
	p.Stop()
	if err := os.Remove(p.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing stale socket: %w", err)
	}
	l, err := net.Listen("unix", p.socket)
	if err != nil {
		return fmt.Errorf("%s: %w", p.res.Name, err)
	}
	s := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(s, p)
	stop := make(chan struct{})
	p.mu.Lock()
	p.server, p.stop = s, stop
	p.mu.Unlock()
	go func() {
		if err := s.Serve(l); err != nil {
			klog.ErrorS(err, "Device-plugin server stopped", "resource", p.res.Name)
		}
	}()
	return nil
}

// Stop stops the server, ending its ListAndWatch streams, and removes the
// socket.
func (p *Plugin) Stop() {
	p.mu.Lock()
	s, stop := p.server, p.stop
	p.server, p.stop = nil, nil
	p.mu.Unlock()
	if s == nil {
		return
	}
	close(stop)
	s.Stop()
	_ = os.Remove(p.socket)
}

// Register registers the plugin with the kubelet at kubeletSocket.
func (p *Plugin) Register(ctx context.Context, kubeletSocket string) error {
	conn, err := grpc.NewClient("unix://"+kubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials())) // a local unix socket: no TLS
	if err != nil {
		return fmt.Errorf("registering %s: %w", p.res.Name, err)
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(p.socket),
		ResourceName: p.res.Name,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	if err != nil {
		return fmt.Errorf("registering %s with the kubelet at %s: %w", p.res.Name, kubeletSocket, err)
	}
	return nil
}

// GetDevicePluginOptions reports that GetPreferredAllocation is available.
func (p *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

// Devices returns the resource's devices with their current health.
func (p *Plugin) Devices() []*pluginapi.Device {
	out := make([]*pluginapi.Device, len(p.res.Devices))
	for i, d := range p.res.Devices {
		g := &p.node.GPUs[d.GPU]
		h := pluginapi.Healthy
		if !p.health.Healthy(d.UUID) {
			h = pluginapi.Unhealthy
		}
		out[i] = &pluginapi.Device{ID: string(d.ID), Health: h}
		if g.NUMANode >= 0 {
			out[i].Topology = &pluginapi.TopologyInfo{Nodes: []*pluginapi.NUMANode{{ID: int64(g.NUMANode)}}}
		}
	}
	return out
}

// ListAndWatch sends the device list, then again after every health change,
// until the kubelet hangs up or the server stops.
func (p *Plugin) ListAndWatch(_ *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	wake, cancel := p.health.Subscribe()
	defer cancel()
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	var last []*pluginapi.Device
	for {
		devs := p.Devices()
		if !sameHealth(last, devs) {
			if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
				return err
			}
			last = devs
		}
		select {
		case <-wake:
		case <-stop:
			return nil
		case <-stream.Context().Done():
			return nil
		}
	}
}

func sameHealth(a, b []*pluginapi.Device) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Health != b[i].Health {
			return false
		}
	}
	return true
}

// GetPreferredAllocation answers with the best devices per container; see
// Preferred.
func (p *Plugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, cr := range req.ContainerRequests {
		ids, err := Preferred(p.node, p.res, p.byID, cr.AvailableDeviceIDs, cr.MustIncludeDeviceIDs, int(cr.AllocationSize), p.cfg.Gpuplane.ReplicaPolicy)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", p.res.Name, err)
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// Allocate returns, per container, the environment, CDI devices,
// annotations and device nodes that give it the requested devices. It
// refuses an unknown or unhealthy device ID, and more than one replica of
// a shared resource under failRequestsGreaterThanOne.
func (p *Plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, cr := range req.ContainerRequests {
		cresp, err := p.allocate(cr.DevicesIds)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", p.res.Name, err)
		}
		resp.ContainerResponses = append(resp.ContainerResponses, cresp)
	}
	return resp, nil
}

func (p *Plugin) allocate(ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	if len(ids) == 0 {
		return nil, errors.New("no device IDs in the request")
	}
	if p.res.Replicas > 1 && p.cfg.Sharing.TimeSlicing.FailRequestsGreaterThanOne && len(ids) > 1 {
		return nil, fmt.Errorf("request for %d replicas refused: failRequestsGreaterThanOne allows one replica per container", len(ids))
	}
	var uuids []string
	gpus := map[int]bool{}
	seen := map[string]bool{}
	for _, id := range ids {
		d, ok := p.byID[device.ID(id)]
		if !ok {
			return nil, fmt.Errorf("unknown device ID %q", id)
		}
		if !p.health.Healthy(d.UUID) {
			return nil, fmt.Errorf("device %q is unhealthy", id)
		}
		gpus[d.GPU] = true
		if !seen[d.UUID] {
			seen[d.UUID] = true
			uuids = append(uuids, d.UUID)
		}
	}
	r := &pluginapi.ContainerAllocateResponse{}
	if p.cfg.HasListStrategy(configv1.ListEnvvar) {
		r.Envs = map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(uuids, ",")}
	}
	cdi := make([]string, len(uuids))
	for i, u := range uuids {
		cdi[i] = configv1.CDIKind + "=" + u
	}
	if p.cfg.HasListStrategy(configv1.ListCDICRI) {
		for _, name := range cdi {
			r.CdiDevices = append(r.CdiDevices, &pluginapi.CDIDevice{Name: name})
		}
	}
	if p.cfg.HasListStrategy(configv1.ListCDIAnnotations) {
		r.Annotations = map[string]string{"cdi.k8s.io/gpuplane-device-plugin_" + strings.ReplaceAll(p.res.Name, "/", "_"): strings.Join(cdi, ",")}
	}
	if p.cfg.Flags.Plugin.PassDeviceSpecs {
		for _, path := range []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"} {
			r.Devices = append(r.Devices, &pluginapi.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"})
		}
		idx := make([]int, 0, len(gpus))
		for g := range gpus {
			idx = append(idx, g)
		}
		sort.Ints(idx)
		for _, g := range idx {
			path := fmt.Sprintf("/dev/nvidia%d", p.node.GPUs[g].Minor)
			r.Devices = append(r.Devices, &pluginapi.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"})
		}
	}
	return r, nil
}

// PreStartContainer is not required by this plugin and does nothing.
func (p *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
