// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestClusterDRA runs make cluster KUBELET_NODES=1 GPU_API=dra
// KUBELET_PROFILE=hack/cluster/a100-dra.yaml as the Makefile does, with
// gpuplane-scheduler, and applies what docs/cluster.md shows: a pod
// asking nvidia.com/gpu on kubelet-0 runs with a whole GPU of the claim
// the scheduler made (gpu-2 or gpu-3: GPUs 0 and 1 are in MIG mode, no
// whole-GPU device); a pod with a 1g.10gb claim
// runs on gpu-0-mig-1g10gb-19-<0..6> or gpu-1-mig-... .
func TestClusterDRA(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuplane-scheduler and gpuplane-node-agent and runs a kubelet")
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok", "kubelet"} {
		kube.Binary(t, name)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but a kubelet node needs root")
		}
		t.Skip("a kubelet node needs root")
	}
	bins := t.TempDir()
	for _, pkg := range []string{".", "../../cmd/gpuplane-scheduler", "../../cmd/gpuplane-node-agent"} {
		if out, err := exec.Command("go", "build", "-o", bins, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(nodes, []byte("nodeGroups:\n- {name: t4, count: 1, model: T4, gpus: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(bins, "cluster")
	out, err := exec.Command(bin, "up", "--dir", dir, "--nodes", nodes, "--scheduler", filepath.Join(bins, "gpuplane-scheduler"),
		"--scheduler-config", "../../deploy/scheduler/config.yaml", "--kubelet-nodes", "1", "--node-agent", filepath.Join(bins, "gpuplane-node-agent"),
		"--kubelet-profile", "a100-dra.yaml", "--gpu-api", "dra", "--device-classes", filepath.Join("..", "..", kube.DeviceClassTemplate)).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster up: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(bin, "down", "--dir", dir).CombinedOutput(); err != nil {
			t.Errorf("cluster down: %v\n%s", err, out)
		}
		if t.Failed() {
			for _, f := range []string{"cluster.log", "run/kubelet-0-agent.log", "run/gpuplane-scheduler.log"} {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				t.Logf("%s (tail):\n%s", f, b[max(0, len(b)-3000):])
			}
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "run", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	applyDemo(t, ctx, client)
	for pod, want := range map[string]string{"whole": `^gpu-[23]$`, "mig": `^gpu-[01]-mig-1g10gb-19-[0-6]$`} {
		if dev := waitDevice(t, ctx, client, pod); !regexp.MustCompile(want).MatchString(dev) {
			t.Errorf("pod %s: device %s, want %s", pod, dev, want)
		}
	}
}

// applyDemo creates docs/cluster.md's two pods and claim.
func applyDemo(t *testing.T, ctx context.Context, client kubernetes.Interface) {
	t.Helper()
	container := corev1.Container{Name: "main", Image: "example.com/work:1"}
	whole := container
	whole.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	mig := container
	mig.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	claim := "mig-1g"
	if _, err := client.ResourceV1().ResourceClaims("default").Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "mig.nvidia.com",
			Selectors:       []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}},
		}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "whole"}, Spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": "kubelet-0"}, Containers: []corev1.Container{whole}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "mig"}, Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}}, Containers: []corev1.Container{mig}}},
	} {
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitDevice waits for the pod to run on kubelet-0 and returns the one
// device of its claim.
func waitDevice(t *testing.T, ctx context.Context, client kubernetes.Interface, pod string) string {
	t.Helper()
	var last error
	for {
		dev, err := func() (string, error) {
			p, err := client.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName != "kubelet-0" {
				return "", fmt.Errorf("phase %s on %q: %+v", p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
			}
			name := ""
			if len(p.Status.ResourceClaimStatuses) == 1 && p.Status.ResourceClaimStatuses[0].ResourceClaimName != nil {
				name = *p.Status.ResourceClaimStatuses[0].ResourceClaimName
			} else if p.Status.ExtendedResourceClaimStatus != nil {
				name = p.Status.ExtendedResourceClaimStatus.ResourceClaimName
			}
			if name == "" {
				if len(p.Spec.ResourceClaims) == 1 && p.Spec.ResourceClaims[0].ResourceClaimName != nil {
					name = *p.Spec.ResourceClaims[0].ResourceClaimName
				} else {
					return "", fmt.Errorf("no claim in %+v", p.Status)
				}
			}
			c, err := client.ResourceV1().ResourceClaims("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 {
				return "", fmt.Errorf("claim %s: %+v", name, c.Status)
			}
			return c.Status.Allocation.Devices.Results[0].Device, nil
		}()
		if err == nil {
			return dev
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s: %v", pod, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
