// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package podresourcestest is a kubelet pod-resources API v1 server on a unix
// socket for tests: it answers List (and Get) from a list of pods the test
// sets, and can be made slow or stopped and restarted.
package podresourcestest

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Server is a fake kubelet pod-resources server.
type Server struct {
	v1.UnimplementedPodResourcesListerServer

	path string

	mu    sync.Mutex
	pods  []*v1.PodResources
	delay time.Duration
	grpc  *grpc.Server
	lists int
}

// Start serves on a new unix socket at path (removed first if present).
func Start(path string) (*Server, error) {
	s := &Server{path: path}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the socket path.
func (s *Server) Path() string { return s.path }

// Restart starts serving again after Stop; the pods set before are kept.
func (s *Server) Restart() error {
	if err := os.Remove(s.path); err != nil && !os.IsNotExist(err) {
		return err
	}
	l, err := net.Listen("unix", s.path)
	if err != nil {
		return fmt.Errorf("pod-resources test server: %w", err)
	}
	g := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(g, s)
	s.mu.Lock()
	s.grpc = g
	s.mu.Unlock()
	go func() { _ = g.Serve(l) }()
	return nil
}

// Stop stops serving and removes the socket, as a kubelet restart does.
func (s *Server) Stop() {
	s.mu.Lock()
	g := s.grpc
	s.grpc = nil
	s.mu.Unlock()
	if g != nil {
		g.Stop()
	}
	_ = os.Remove(s.path)
}

// SetPods replaces the pods List returns.
func (s *Server) SetPods(pods ...*v1.PodResources) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = pods
}

// SetDelay makes every List wait d before answering (or until the caller's
// deadline).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Lists returns how many List calls the server has answered or started.
func (s *Server) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// List returns every pod set by SetPods.
func (s *Server) List(ctx context.Context, _ *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	s.mu.Lock()
	s.lists++
	pods, delay := s.pods, s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &v1.ListPodResourcesResponse{PodResources: pods}, nil
}

// Get returns one pod set by SetPods.
func (s *Server) Get(_ context.Context, req *v1.GetPodResourcesRequest) (*v1.GetPodResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pods {
		if p.GetName() == req.GetPodName() && p.GetNamespace() == req.GetPodNamespace() {
			return &v1.GetPodResourcesResponse{PodResources: p}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "pod %s/%s not found", req.GetPodNamespace(), req.GetPodName())
}

// Pod builds a pod of the given containers.
func Pod(namespace, name string, containers ...*v1.ContainerResources) *v1.PodResources {
	return &v1.PodResources{Namespace: namespace, Name: name, Containers: containers}
}

// Container builds a container holding the device IDs of one resource.
func Container(name, resource string, ids ...string) *v1.ContainerResources {
	return &v1.ContainerResources{
		Name:    name,
		Devices: []*v1.ContainerDevices{{ResourceName: resource, DeviceIds: ids}},
	}
}

// DRAContainer builds a container holding DRA devices of one claim.
func DRAContainer(name, claimNamespace, claimName string, devices ...*v1.ClaimResource) *v1.ContainerResources {
	return &v1.ContainerResources{
		Name:             name,
		DynamicResources: []*v1.DynamicResource{{ClaimNamespace: claimNamespace, ClaimName: claimName, ClaimResources: devices}},
	}
}

// ClaimDevice builds one allocated device of a claim, with its CDI device
// names; a non-empty shareID is the allocation's share of the device.
func ClaimDevice(driver, pool, device, shareID string, cdi ...string) *v1.ClaimResource {
	r := &v1.ClaimResource{DriverName: driver, PoolName: pool, DeviceName: device}
	if shareID != "" {
		r.ShareId = &shareID
	}
	for _, n := range cdi {
		r.CdiDevices = append(r.CdiDevices, &v1.CDIDevice{Name: n})
	}
	return r
}
