// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestContainerd: containerd alone, driven through its CRI as a kubelet
// drives it (k8s.io/kubernetes pkg/kubelet/kuberuntime: RunPodSandbox,
// CreateContainer, StartContainer). The probe image, imported from its OCI
// archive with no registry, is the sandbox's image and the container's;
// the container (host network, runc) prints its device nodes, which are
// only those every container gets: no /dev/nvidia*. After stop no
// process is left in containerd's cgroup, no mount under its directory,
// no shim socket.
func TestContainerd(t *testing.T) {
	Binary(t, "containerd")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but containerd needs root")
		}
		t.Skip("containerd needs root")
	}
	if _, err := findRunc(); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gc-") // unix socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Not under cgroupPrefix: reap removes those no node entry names.
	cg := "gpuplane-containerd-test-" + strconv.Itoa(os.Getpid())
	if err := makeCgroups(cg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killCgroupProcs(cg)
		if err := removeCgroups(cg); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	archive, err := writeProbeImage(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := startContainerd(ctx, dir, cg, ProbeImage)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.stop()
		}
	})
	if err := c.Import(ctx, archive); err != nil {
		t.Fatal(err)
	}
	out, err := runProbe(ctx, c, filepath.Join(dir, "logs"), cg)
	if err != nil {
		t.Fatalf("%v\ncontainerd log:\n%s", err, tail(c.Log, 30))
	}
	if !strings.Contains(out, "env PATH=") || strings.Contains(out, "/dev/nvidia") {
		t.Errorf("the container printed:\n%s\nwant its environment (PATH) and no /dev/nvidia*", out)
	}
	stopped = true
	if err := c.stop(); err != nil {
		t.Error(err)
	}
	if m := mountsUnder(dir); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if p := cgroupProcs(cg); len(p) > 0 {
		t.Errorf("processes left in %s: %v", cg, p)
	}
}

// runProbe runs `probe devices` in a pod sandbox on the host network,
// its cgroups under cg, and returns what it printed (its CRI log file).
func runProbe(ctx context.Context, c *Containerd, logDir, cg string) (out string, err error) {
	err = c.withCRI(ctx, func(rt runtimeapi.RuntimeServiceClient) error {
		sc := &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: "probe", Namespace: "default", Uid: "probe-uid"},
			LogDirectory: logDir,
			Linux: &runtimeapi.LinuxPodSandboxConfig{
				CgroupParent:    "/" + cg + "/probe",
				SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}},
			},
		}
		sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sc})
		if err != nil {
			return err
		}
		cr, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, SandboxConfig: sc, Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
			Image:    &runtimeapi.ImageSpec{Image: ProbeImage},
			Args:     []string{"devices"},
			LogPath:  "main.log",
		}})
		if err != nil {
			return err
		}
		if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.ContainerId}); err != nil {
			return err
		}
		for {
			st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cr.ContainerId})
			if err != nil {
				return err
			}
			if st.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
				if st.Status.ExitCode != 0 {
					return errors.New("probe exited " + strconv.Itoa(int(st.Status.ExitCode)) + ": " + st.Status.Message)
				}
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-c.proc.done:
				return c.proc.exitError()
			case <-time.After(50 * time.Millisecond):
			}
		}
		b, err := os.ReadFile(filepath.Join(logDir, "main.log"))
		out = string(b)
		return err
	})
	return out, err
}
