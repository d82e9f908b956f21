// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// nvidiaMajor is the NVIDIA driver's character device major number
// (/dev/nvidia<minor>, /dev/nvidiactl minor 255: NVIDIA's
// open-gpu-kernel-modules kernel-open/common/inc/nv.h, NV_MAJOR_DEVICE_NUMBER
// and NV_CONTROL_DEVICE_MINOR).
const nvidiaMajor = 195

// writeFakeNvidiaCDI makes the device nodes of a fake driver tree under
// dir/dev (char 195:i for GPU i, 195:255 for nvidiactl; nothing behind
// them) and writes, into cdiDir, the CDI spec NVIDIA's `nvidia-ctk cdi
// generate` writes for n GPUs (NVIDIA/nvidia-container-toolkit
// pkg/nvcdi): kind nvidia.com/gpu, one device per GPU named by its UUID
// with /dev/nvidia<i>, and common edits with /dev/nvidiactl and
// NVIDIA_VISIBLE_DEVICES=void; hostPath points at the fake nodes.
func writeFakeNvidiaCDI(t *testing.T, dir, cdiDir string, n int) {
	t.Helper()
	dev := filepath.Join(dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	mknod := func(name string, minor int) string {
		p := filepath.Join(dev, name)
		// The old dev_t encoding, exact for major < 4096, minor < 256.
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, nvidiaMajor<<8|minor); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var b strings.Builder
	b.WriteString("cdiVersion: 0.6.0\nkind: nvidia.com/gpu\ndevices:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: %s\n    containerEdits:\n      deviceNodes:\n        - {path: /dev/nvidia%d, hostPath: %s}\n", realUUID(i), i, mknod(fmt.Sprintf("nvidia%d", i), i))
	}
	fmt.Fprintf(&b, "containerEdits:\n  env: [NVIDIA_VISIBLE_DEVICES=void]\n  deviceNodes:\n    - {path: /dev/nvidiactl, hostPath: %s}\n", mknod("nvidiactl", 255))
	if err := os.WriteFile(filepath.Join(cdiDir, "nvidia.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRealKubeletContainerdCDI: the device plugin path in a real
// container. The kubelet runs pods with containerd and runc
// (kube.KubeletOptions.Containerd), the node agent (mock backend, 8 GPUs,
// deviceListStrategy cdi-cri) serves nvidia.com/gpu, and containerd
// resolves the CDI devices the kubelet hands it against the spec NVIDIA's
// toolkit would write (writeFakeNvidiaCDI). A pod asking for 2 GPUs gets
// the NVLinked pair 5 and 6 (TestRealKubeletCDIStrategies); its container,
// the probe image imported from an OCI archive, prints from inside what
// it was given: exactly the device nodes /dev/nvidia5 (char 195:5),
// /dev/nvidia6 (195:6) and /dev/nvidiactl (195:255), and the spec's
// NVIDIA_VISIBLE_DEVICES=void. The node's cleanup (kube.StartKubeletNodeT)
// fails the test if a process, mount or cgroup is left.
func TestRealKubeletContainerdCDI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containerd, runc and a kubelet")
	}
	e := startRealEnvWith(t, kube.StartT(t, kube.Options{}), kube.KubeletOptions{Containerd: true}, realProfile,
		"version: v1\nflags: {plugin: {deviceListStrategy: [cdi-cri]}}\n")
	writeFakeNvidiaCDI(t, e.dir, e.k.Containerd.CDIDir, 8)
	e.startAgent()
	e.waitResource(gpuresource.GPU, 8, 8)
	if _, err := e.c.Client.CoreV1().Pods("default").Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.PodSpec{
			NodeName: e.node, HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{
				Name: "main", Image: kube.ProbeImage, ImagePullPolicy: corev1.PullNever, Args: []string{"devices"},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("2")}},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("pod a Succeeded", func() error {
		p, err := e.pod("a")
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodFailed {
			e.fail("pod a Failed: %+v", p.Status)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		return nil
	})
	out, err := e.k.ContainerLog("default", "a", "main")
	if err != nil {
		t.Fatal(err)
	}
	var devs, env []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if d, ok := strings.CutPrefix(line, "device "); ok && strings.HasPrefix(d, "/dev/nvidia") {
			devs = append(devs, d)
		}
		if v, ok := strings.CutPrefix(line, "env NVIDIA_"); ok {
			env = append(env, "NVIDIA_"+v)
		}
	}
	wantDevs := []string{"/dev/nvidia5 c 195:5", "/dev/nvidia6 c 195:6", "/dev/nvidiactl c 195:255"}
	if !slices.Equal(devs, wantDevs) {
		t.Errorf("NVIDIA device nodes in the container %q, want %q; the container printed:\n%s", devs, wantDevs, out)
	}
	if want := []string{"NVIDIA_VISIBLE_DEVICES=void"}; !slices.Equal(env, want) {
		t.Errorf("NVIDIA environment in the container %q, want %q", env, want)
	}
}
