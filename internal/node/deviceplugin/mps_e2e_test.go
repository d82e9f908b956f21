// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/mps/mpstest"
)

// TestE2EMPS: NVIDIA's sharing.mps config (k8s-device-plugin 0.15 and
// later) on the mock DGX H100 (8 H100 80GB, 81559 MiB each as NVML
// reports it, profiles/dgx-h100.yaml), 4 replicas
// renamed by default: the agent starts one MPS control daemon per GPU
// (a fake nvidia-cuda-mps-control on PATH records its runs) under
// flags.mpsRoot, each with CUDA_VISIBLE_DEVICES its GPU and its own pipe
// and log directories, told NVIDIA's per-replica limits: active threads
// 100/4 = 25 %, pinned memory 81559/4 = 20389.75, 20389 MiB (NVIDIA's
// integer division). The kubelet sees
// nvidia.com/gpu.shared, 4 replicas per GPU (<UUID>::<n>). Allocate of a
// replica of GPU 3 gives NVIDIA_VISIBLE_DEVICES its UUID,
// CUDA_MPS_PIPE_DIRECTORY=/mps/nvidia.com/gpu.shared/pipe (NVIDIA's
// container root /mps and resource name) and mounts GPU 3's pipe
// directory there and <mps root>/shm at /dev/shm; two replicas are
// refused (failRequestsGreaterThanOne is true by default under MPS, as
// in NVIDIA's config.go). SIGTERM sends each daemon quit and removes its
// directory.
func TestE2EMPS(t *testing.T) {
	record := mpstest.Fake(t)
	dir := shortDir(t)
	root := filepath.Join(dir, "mps")
	k := startKubelet(t, dir)
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {mpsRoot: "+root+"}\nsharing:\n  mps:\n    renameByDefault: true\n    resources:\n    - {name: nvidia.com/gpu, replicas: 4}\n")
	a := startAgent(t, dir, "--mock-profile", "dgx-h100", "--config", cfg)
	ctx := a.ctx
	waitResources(t, ctx, k, []string{"nvidia.com/gpu.shared"})
	n := discover(t, "dgx-h100")

	seen := 0
	var want []string
	for _, g := range n.GPUs {
		env := fmt.Sprintf("|%s|%s|%s|", g.UUID, filepath.Join(root, g.UUID, "pipe"), filepath.Join(root, g.UUID, "log"))
		want = append(want, "-d"+env, env+"set_default_active_thread_percentage 25", env+"set_default_device_pinned_mem_limit "+g.UUID+" 20389M")
	}
	if got := mpstest.Records(t, record, &seen); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("control runs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	p, err := k.Plugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		t.Fatal(err)
	}
	got, healthy := ids(p.Devices())
	var wantIDs []string
	for _, g := range n.GPUs {
		for r := 0; r < 4; r++ {
			wantIDs = append(wantIDs, string(device.NewID(g.UUID, r, 4)))
		}
	}
	if strings.Join(got, ",") != strings.Join(wantIDs, ",") || !healthy {
		t.Errorf("devices %v (healthy %v), want %v", got, healthy, wantIDs)
	}
	g3 := n.GPUs[3].UUID
	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{string(device.NewID(g3, 2, 4))}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.ContainerResponses[0]
	pipe := "/mps/nvidia.com/gpu.shared/pipe"
	if c.Envs["NVIDIA_VISIBLE_DEVICES"] != g3 || c.Envs["CUDA_MPS_PIPE_DIRECTORY"] != pipe || len(c.Mounts) != 2 ||
		c.Mounts[0].ContainerPath != pipe || c.Mounts[0].HostPath != filepath.Join(root, g3, "pipe") ||
		c.Mounts[1].ContainerPath != "/dev/shm" || c.Mounts[1].HostPath != filepath.Join(root, "shm") {
		t.Errorf("allocate: envs %v, mounts %v", c.Envs, c.Mounts)
	}
	if _, err := os.Stat(filepath.Join(root, "shm")); err != nil {
		t.Errorf("shm directory: %v", err)
	}
	two := []string{string(device.NewID(g3, 0, 4)), string(device.NewID(g3, 1, 4))}
	if _, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: two}}}); err == nil ||
		!strings.Contains(err.Error(), "failRequestsGreaterThanOne allows one replica per container") {
		t.Errorf("two replicas: %v", err)
	}

	a.stop(t)
	want = nil
	for _, g := range n.GPUs {
		want = append(want, fmt.Sprintf("||%s|%s|quit", filepath.Join(root, g.UUID, "pipe"), filepath.Join(root, g.UUID, "log")))
	}
	if got := mpstest.Records(t, record, &seen); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs at stop:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, g := range n.GPUs {
		if _, err := os.Stat(filepath.Join(root, g.UUID)); !os.IsNotExist(err) {
			t.Errorf("daemon directory of %s left: %v", g.UUID, err)
		}
	}
}

// TestE2EMPSWithoutProgram: with sharing.mps and no
// nvidia-cuda-mps-control on PATH, the agent exits at start saying so.
func TestE2EMPSWithoutProgram(t *testing.T) {
	if _, err := os.Stat("/usr/bin/nvidia-cuda-mps-control"); err == nil {
		t.Skip("nvidia-cuda-mps-control is installed")
	}
	dir := shortDir(t)
	t.Setenv("PATH", "/usr/bin:/bin")
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {mpsRoot: "+filepath.Join(dir, "mps")+"}\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n")
	a := startAgent(t, dir, "--mock-profile", "dgx-h100", "--config", cfg)
	if err := a.wait(t); err == nil || !strings.Contains(a.out.String(), "sharing.mps needs NVIDIA's MPS control program nvidia-cuda-mps-control on the agent's PATH") {
		t.Errorf("agent exit %v, output:\n%s", err, a.out)
	}
}
