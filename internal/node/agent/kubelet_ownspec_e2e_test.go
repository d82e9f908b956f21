// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi/gpucditest"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// ownDriver is a fake driver tree for the agent's own CDI specs.
type ownDriver struct {
	gpucditest.Driver
	hookLog string // what the fake nvidia-cdi-hook was called with, a line a call
	args    []string
}

// newOwnDriver builds gpucditest's fake driver of the mock's version
// (550.54.15) in a directory the kubelet's runtime reads, replaces its
// device nodes by character devices (195:i for /dev/nvidia<i>, i < n,
// 195:255 nvidiactl, 511:0 and 511:1 the uvm pair), and writes a fake
// nvidia-cdi-hook that logs its arguments and exits 0. args are the
// agent's: --driver-root and --nvidia-cdi-hook-path.
func newOwnDriver(t *testing.T, n int) ownDriver {
	t.Helper()
	d := ownDriver{Driver: gpucditest.New(t, "550.54.15")}
	d.CharDevices(t, n)
	var hook string
	hook, d.hookLog = d.Hook(t)
	d.args = []string{"--driver-root", d.Root, "--nvidia-cdi-hook-path", hook}
	return d
}

// check compares what the probe printed with what the agent's spec must
// have given: the device nodes wantDevs, then /dev/nvidiactl 195:255 and
// the uvm pair; the fake driver's libraries at their paths, each the same
// bytes as on the host (a bind mount of the tree's file); env
// NVIDIA_CTK_LIBCUDA_DIR (nvcdi's) and NVIDIA_VISIBLE_DEVICES=void (the
// specs', gpucdi.VisibleVoid, one value for two devices); the hook run
// for each of NVIDIA's four hook names.
func (d ownDriver) check(t *testing.T, out string, wantDevs []string) {
	t.Helper()
	devs, env := nvidiaLines(out)
	wantDevs = append(slices.Clone(wantDevs), "/dev/nvidia-uvm c 511:0", "/dev/nvidia-uvm-tools c 511:1", "/dev/nvidiactl c 195:255")
	slices.Sort(wantDevs)
	if !slices.Equal(devs, wantDevs) {
		t.Errorf("NVIDIA device nodes in the container %q, want %q; the container printed:\n%s", devs, wantDevs, out)
	}
	var files []string
	for _, l := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(l, "file "); ok {
			files = append(files, f)
		}
	}
	var wantFiles []string
	for _, so := range gpucditest.Libraries {
		b, err := os.ReadFile(d.Lib(so))
		if err != nil {
			t.Fatal(err)
		}
		wantFiles = append(wantFiles, fmt.Sprintf("%s/%s %x", gpucditest.LibDir, filepath.Base(d.Lib(so)), sha256.Sum256(b)))
	}
	slices.Sort(wantFiles)
	if !slices.Equal(files, wantFiles) {
		t.Errorf("files in %s in the container %q, want %q", gpucditest.LibDir, files, wantFiles)
	}
	wantEnv := []string{"NVIDIA_CTK_LIBCUDA_DIR=" + gpucditest.LibDir, "NVIDIA_VISIBLE_DEVICES=void"}
	if got := slices.Sorted(slices.Values(env)); !slices.Equal(got, wantEnv) {
		t.Errorf("NVIDIA environment in the container %q, want %q", got, wantEnv)
	}
	b, err := os.ReadFile(d.hookLog)
	if err != nil {
		t.Fatalf("the fake nvidia-cdi-hook did not run: %v", err)
	}
	for _, h := range []string{"create-symlinks", "update-ldcache", "disable-device-node-modification", "enable-cuda-compat"} {
		if !strings.Contains("\n"+string(b), "\n"+h) {
			t.Errorf("hook %s not run; the hook's calls:\n%s", h, b)
		}
	}
}

// TestRealKubeletContainerdOwnCDI: the device plugin path in a real
// container with the agent's own CDI specs (--cdi-dir, cdi-cri) made
// from a fake driver tree (--driver-root, newOwnDriver), no spec of
// NVIDIA's toolkit. A pod asking for 2 GPUs gets the NVLinked pair 5 and
// 6 (TestRealKubeletCDIStrategies); runc starts its container from the
// two devices' specs, and the probe prints from inside: /dev/nvidia5
// (195:5), /dev/nvidia6 (195:6), nvidiactl and the uvm pair, the fake
// libcuda, libnvidia-ml and libnvidia-ptxjitcompiler mounted with the
// host's bytes, the specs' env, and the fake hook ran NVIDIA's hooks.
func TestRealKubeletContainerdOwnCDI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containerd, runc and a kubelet")
	}
	e := startRealEnvWith(t, kube.StartT(t, kube.Options{}), kube.KubeletOptions{Containerd: true}, realProfile,
		"version: v1\nflags: {plugin: {deviceListStrategy: [cdi-cri]}}\n")
	d := newOwnDriver(t, 8)
	e.startAgent(append([]string{"--cdi-dir", e.k.Containerd.CDIDir}, d.args...)...)
	e.waitResource(gpuresource.GPU, 8, 8)
	if _, err := e.c.Client.CoreV1().Pods("default").Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.PodSpec{
			NodeName: e.node, HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{
				Name: "main", Image: kube.ProbeImage, ImagePullPolicy: corev1.PullNever, Args: []string{"devices", gpucditest.LibDir},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("2")}},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll("pod a Succeeded", func() error { return e.succeeded("a") })
	out, err := e.k.ContainerLog("default", "a", "main")
	if err != nil {
		t.Fatal(err)
	}
	d.check(t, out, []string{"/dev/nvidia5 c 195:5", "/dev/nvidia6 c 195:6"})
}

// TestRealKubeletContainerdOwnDRA: the DRA path in a real container with
// the agent's own spec of the prepared device (--driver-root, no
// --cdi-toolkit-spec). A pod with a claim for one gpu.nvidia.com device
// runs the probe, which sees the allocated GPU's node /dev/nvidia<minor>
// (195:<minor>, the device gpu-<minor>) and the rest as
// TestRealKubeletContainerdOwnCDI.
func TestRealKubeletContainerdOwnDRA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containerd, runc and a kubelet")
	}
	o := newOwnDriver(t, 8)
	d := startDRAEnvWith(t, kube.KubeletOptions{Containerd: true}, realProfile, o.args...)
	// A claim of its own, held by a pod that keeps running, so that it
	// stays allocated after the probe (as TestRealKubeletContainerdDRA).
	claim := "one"
	if _, err := d.c.Client.ResourceV1().ResourceClaims("default").Create(d.ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"},
		}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, pod := range []struct {
		name string
		args []string
	}{{"holder", []string{"pause"}}, {"a", []string{"devices", gpucditest.LibDir}}} {
		d.createPodSpec(pod.name, corev1.PodSpec{
			HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: new(bool),
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}},
			Containers: []corev1.Container{{
				Name: "main", Image: kube.ProbeImage, ImagePullPolicy: corev1.PullNever, Args: pod.args,
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
			}},
		})
		if pod.name == "holder" {
			d.waitRunning("holder")
		}
	}
	d.poll("pod a Succeeded", func() error { return d.succeeded("a") })
	c, err := d.c.Client.ResourceV1().ResourceClaims("default").Get(d.ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 {
		t.Fatalf("claim %s: allocation %+v, want one device", c.Name, c.Status.Allocation)
	}
	var minor int
	if _, err := fmt.Sscanf(c.Status.Allocation.Devices.Results[0].Device, "gpu-%d", &minor); err != nil {
		t.Fatal(err)
	}
	out, err := d.k.ContainerLog("default", "a", "main")
	if err != nil {
		t.Fatal(err)
	}
	o.check(t, out, []string{fmt.Sprintf("/dev/nvidia%d c 195:%d", minor, minor)})
}

// succeeded is nil once the pod has Succeeded; it fails the test if the
// pod Failed.
func (e *realEnv) succeeded(name string) error {
	p, err := e.pod(name)
	if err != nil {
		return err
	}
	if p.Status.Phase == corev1.PodFailed {
		e.fail("pod %s Failed: %+v", name, p.Status)
	}
	if p.Status.Phase != corev1.PodSucceeded {
		return fmt.Errorf("phase %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
	return nil
}
