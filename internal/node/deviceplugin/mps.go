// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/mps"
)

// MPS on the device-plugin path: NVIDIA's sharing.mps (k8s-device-plugin
// 0.15 and later: internal/plugin/mps.go, cmd/mps-control-daemon/mps),
// served as NVIDIA's plugin serves it, with these differences: one MPS
// control daemon per GPU (NVIDIA's: one per resource, over all its GPUs),
// started and stopped by the agent itself (NVIDIA's: a separate
// mps-control-daemon DaemonSet), with the shared code of the DRA path
// (internal/node/mps). Each daemon is told NVIDIA's per-replica limits:
// a default active thread percentage of 100/replicas and a default pinned
// device memory limit of the GPU's memory/replicas (MiB, rounded down),
// NVIDIA's activeThreadPercentage and perDevicePinnedDeviceMemoryLimits.
// The GPU's compute mode is left as it is (NVIDIA's daemon sets
// EXCLUSIVE_PROCESS with nvidia-smi).
const (
	// mpsContainerRoot is where a container sees the MPS directories,
	// NVIDIA's mps.ContainerRoot: the pipe directory at
	// /mps/<resource>/pipe.
	mpsContainerRoot = "/mps"
	// mpsContainerShm is where a container sees the daemons' shared
	// memory, NVIDIA's (ShmDir).
	mpsContainerShm = "/dev/shm"
)

// mpsDaemon is GPU uuid's daemon under root (flags.mpsRoot): its
// directory is root/<uuid>.
func mpsDaemon(root, uuid string) mps.Daemon { return mps.New(root, uuid, []string{uuid}) }

// mpsSettings are the limits of each of replicas clients of GPU g:
// 100/replicas percent of the SMs, g's memory/replicas.
func mpsSettings(g device.GPU, replicas int) mps.Settings {
	pct := 100 / replicas
	s := mps.Settings{ActiveThreadPercentage: &pct}
	if g.MemoryMiB > 0 {
		s.PinnedMemLimits = map[string]string{g.UUID: fmt.Sprintf("%dM", g.MemoryMiB/int64(replicas))}
	}
	return s
}

// startMPS starts the daemon of every GPU of the MPS resources, once;
// a daemon an earlier agent left is stopped first. On failure it stops
// those it started.
func (m *Manager) startMPS(ctx context.Context) error {
	root := m.cfg.MPSRoot()
	var ctl mps.Control
	for _, p := range m.plugins {
		if !p.res.MPS {
			continue
		}
		if err := ctl.Find(); err != nil {
			return fmt.Errorf("sharing.mps needs NVIDIA's MPS control program %s on the agent's PATH: %w", ctl.Name(), err)
		}
		for _, d := range p.res.Devices {
			if d.Replica != 0 {
				continue
			}
			g := m.node.GPUs[d.GPU]
			dm := mpsDaemon(root, g.UUID)
			m.resetMPS(ctx, dm)
			if err := ctl.Start(ctx, dm, mpsSettings(g, p.res.Replicas)); err != nil {
				m.stopMPS(ctx)
				return fmt.Errorf("sharing.mps: GPU %s: %w", g.UUID, err)
			}
			m.mps = append(m.mps, dm)
		}
	}
	if len(m.mps) > 0 {
		if err := os.MkdirAll(filepath.Join(root, "shm"), 0o755); err != nil {
			m.stopMPS(ctx)
			return fmt.Errorf("sharing.mps: %w", err)
		}
	}
	return nil
}

// resetMPS stops a daemon an earlier agent left; one that does not
// answer quit (it died with that agent) only loses its directory.
func (m *Manager) resetMPS(ctx context.Context, dm mps.Daemon) {
	var ctl mps.Control
	if err := ctl.Stop(ctx, mps.New(filepath.Dir(dm.Root), dm.ID, nil)); err != nil {
		klog.InfoS("An MPS control daemon of an earlier start did not quit; removing its directory", "daemon", dm.ID, "err", err)
		_ = os.RemoveAll(dm.Root)
	}
}

// stopMPS stops the daemons startMPS started.
func (m *Manager) stopMPS(ctx context.Context) {
	var ctl mps.Control
	for _, dm := range m.mps {
		if err := ctl.Stop(context.WithoutCancel(ctx), mps.New(filepath.Dir(dm.Root), dm.ID, nil)); err != nil {
			klog.ErrorS(err, "Stopping an MPS control daemon")
		}
	}
	m.mps = nil
}

// mpsResponse gives a container of an MPS resource its GPU's daemon: the
// pipe directory mounted at /mps/<resource>/pipe and named by
// CUDA_MPS_PIPE_DIRECTORY, and the daemons' shared memory
// (<mps root>/shm) at /dev/shm, as NVIDIA's plugin gives them
// (updateReponse). The replicas must be of one GPU: a container talks to
// one MPS server.
func (p *Plugin) mpsResponse(r *pluginapi.ContainerAllocateResponse, gpus []int) error {
	if len(gpus) != 1 {
		return fmt.Errorf("MPS replicas of %d GPUs in one container: a container can use one GPU's MPS server only (one daemon per GPU)", len(gpus))
	}
	root := p.cfg.MPSRoot()
	pipe := filepath.Join(mpsContainerRoot, p.res.Name, "pipe")
	setEnv(r, "CUDA_MPS_PIPE_DIRECTORY", pipe)
	r.Mounts = append(r.Mounts,
		&pluginapi.Mount{ContainerPath: pipe, HostPath: mpsDaemon(root, p.node.GPUs[gpus[0]].UUID).PipeDir},
		&pluginapi.Mount{ContainerPath: mpsContainerShm, HostPath: filepath.Join(root, "shm")})
	return nil
}

// mpsResource reports whether replicas of a resource are served through
// MPS: the strategy is sharing.mps and the resource is replicated.
func mpsResource(c *configv1.Config, replicas int) bool {
	return c.SharingStrategy() == configv1.SharingMPS && replicas > 1
}
