// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestContainerd: containerd alone, driven through its CRI as a kubelet
// drives it (k8s.io/kubernetes pkg/kubelet/kuberuntime: RunPodSandbox,
// CreateContainer, StartContainer). The probe image, imported from its OCI
// archive with no registry, is the sandbox's image and the container's;
// the container (host network, runc) asks for the CDI device
// gpuplane.test/fake=a, whose spec in the node's CDI directory gives a
// device node /dev/fake0 (a char device 240:7, of the majors Linux keeps
// for local use, Documentation/admin-guide/devices.txt, made with mknod
// under the test's directory) and GPUPLANE_FAKE=a: it prints exactly
// that device beyond the OCI defaults, and that variable. After stop no
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
	fake := filepath.Join(dir, "fake0")
	if err := syscall.Mknod(fake, syscall.S_IFCHR|0o666, 240<<8|7); err != nil {
		t.Fatal(err)
	}
	spec := "cdiVersion: 0.6.0\nkind: gpuplane.test/fake\ndevices:\n  - name: a\n    containerEdits:\n      env: [GPUPLANE_FAKE=a]\n      deviceNodes: [{path: /dev/fake0, hostPath: " + fake + "}]\n"
	if err := os.WriteFile(filepath.Join(c.CDIDir, "fake.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runProbe(ctx, c, filepath.Join(dir, "logs"), cg)
	if err != nil {
		t.Fatalf("%v\ncontainerd log:\n%s", err, tail(c.Log, 30))
	}
	var devs []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "device ") {
			devs = append(devs, line)
		}
	}
	if want := []string{"device /dev/fake0 c 240:7"}; !slices.Equal(devs, want) || !strings.Contains(out, "\nenv GPUPLANE_FAKE=a\n") {
		t.Errorf("the container printed:\n%s\nwant the device nodes %q and env GPUPLANE_FAKE=a", out, want)
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

// runProbe runs `probe devices` with the CDI device gpuplane.test/fake=a
// in a pod sandbox on the host network, its cgroups under cg, and returns what it printed (its CRI log file).
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
			Metadata:   &runtimeapi.ContainerMetadata{Name: "main"},
			Image:      &runtimeapi.ImageSpec{Image: ProbeImage},
			Args:       []string{"devices"},
			CDIDevices: []*runtimeapi.CDIDevice{{Name: "gpuplane.test/fake=a"}},
			LogPath:    "main.log",
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
		out, err = readCRILog(filepath.Join(logDir, "main.log"))
		return err
	})
	return out, err
}
