// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package podresources keeps a cached copy of which container each device is
// allocated to (device plugins' devices, and DRA devices:
// ContainerResources.DynamicResources, GA since Kubernetes 1.36), read from
// the kubelet's pod-resources API v1 (List) over its
// unix socket and refreshed in the background. Readers never wait on the
// kubelet: Current returns the last successful List, or nil while the socket
// is missing, slow or failing.
package podresources

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// DefaultSocket is the kubelet's pod-resources socket.
const DefaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

// maxMessageBytes is the largest List response accepted, the kubelet's own
// limit for the pod-resources API (16 MiB).
const maxMessageBytes = 16 << 20

// Owner is the container a device is allocated to.
type Owner struct {
	Namespace, Pod, Container string
}

// Allocation is one device allocated to one container: a device plugin's
// (ResourceName set) or a DRA driver's (Driver set).
type Allocation struct {
	// ResourceName is the extended resource, e.g. nvidia.com/gpu; empty
	// for a DRA device.
	ResourceName string
	// DeviceID is the device plugin's ID: a GPU UUID, a MIG device UUID,
	// or a time-slicing replica ID "<uuid>::<n>". For a DRA device, the
	// first CDI device the driver gave it, e.g. "nvidia.com/gpu=GPU-..."
	// (empty when none).
	DeviceID string
	Owner    Owner
	// DRA is the DRA device's claim and allocation result; zero for a
	// device plugin's device.
	DRA DRADevice
}

// DRADevice is one device of a ResourceClaim's allocation as the kubelet
// reports it (DynamicResource and ClaimResource of pod-resources v1).
type DRADevice struct {
	// ClaimNamespace and ClaimName name the ResourceClaim.
	ClaimNamespace, ClaimName string
	// Driver, Pool and Device name the allocated device, e.g.
	// gpu.nvidia.com, the node's name, gpu-0.
	Driver, Pool, Device string
	// ShareID is the allocation's share of a device that allows multiple
	// allocations; empty when the device is allocated whole.
	ShareID string
}

// Mapping is one successful List: every device allocation on the node. It is
// never modified after it is published.
type Mapping struct {
	Allocations []Allocation
	// Pods are the pods the kubelet listed ("namespace/name"), with or
	// without devices: since v1.34 (KubeletPodResourcesListUseActivePods)
	// its active pods, which include a pod whose admission is under way
	// (HandlePodAdditions adds it to the pod manager before admitting it).
	Pods map[string]bool
	// Time is when the List answered.
	Time time.Time
}

// Watcher refreshes a Mapping from the kubelet in the background.
type Watcher struct {
	socket   string
	interval time.Duration
	timeout  time.Duration
	conn     *grpc.ClientConn
	client   v1.PodResourcesListerClient

	current atomic.Pointer[Mapping]
	errors  atomic.Uint64
}

// NewWatcher returns a Watcher of the pod-resources socket at path, listing
// every interval with a deadline of timeout per call. It does not connect:
// a missing socket is an error of each refresh, not of NewWatcher.
func NewWatcher(path string, interval, timeout time.Duration) (*Watcher, error) {
	if path == "" {
		return nil, errors.New("pod-resources socket: empty path")
	}
	if interval <= 0 || timeout <= 0 {
		return nil, fmt.Errorf("pod-resources: interval %v and timeout %v must be positive", interval, timeout)
	}
	// gRPC reads "unix://run/x.sock" as authority "run": dial an absolute
	// path.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	// Reconnect at most one interval after the kubelet comes back, instead
	// of gRPC's default backoff of up to two minutes.
	bo := backoff.DefaultConfig
	bo.BaseDelay = min(100*time.Millisecond, interval)
	bo.MaxDelay = interval
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: timeout}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes)),
	)
	if err != nil {
		return nil, fmt.Errorf("pod-resources socket %s: %w", path, err)
	}
	return &Watcher{
		socket:   path,
		interval: interval,
		timeout:  timeout,
		conn:     conn,
		client:   v1.NewPodResourcesListerClient(conn),
	}, nil
}

// Run refreshes at once and then every interval until ctx is done, then
// closes the connection.
func (w *Watcher) Run(ctx context.Context) {
	defer w.conn.Close()
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		_ = w.Refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh lists the allocations once. On success it publishes the new
// Mapping; on failure it clears the current one (so no stale pod is
// reported) and counts the error. When ctx itself is done it changes
// nothing and returns ctx's error.
func (w *Watcher) Refresh(ctx context.Context) error {
	m, err := w.List(ctx)
	if err != nil && ctx.Err() != nil {
		// The caller gave up (shutdown), not the kubelet: keep the mapping.
		return ctx.Err()
	}
	if err != nil {
		w.current.Store(nil)
		w.errors.Add(1)
		return err
	}
	w.current.Store(m)
	return nil
}

// List asks the kubelet now, with the Watcher's deadline, and returns the
// answer without publishing it; an error names the socket.
func (w *Watcher) List(ctx context.Context) (*Mapping, error) {
	lctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	resp, err := w.client.List(lctx, &v1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("pod-resources socket %s: List: %w", w.socket, err)
	}
	m := &Mapping{Allocations: Flatten(resp.GetPodResources()), Pods: map[string]bool{}, Time: time.Now()}
	for _, p := range resp.GetPodResources() {
		m.Pods[p.GetNamespace()+"/"+p.GetName()] = true
	}
	return m, nil
}

// Close closes the connection of a Watcher that is not Run.
func (w *Watcher) Close() error { return w.conn.Close() }

// Admitting reports whether the kubelet listed the pod (namespace/name)
// but has given its container no device of resource: the state of a pod
// whose Allocate call is under way, since the kubelet records a
// container's devices only once Allocate has answered
// (pkg/kubelet/cm/devicemanager allocateContainerResources, v1.37.2).
func (m *Mapping) Admitting(pod, container, resource string) bool {
	if !m.Pods[pod] {
		return false
	}
	for _, a := range m.Allocations {
		if a.ResourceName == resource && a.Owner.Container == container && a.Owner.Namespace+"/"+a.Owner.Pod == pod {
			return false
		}
	}
	return true
}

// Current returns the last successful List, or nil when the last refresh
// failed or none has run yet.
func (w *Watcher) Current() *Mapping { return w.current.Load() }

// Errors returns how many refreshes have failed since the Watcher started.
func (w *Watcher) Errors() uint64 { return w.errors.Load() }

// Flatten turns a List response into one Allocation per device ID and
// container, then one per DRA device and container, skipping containers
// without devices.
func Flatten(pods []*v1.PodResources) []Allocation {
	var out []Allocation
	for _, p := range pods {
		for _, c := range p.GetContainers() {
			owner := Owner{Namespace: p.GetNamespace(), Pod: p.GetName(), Container: c.GetName()}
			for _, d := range c.GetDevices() {
				for _, id := range d.GetDeviceIds() {
					out = append(out, Allocation{ResourceName: d.GetResourceName(), DeviceID: id, Owner: owner})
				}
			}
			for _, dr := range c.GetDynamicResources() {
				for _, r := range dr.GetClaimResources() {
					a := Allocation{Owner: owner, DRA: DRADevice{
						ClaimNamespace: dr.GetClaimNamespace(), ClaimName: dr.GetClaimName(),
						Driver: r.GetDriverName(), Pool: r.GetPoolName(), Device: r.GetDeviceName(), ShareID: r.GetShareId(),
					}}
					if cdi := r.GetCdiDevices(); len(cdi) > 0 {
						a.DeviceID = cdi[0].GetName()
					}
					out = append(out, a)
				}
			}
		}
	}
	return out
}
