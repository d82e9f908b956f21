// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

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
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Plugin is the device-plugin server of one resource. Allocate and
// GetPreferredAllocation depend only on the discovered node, the
// configuration and the request, never on earlier calls, so a restarted
// agent serves the kubelet's existing allocations as before; with
// Assignments, Allocate gives a pod that carries gpuplane-scheduler's
// choice the chosen GPUs instead (see Allocate).
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	node   *device.Node
	res    *Resource
	cfg    *configv1.Config
	health *Health
	byID   map[device.ID]*Device
	assign *Assignments // nil: no API access

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

// UseAssignments makes Allocate look up gpuplane-scheduler's choice
// through a (see Allocate); call it before Start.
func (p *Plugin) UseAssignments(a *Assignments) { p.assign = a }

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
// Preferred. It does not look up the scheduler's choice: the kubelet's
// request names no pod, and several pods bound to the node may wait for
// devices at once, so the kubelet's device IDs of a pod with a choice are
// only a count (Allocate gives the chosen GPUs).
func (p *Plugin) GetPreferredAllocation(ctx context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, cr := range req.ContainerRequests {
		avail := p.unheld(ctx, cr.AvailableDeviceIDs, cr.MustIncludeDeviceIDs, int(cr.AllocationSize))
		ids, err := Preferred(p.node, p.res, p.byID, avail, cr.MustIncludeDeviceIDs, int(cr.AllocationSize), p.cfg.Gpuplane.ReplicaPolicy)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", p.res.Name, err)
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// Allocate returns, per container, the environment, CDI devices,
// annotations and device nodes that give it the requested devices. It
// refuses an unknown or unhealthy device ID, more than one replica of a
// shared resource under failRequestsGreaterThanOne, and gpu-milli units of
// more than one GPU; a gpu-milli container gets configv1.EnvGPUShare.
//
// With Assignments (API access), Allocate of whole GPUs (nvidia.com/gpu,
// not time-sliced, not MIG devices) and of gpu-milli first looks for the
// pod that carries gpuplane-scheduler's choice for a request of this size
// (Assignments.Take); when there is one, the container gets the chosen
// GPUs rather than the kubelet's device IDs, which then only count.
func (p *Plugin) Allocate(ctx context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, cr := range req.ContainerRequests {
		cresp, err := p.allocateContainer(ctx, cr.DevicesIds)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", p.res.Name, err)
		}
		resp.ContainerResponses = append(resp.ContainerResponses, cresp)
	}
	return resp, nil
}

// unheld returns, of the whole GPUs avail that the kubelet offers, those
// that no container really holds (a container given the scheduler's
// choice runs on other GPUs than the kubelet's IDs of it), with must, when
// they are enough for size; else avail. So the kubelet's own pick, which
// checkKubelet would refuse on a held GPU, falls on a free one when it can.
func (p *Plugin) unheld(ctx context.Context, avail, must []string, size int) []string {
	if p.assign == nil || !p.assignable() || p.res.Milli || p.assign.kubelet == nil {
		return avail
	}
	view, err := p.assign.kubelet(ctx)
	if err != nil {
		return avail
	}
	free := useOf(p.node, p.assign.given.real(view)).free(p.node)
	var out []string
	for _, id := range avail {
		g, _, ok := gpuOfID(p.node, device.ID(id))
		if slices.Contains(must, id) || ok && free[g] {
			out = append(out, id)
		}
	}
	if len(out) < size {
		return avail
	}
	return out
}

// assignable reports whether the scheduler's choice applies to the
// resource: whole GPUs, unshared, or gpu-milli.
func (p *Plugin) assignable() bool {
	if p.res.Milli {
		return true
	}
	return p.res.Name == resource.GPU && p.res.Replicas == 1 && len(p.res.Devices) > 0 && p.res.Devices[0].MIG < 0
}

func (p *Plugin) allocateContainer(ctx context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	if p.assign == nil || !p.assignable() {
		return p.allocate(ids)
	}
	if _, err := lookup(p.byID, ids); err != nil {
		return nil, err
	}
	var out *pluginapi.ContainerAllocateResponse
	found, err := p.assign.Take(ctx, p.res.Name, int64(len(ids)), func(c Choice) error {
		var err error
		if out, err = p.allocateChoice(c, int64(len(ids))); err != nil {
			return err
		}
		if err := p.checkChoice(c, int64(len(ids))); err != nil {
			return err
		}
		uuids := make([]string, len(c.GPUs))
		for i, g := range c.GPUs {
			uuids[i] = p.node.GPUs[g].UUID // checked by allocateChoice
		}
		p.assign.record(c, p.res.Name, int64(len(ids)), uuids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		if err := p.checkKubelet(ctx, ids); err != nil {
			return nil, err
		}
		return p.allocate(ids)
	}
	return out, nil
}

// checkChoice refuses the scheduler's choice c for a request of size when
// a live container of another pod holds one of its GPUs, per the
// kubelet's pod-resources List that Take read (its devices as really
// given: inuse.go), or when that List failed. Without the kubelet's view
// (no pod-resources socket) nothing can be checked.
func (p *Plugin) checkChoice(c Choice, size int64) error {
	if p.assign.kubelet == nil {
		return nil
	}
	if c.viewErr != nil {
		return fmt.Errorf("the chosen GPUs %v cannot be checked against the kubelet's pod-resources, so none is given: %w", c.GPUs, c.viewErr)
	}
	milli := int64(device.MilliUnits)
	if p.res.Milli {
		milli = size
	}
	return useOf(p.node, p.assign.given.real(c.view)).check(p.node, c.GPUs, milli, c.Pod)
}

// checkKubelet refuses the kubelet's device IDs ids (a pod without the
// scheduler's choice) when another container really holds a GPU of
// theirs: one given the scheduler's choice, which the kubelet counts on
// the device IDs it picked, not on the GPUs it runs on, or one holding
// the same GPU by another resource (a share of gpuplane.io/gpu-milli
// beside a whole nvidia.com/gpu).
func (p *Plugin) checkKubelet(ctx context.Context, ids []string) error {
	if p.assign.kubelet == nil {
		return nil
	}
	view, err := p.assign.kubelet(ctx)
	if err != nil {
		return fmt.Errorf("the kubelet's devices %v cannot be checked against the kubelet's pod-resources, so none is given: %w", ids, err)
	}
	need := map[int]int64{} // milli-GPU asked per GPU
	for _, id := range ids {
		if g, milli, ok := gpuOfID(p.node, device.ID(id)); ok { // else allocate refuses it
			need[g] = min(need[g]+milli, device.MilliUnits)
		}
	}
	u := useOf(p.node, p.assign.given.real(view))
	for _, g := range slices.Sorted(maps.Keys(need)) {
		if err := u.check(p.node, []int{g}, need[g], ""); err != nil {
			return err
		}
	}
	return nil
}

// allocateChoice returns the response that gives the container the GPUs of
// the scheduler's choice c for a request of size (GPUs, or milli-GPU of
// gpu-milli). It fails when c does not fit the request or the node: a GPU
// index the node lacks, UUIDs that are not the node's, an unhealthy GPU.
func (p *Plugin) allocateChoice(c Choice, size int64) (*pluginapi.ContainerAllocateResponse, error) {
	want := fmt.Sprintf("%d GPUs", size)
	share := int64(device.MilliUnits)
	if p.res.Milli {
		want, share = "1 GPU", size
	}
	if p.res.Milli && len(c.GPUs) != 1 || !p.res.Milli && int64(len(c.GPUs)) != size {
		return nil, fmt.Errorf("annotation %s names %d GPUs; the container asks for %d of %s, which takes %s", resource.AnnotationGPUs, len(c.GPUs), size, p.res.Name, want)
	}
	if c.Share != 0 && c.Share != share {
		return nil, fmt.Errorf("annotation %s=%d; the container asks for %d of %s, which takes %d milli-GPU per GPU", resource.AnnotationGPUShare, c.Share, size, p.res.Name, share)
	}
	uuids := make([]string, len(c.GPUs))
	for i, g := range c.GPUs {
		if g >= len(p.node.GPUs) {
			return nil, fmt.Errorf("annotation %s: GPU %d does not exist on this node, which has %d GPUs (0..%d)", resource.AnnotationGPUs, g, len(p.node.GPUs), len(p.node.GPUs)-1)
		}
		gpu := &p.node.GPUs[g]
		if c.UUIDs != nil && c.UUIDs[i] != gpu.UUID {
			return nil, fmt.Errorf("annotation %s: GPU %d is %s on this node, not %s", resource.AnnotationGPUUUIDs, g, gpu.UUID, c.UUIDs[i])
		}
		if !p.health.Healthy(gpu.UUID) {
			return nil, fmt.Errorf("chosen GPU %d (%s) is unhealthy", g, gpu.UUID)
		}
		uuids[i] = gpu.UUID
	}
	r := p.response(uuids, c.GPUs)
	if p.res.Milli {
		setEnv(r, configv1.EnvGPUShare, strconv.FormatInt(share, 10))
	}
	klog.InfoS("Allocated the scheduler's choice", "pod", c.Pod, "resource", p.res.Name, "gpus", c.GPUs, "share", share)
	return r, nil
}

// allocate gives the container the devices the kubelet chose.
func (p *Plugin) allocate(ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	if len(ids) == 0 {
		return nil, errors.New("no device IDs in the request")
	}
	if p.res.Replicas > 1 && p.cfg.FailRequestsGreaterThanOne() && len(ids) > 1 {
		return nil, fmt.Errorf("request for %d replicas refused: failRequestsGreaterThanOne allows one replica per container", len(ids))
	}
	var uuids []string
	var gpus []int
	seen := map[string]bool{}
	seenGPU := map[int]bool{}
	seenID := map[string]bool{}
	for _, id := range ids {
		d, ok := p.byID[device.ID(id)]
		if !ok {
			return nil, fmt.Errorf("unknown device ID %q", id)
		}
		if !p.health.Healthy(d.UUID) {
			return nil, fmt.Errorf("device %q is unhealthy", id)
		}
		seenID[id] = true
		if !seenGPU[d.GPU] {
			seenGPU[d.GPU] = true
			gpus = append(gpus, d.GPU)
		}
		if !seen[d.UUID] {
			seen[d.UUID] = true
			uuids = append(uuids, d.UUID)
		}
	}
	if p.res.Milli && len(gpus) > 1 {
		return nil, fmt.Errorf("the %d milli-GPU units span %d GPUs; a share must lie on one GPU", len(seenID), len(gpus))
	}
	r := p.response(uuids, gpus)
	if p.res.MPS {
		if err := p.mpsResponse(r, gpus); err != nil {
			return nil, err
		}
	}
	if p.res.Milli {
		setEnv(r, configv1.EnvGPUShare, strconv.Itoa(len(seenID)))
	}
	return r, nil
}

func setEnv(r *pluginapi.ContainerAllocateResponse, k, v string) {
	if r.Envs == nil {
		r.Envs = map[string]string{}
	}
	r.Envs[k] = v
}

// response passes the devices uuids (GPU or MIG device UUIDs, each once)
// of the GPUs gpus (indices in the node) to the container, as the device
// list strategies and passDeviceSpecs say.
func (p *Plugin) response(uuids []string, gpus []int) *pluginapi.ContainerAllocateResponse {
	r := &pluginapi.ContainerAllocateResponse{}
	if p.cfg.HasListStrategy(configv1.ListEnvvar) {
		r.Envs = map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(uuids, ",")}
	}
	cdiResponse(r, p.cfg, uuids)
	if p.cfg.Flags.Plugin.PassDeviceSpecs {
		for _, path := range []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"} {
			r.Devices = append(r.Devices, &pluginapi.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"})
		}
		idx := append([]int(nil), gpus...)
		sort.Ints(idx)
		for _, g := range idx {
			path := fmt.Sprintf("/dev/nvidia%d", p.node.GPUs[g].Minor)
			r.Devices = append(r.Devices, &pluginapi.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"})
		}
	}
	return r
}

// PreStartContainer is not required by this plugin and does nothing.
func (p *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
