// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package kubelettest is a test kubelet: the device-plugin Registration
// service (v1beta1) on kubelet.sock in a directory, which, like the real
// kubelet, connects back to each registered plugin and follows its
// ListAndWatch stream.
package kubelettest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/util/validation"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// isExtendedResourceName is the kubelet's test of a device plugin's
// resource name (k8s.io/kubernetes pkg/apis/core/v1/helper
// IsExtendedResourceName, v1.37.2): a domain-prefixed name outside
// kubernetes.io, not starting "requests.", that is a qualified name once
// prefixed "requests." (so "+" and names over 63 characters are refused).
func isExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+name)) == 0
}

// Kubelet is a running test kubelet.
type Kubelet struct {
	pluginapi.UnimplementedRegistrationServer

	dir    string
	server *grpc.Server

	mu      sync.Mutex
	plugins map[string]*Plugin // by resource name, the latest registration
	regs    []*pluginapi.RegisterRequest
	refuse  func(*pluginapi.RegisterRequest) error
	changed chan struct{} // closed and replaced on every change
}

// Plugin is the kubelet's view of one registered plugin.
type Plugin struct {
	pluginapi.DevicePluginClient
	// Request is the registration request.
	Request *pluginapi.RegisterRequest

	k       *Kubelet
	conn    *grpc.ClientConn
	devices []*pluginapi.Device // latest ListAndWatch list
	first   []*pluginapi.Device // first ListAndWatch list
	updates int                 // ListAndWatch responses received
	closed  bool
}

// Start removes the plugin sockets left in dir (as the kubelet does when it
// starts) and serves Registration on dir/kubelet.sock.
func Start(dir string) (*Kubelet, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sock") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	l, err := net.Listen("unix", filepath.Join(dir, pluginapi.KubeletSocket[len(pluginapi.DevicePluginPath):]))
	if err != nil {
		return nil, err
	}
	k := &Kubelet{dir: dir, server: grpc.NewServer(), plugins: map[string]*Plugin{}, changed: make(chan struct{})}
	pluginapi.RegisterRegistrationServer(k.server, k)
	go func() { _ = k.server.Serve(l) }()
	return k, nil
}

// Stop stops serving, removes kubelet.sock and closes the plugin
// connections.
func (k *Kubelet) Stop() {
	k.server.Stop()
	_ = os.Remove(filepath.Join(k.dir, "kubelet.sock"))
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.plugins {
		p.closed = true
		p.conn.Close()
	}
	k.plugins = map[string]*Plugin{}
	k.notifyLocked()
}

func (k *Kubelet) notifyLocked() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// Register accepts a plugin's registration, connects to its endpoint and
// starts following its ListAndWatch stream.
func (k *Kubelet) Register(ctx context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	if r.Version != pluginapi.Version {
		return nil, fmt.Errorf("unsupported version %q", r.Version)
	}
	// The real kubelet's check and message (kubelet v1.37.2,
	// devicemanager/plugin/v1beta1 server.Register and errInvalidResourceName).
	if !isExtendedResourceName(r.ResourceName) {
		return nil, fmt.Errorf("the ResourceName %q is invalid", r.ResourceName)
	}
	// Stricter than the real kubelet, which joins the endpoint to its
	// directory whatever it is.
	if strings.Contains(r.Endpoint, "/") {
		return nil, fmt.Errorf("endpoint %q must be a file name in the device-plugin directory", r.Endpoint)
	}
	k.mu.Lock()
	refuse := k.refuse
	k.mu.Unlock()
	if refuse != nil {
		if err := refuse(r); err != nil {
			return nil, err
		}
	}
	conn, err := grpc.NewClient("unix://"+filepath.Join(k.dir, r.Endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	p := &Plugin{DevicePluginClient: pluginapi.NewDevicePluginClient(conn), Request: r, k: k, conn: conn}
	k.mu.Lock()
	if old := k.plugins[r.ResourceName]; old != nil {
		old.closed = true
		old.conn.Close()
	}
	k.plugins[r.ResourceName] = p
	k.regs = append(k.regs, r)
	k.notifyLocked()
	k.mu.Unlock()
	go p.follow()
	return &pluginapi.Empty{}, nil
}

func (p *Plugin) follow() {
	stream, err := p.ListAndWatch(context.Background(), &pluginapi.Empty{})
	if err != nil {
		return
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return
		}
		p.k.mu.Lock()
		p.devices = resp.Devices
		if p.first == nil {
			p.first = resp.Devices
		}
		p.updates++
		p.k.notifyLocked()
		p.k.mu.Unlock()
	}
}

// Refuse makes Register refuse a request when f returns an error, as the
// real kubelet refuses, e.g., an invalid resource name; f runs once per
// request, outside the kubelet's lock.
func (k *Kubelet) Refuse(f func(*pluginapi.RegisterRequest) error) {
	k.mu.Lock()
	k.refuse = f
	k.mu.Unlock()
}

// Registrations returns every registration request so far, in order.
func (k *Kubelet) Registrations() []*pluginapi.RegisterRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*pluginapi.RegisterRequest(nil), k.regs...)
}

// Wait blocks until cond, evaluated under the kubelet's lock after each
// change, holds or ctx is done.
func (k *Kubelet) Wait(ctx context.Context, cond func(k *Kubelet) bool) error {
	for {
		k.mu.Lock()
		ok, ch := cond(k), k.changed
		k.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// PluginLocked returns the latest registered plugin of a resource; call it
// only inside a Wait condition.
func (k *Kubelet) PluginLocked(resource string) *Plugin { return k.plugins[resource] }

// ResourcesLocked returns the registered resource names; call it only
// inside a Wait condition.
func (k *Kubelet) ResourcesLocked() []string {
	var out []string
	for n := range k.plugins {
		out = append(out, n)
	}
	return out
}

// DevicesLocked returns the plugin's latest device list (nil before the
// first); call it only inside a Wait condition.
func (p *Plugin) DevicesLocked() []*pluginapi.Device { return p.devices }

// Plugin waits until resource is registered and has sent its first device
// list, and returns it.
func (k *Kubelet) Plugin(ctx context.Context, resource string) (*Plugin, error) {
	var p *Plugin
	err := k.Wait(ctx, func(k *Kubelet) bool {
		p = k.plugins[resource]
		return p != nil && p.devices != nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %s: %w", resource, err)
	}
	return p, nil
}

// FirstDevices returns the plugin's first device list (nil before it).
func (p *Plugin) FirstDevices() []*pluginapi.Device {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.first
}

// Devices returns the plugin's latest device list.
func (p *Plugin) Devices() []*pluginapi.Device {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.devices
}

// WaitDevices waits until cond holds for the plugin's latest device list.
func (p *Plugin) WaitDevices(ctx context.Context, cond func([]*pluginapi.Device) bool) ([]*pluginapi.Device, error) {
	var devs []*pluginapi.Device
	err := p.k.Wait(ctx, func(*Kubelet) bool {
		devs = p.devices
		return devs != nil && cond(devs)
	})
	return devs, err
}

// RegistrationCountLocked returns the number of registrations so far; call
// it only inside a Wait condition.
func (k *Kubelet) RegistrationCountLocked() int { return len(k.regs) }
