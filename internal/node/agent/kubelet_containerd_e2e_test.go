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
	resourcev1 "k8s.io/api/resource/v1"
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
	devs, env := nvidiaLines(out)
	wantDevs := []string{"/dev/nvidia5 c 195:5", "/dev/nvidia6 c 195:6", "/dev/nvidiactl c 195:255"}
	if !slices.Equal(devs, wantDevs) {
		t.Errorf("NVIDIA device nodes in the container %q, want %q; the container printed:\n%s", devs, wantDevs, out)
	}
	if want := []string{"NVIDIA_VISIBLE_DEVICES=void"}; !slices.Equal(env, want) {
		t.Errorf("NVIDIA environment in the container %q, want %q", env, want)
	}
}

// TestRealKubeletContainerdDRA: the DRA path in a real container. The
// agent serves its GPUs through DRA (--kubelet-api=dra) on a node whose
// pods containerd and runc run, with NVIDIA's toolkit spec
// (writeFakeNvidiaCDI) as --cdi-toolkit-spec: a device the spec names by
// UUID is given to the kubelet by that name. A pod with a claim for one
// gpu.nvidia.com device (shared with a pod that holds it) runs the
// probe, which prints from inside exactly
// the allocated GPU's node /dev/nvidia<minor> (char 195:<minor>, the
// device gpu-<minor>), /dev/nvidiactl (195:255) and
// NVIDIA_VISIBLE_DEVICES=void.
func TestRealKubeletContainerdDRA(t *testing.T) {
	d := startDRAEnvWith(t, kube.KubeletOptions{Containerd: true}, realProfile)
	writeFakeNvidiaCDI(t, d.dir, d.cdiDir, 8)
	// A claim of its own, not from a template (the controller deletes a
	// generated claim once its pod has finished), held by a pod that
	// keeps running (probe pause), so that it stays allocated after the
	// probe has finished.
	claim := "one"
	if _, err := d.c.Client.ResourceV1().ResourceClaims("default").Create(d.ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"},
		}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, pod := range []struct{ name, arg string }{{"holder", "pause"}, {"a", "devices"}} {
		d.createPodSpec(pod.name, corev1.PodSpec{
			HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: new(bool),
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}},
			Containers: []corev1.Container{{
				Name: "main", Image: kube.ProbeImage, ImagePullPolicy: corev1.PullNever, Args: []string{pod.arg},
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
			}},
		})
		if pod.name == "holder" {
			d.waitRunning("holder")
		}
	}
	d.poll("pod a Succeeded", func() error {
		p, err := d.pod("a")
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodFailed {
			d.fail("pod a Failed: %+v", p.Status)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		return nil
	})
	c, err := d.c.Client.ResourceV1().ResourceClaims("default").Get(d.ctx, claim, metav1.GetOptions{})
	if err != nil || c.Status.Allocation == nil {
		t.Fatalf("claim %s: %v, allocation %+v", claim, err, c.Status.Allocation)
	}
	var devs []string
	for _, r := range c.Status.Allocation.Devices.Results {
		devs = append(devs, r.Device)
	}
	var minor int
	if len(devs) != 1 {
		t.Fatalf("allocated %v, want one device", devs)
	}
	if _, err := fmt.Sscanf(devs[0], "gpu-%d", &minor); err != nil {
		t.Fatalf("allocated %q: %v", devs[0], err)
	}
	out, err := d.k.ContainerLog("default", "a", "main")
	if err != nil {
		t.Fatal(err)
	}
	gotDevs, env := nvidiaLines(out)
	wantDevs := []string{fmt.Sprintf("/dev/nvidia%d c 195:%d", minor, minor), "/dev/nvidiactl c 195:255"}
	if !slices.Equal(gotDevs, wantDevs) {
		t.Errorf("NVIDIA device nodes in the container %q, want %q; the container printed:\n%s", gotDevs, wantDevs, out)
	}
	if want := []string{"NVIDIA_VISIBLE_DEVICES=void"}; !slices.Equal(env, want) {
		t.Errorf("NVIDIA environment in the container %q, want %q", env, want)
	}
}

// nvidiaLines returns the /dev/nvidia* device lines ("<path> <c|b>
// <major>:<minor>") and NVIDIA_* variables of the probe's output.
func nvidiaLines(out string) (devs, env []string) {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if d, ok := strings.CutPrefix(line, "device "); ok && strings.HasPrefix(d, "/dev/nvidia") {
			devs = append(devs, d)
		}
		if v, ok := strings.CutPrefix(line, "env NVIDIA_"); ok {
			env = append(env, "NVIDIA_"+v)
		}
	}
	return devs, env
}
