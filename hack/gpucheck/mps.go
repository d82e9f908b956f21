// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
	"github.com/gpuplane/gpuplane/internal/node/mps"
)

// mpsReplicas is the replicas of the MPS check: each client 50 % of the
// SMs and half the memory.
const mpsReplicas = 2

// checkMPS serves NVIDIA's sharing.mps (2 replicas) through the device
// plugin in this process, with a test kubelet (kubelettest) on sockets in
// dir, and prints PASS or FAIL lines: the resource registered with
// 2 replicas per GPU; Allocate of one replica of GPU 0 gives its UUID,
// CUDA_MPS_PIPE_DIRECTORY and the pipe and shm mounts; the daemon of GPU 0
// answers its defaults (50 active thread percent, memory/2 pinned). The
// daemons (nvidia-cuda-mps-control) run only while it runs; no GPU
// setting is changed (the compute mode is left as it is).
func checkMPS(ctx context.Context, w io.Writer, b device.Backend, n device.Node, dir string) error {
	root := filepath.Join(dir, "mps")
	cfg, err := configv1.ParseConfig("gpucheck-mps.yaml", []byte(fmt.Sprintf("version: v1\nflags: {mpsRoot: %s}\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: %d}]}}\n", root, mpsReplicas)))
	if err != nil {
		return err
	}
	dp := filepath.Join(dir, "dp")
	if err := os.MkdirAll(dp, 0o755); err != nil {
		return err
	}
	k, err := kubelettest.Start(dp)
	if err != nil {
		return err
	}
	defer k.Stop()
	m, err := deviceplugin.NewManager(ctx, b, cfg, dp)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	p, err := k.Plugin(ctx, "nvidia.com/gpu")
	if err != nil {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("the device plugin under sharing.mps stopped: %v", err)
		default:
		}
		return fmt.Errorf("waiting for nvidia.com/gpu: %w", err)
	}
	devs, err := p.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return len(d) > 0 })
	if err != nil {
		return err
	}
	verdict(w, len(devs) == mpsReplicas*len(n.GPUs), "mps-replicas", "%d devices for %d GPUs × %d replicas", len(devs), len(n.GPUs), mpsReplicas)
	g0 := n.GPUs[0]
	id := string(device.NewID(g0.UUID, 0, mpsReplicas))
	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{id}}}})
	if err != nil {
		verdict(w, false, "mps-allocate", "%v", err)
		return nil
	}
	c := resp.ContainerResponses[0]
	hostPipe := filepath.Join(root, g0.UUID, "pipe")
	ok := c.Envs["NVIDIA_VISIBLE_DEVICES"] == g0.UUID && c.Envs["CUDA_MPS_PIPE_DIRECTORY"] == "/mps/nvidia.com/gpu/pipe" &&
		len(c.Mounts) == 2 && c.Mounts[0].HostPath == hostPipe && c.Mounts[1].ContainerPath == "/dev/shm"
	verdict(w, ok, "mps-allocate", "envs %v, mounts %v", c.Envs, c.Mounts)
	mem := g0.MemoryMiB / mpsReplicas
	for _, q := range []struct{ cmd, want string }{
		{"get_default_active_thread_percentage", "50"},
		{"get_default_device_pinned_mem_limit " + g0.UUID, fmt.Sprintf("%dM", mem)},
	} {
		out, err := mpsQuery(ctx, root, g0.UUID, q.cmd)
		verdict(w, err == nil && strings.HasPrefix(out, q.want), "mps-daemon", "%s: %q (want %s...), %v", q.cmd, out, q.want, err)
	}
	return nil
}

// mpsQuery sends one command to GPU uuid's daemon under root and returns
// its answer.
func mpsQuery(ctx context.Context, root, uuid, cmd string) (string, error) {
	d := mps.New(root, uuid, nil)
	x := exec.CommandContext(ctx, mps.DefaultControl)
	x.Env = append(os.Environ(), "CUDA_MPS_PIPE_DIRECTORY="+d.PipeDir, "CUDA_MPS_LOG_DIRECTORY="+d.LogDir)
	x.Stdin = strings.NewReader(cmd + "\n")
	out, err := x.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// verdict prints "PASS name: detail" or "FAIL name: detail".
func verdict(w io.Writer, ok bool, name, format string, args ...any) {
	v := "PASS"
	if !ok {
		v = "FAIL"
	}
	fmt.Fprintf(w, "%s %s: %s\n", v, name, fmt.Sprintf(format, args...))
}
