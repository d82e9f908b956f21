// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package cri is a fake container runtime for a real kubelet: the
// upstream CRI fake (k8s.io/cri-client/pkg/fake over
// k8s.io/cri-api/pkg/apis/testing's FakeRuntimeService, which accepts any
// image and "runs" every container without running anything) served on a
// unix socket, recording what the kubelet asked of each CreateContainer as
// one JSON file per container in a directory that tests and users read
// (ReadRecords).
//
// The record is what a real runtime would be given: the environment (a
// device plugin's NVIDIA_VISIBLE_DEVICES), the device nodes, the mounts, the
// CDI devices and the annotations, and, from the sandbox, the pod's
// namespace, name and UID.
package cri

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuplane/gpuplane/internal/atomicfile"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// Container is the record of one CreateContainer request.
type Container struct {
	// Seq counts the CreateContainer requests of one Runtime, from 1.
	Seq int `json:"seq"`
	// ID is the container ID the runtime returned, SandboxID its pod's.
	ID        string `json:"id"`
	SandboxID string `json:"sandboxID"`
	// Namespace, Pod and PodUID come from the sandbox config; Container
	// and Attempt from the container's metadata.
	Namespace string   `json:"namespace"`
	Pod       string   `json:"pod"`
	PodUID    string   `json:"podUID"`
	Container string   `json:"container"`
	Attempt   uint32   `json:"attempt"`
	Image     string   `json:"image"`
	Command   []string `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	// Env is the container's environment; a key given twice keeps its
	// last value, as a runtime does.
	Env         map[string]string `json:"env,omitempty"`
	Devices     []Device          `json:"devices,omitempty"`
	CDIDevices  []string          `json:"cdiDevices,omitempty"`
	Mounts      []Mount           `json:"mounts,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Created     time.Time         `json:"created"`
}

// Device is a device node given to the container.
type Device struct {
	ContainerPath string `json:"containerPath"`
	HostPath      string `json:"hostPath"`
	Permissions   string `json:"permissions,omitempty"`
}

// Mount is a bind mount given to the container.
type Mount struct {
	ContainerPath string `json:"containerPath"`
	HostPath      string `json:"hostPath"`
	ReadOnly      bool   `json:"readOnly,omitempty"`
}

// Runtime is a running fake runtime.
type Runtime struct {
	*fake.RemoteRuntime

	socket, dir string
	server      *grpc.Server

	mu   sync.Mutex
	seq  int
	stop chan struct{}
	done sync.WaitGroup
}

// Start serves the fake runtime (both the runtime and the image service)
// on the unix socket path, replacing a stale socket file there, and
// records every CreateContainer in recordDir, which it creates; records
// already there are kept and numbered after.
func Start(socket, recordDir string) (*Runtime, error) {
	if err := os.MkdirAll(recordDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	old, err := ReadRecords(recordDir)
	if err != nil {
		l.Close()
		return nil, err
	}
	r := &Runtime{RemoteRuntime: fake.NewFakeRemoteRuntime(), socket: socket, dir: recordDir, server: grpc.NewServer(), stop: make(chan struct{})}
	if len(old) > 0 { // a restarted runtime numbers on
		r.seq = old[len(old)-1].Seq
	}
	rs := r.RuntimeService
	rs.Lock()
	// What fake.RemoteRuntime.Start sets (it would serve its own type,
	// without our CreateContainer), and the cgroup driver the kubelet
	// asks the runtime for.
	rs.FakeStatus = &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}
	rs.FakeLinuxConfiguration = &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}
	rs.Unlock()
	// The kubelet refuses an image of size 0, the fake's default.
	r.ImageService.SetFakeImageSize(1 << 20)
	runtimeapi.RegisterRuntimeServiceServer(r.server, r)
	runtimeapi.RegisterImageServiceServer(r.server, r)
	r.done.Add(2)
	go func() {
		defer r.done.Done()
		_ = r.server.Serve(l)
	}()
	go func() {
		defer r.done.Done()
		r.trimCalls()
	}()
	return r, nil
}

// trimCalls empties the fakes' call logs every 10 seconds: nothing reads
// them, and the kubelet's polling would grow them without bound in a
// long run.
func (r *Runtime) trimCalls() {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		r.RuntimeService.Lock()
		r.RuntimeService.Called = nil
		r.RuntimeService.Unlock()
		r.ImageService.Lock()
		r.ImageService.Called = nil
		r.ImageService.Unlock()
	}
}

// Endpoint is the kubelet's containerRuntimeEndpoint (and
// imageServiceEndpoint) for this runtime: unix://<socket>.
func (r *Runtime) Endpoint() string { return "unix://" + r.socket }

// RecordDir is where the records are written.
func (r *Runtime) RecordDir() string { return r.dir }

// Stop stops serving and removes the socket; the records stay.
func (r *Runtime) Stop() {
	r.mu.Lock()
	select {
	case <-r.stop:
		r.mu.Unlock()
		return
	default:
		close(r.stop)
	}
	r.mu.Unlock()
	r.server.Stop()
	r.done.Wait()
	_ = os.Remove(r.socket)
}

// CreateContainer creates the container in the fake and records the
// request.
func (r *Runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	resp, err := r.RemoteRuntime.CreateContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.seq++
	c := record(r.seq, resp.ContainerId, req)
	err = writeRecord(r.dir, c)
	r.mu.Unlock()
	if err != nil {
		// The kubelet retries a failed CreateContainer; a test that
		// reads the records then sees the failure in the kubelet's log.
		return nil, fmt.Errorf("fake runtime: record container: %w", err)
	}
	return resp, nil
}

func record(seq int, id string, req *runtimeapi.CreateContainerRequest) Container {
	cfg, sb := req.GetConfig(), req.GetSandboxConfig()
	c := Container{
		Seq: seq, ID: id, SandboxID: req.GetPodSandboxId(),
		Namespace: sb.GetMetadata().GetNamespace(), Pod: sb.GetMetadata().GetName(), PodUID: sb.GetMetadata().GetUid(),
		Container: cfg.GetMetadata().GetName(), Attempt: cfg.GetMetadata().GetAttempt(),
		Image:   cfg.GetImage().GetImage(),
		Command: cfg.GetCommand(), Args: cfg.GetArgs(),
		Annotations: cfg.GetAnnotations(), Labels: cfg.GetLabels(),
		Created: time.Now().UTC(),
	}
	for _, e := range cfg.GetEnvs() {
		if c.Env == nil {
			c.Env = map[string]string{}
		}
		c.Env[e.GetKey()] = string(e.GetValue())
	}
	for _, d := range cfg.GetDevices() {
		c.Devices = append(c.Devices, Device{ContainerPath: d.GetContainerPath(), HostPath: d.GetHostPath(), Permissions: d.GetPermissions()})
	}
	for _, d := range cfg.GetCDIDevices() {
		c.CDIDevices = append(c.CDIDevices, d.GetName())
	}
	for _, m := range cfg.GetMounts() {
		c.Mounts = append(c.Mounts, Mount{ContainerPath: m.GetContainerPath(), HostPath: m.GetHostPath(), ReadOnly: m.GetReadonly()})
	}
	return c
}

// fileName is a record's file: the sequence number first, so that the
// names sort in request order, then the pod and container.
func fileName(c Container) string {
	return fmt.Sprintf("%06d_%s_%s_%s_%d.json", c.Seq, c.Namespace, c.Pod, c.Container, c.Attempt)
}

// writeRecord writes the record whole (a reader never sees half a file).
func writeRecord(dir string, c Container) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, fileName(c))
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// ReadRecords returns the records in dir in request order.
func ReadRecords(dir string) ([]Container, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Container
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var c Container
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name()), err)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// Find returns the records of one pod's container, oldest first.
func Find(records []Container, namespace, pod, container string) []Container {
	var out []Container
	for _, c := range records {
		if c.Namespace == namespace && c.Pod == pod && c.Container == container {
			out = append(out, c)
		}
	}
	return out
}
