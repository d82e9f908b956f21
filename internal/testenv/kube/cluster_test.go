// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// TestControlPlane starts etcd, kube-apiserver and kwok with the Workload
// API on, makes two GPU nodes, runs a pod of a gang on one, and stops.
func TestControlPlane(t *testing.T) {
	c := StartT(t, Options{FeatureGates: WorkloadFeatureGates, RuntimeConfig: WorkloadRuntimeConfig})
	ctx := t.Context()

	// The kubeconfig works on its own and reaches the version we built.
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != Version("kube-apiserver") {
		t.Errorf("server version %s, want %s", v.GitVersion, Version("kube-apiserver"))
	}

	nodes, err := ParseNodes("two.yaml", []byte("nodeGroups:\n- {name: gpu, count: 2, cpuMilli: 32000, memoryMiB: 262144, gpus: 4, model: A100-80GB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gpu-0", "gpu-1"} {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// kwok kept our capacity (its default would be cpu 1k).
		gpus, milli, cpu := n.Status.Allocatable[gpuresource.GPU], n.Status.Allocatable[gpuresource.GPUMilli], n.Status.Allocatable[corev1.ResourceCPU]
		if gpus.Value() != 4 || milli.Value() != 4000 || cpu.MilliValue() != 32000 || len(n.Spec.Taints) != 0 || !nodeReady(n) {
			t.Errorf("node %s: allocatable %v, taints %v, ready %v", name, n.Status.Allocatable, n.Spec.Taints, nodeReady(n))
		}
		// kwok renews the node's lease, as a kubelet does.
		if err := c.waitUntil(ctx, "lease of "+name, func(ctx context.Context) error {
			_, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}

	// A PodGroup (scheduling.k8s.io/v1beta1) is served and defaulted.
	pg, err := c.Client.SchedulingV1beta1().PodGroups("default").Create(ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "gang"},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pg, err = c.Client.SchedulingV1beta1().PodGroups("default").Get(ctx, pg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := pg.Spec.SchedulingPolicy.Gang; g == nil || g.MinCount != 2 {
		t.Errorf("PodGroup gang policy %+v, want minCount 2", g)
	}

	// A pod bound to a kwok node goes Running with an IP from PodCIDR; the
	// gated field schedulingGroup is kept.
	group := "gang"
	pod, err := c.Client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-0"},
		Spec: corev1.PodSpec{
			NodeName:        "gpu-1",
			SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &group},
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("1")}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := pod.Spec.SchedulingGroup; g == nil || g.PodGroupName == nil || *g.PodGroupName != "gang" {
		t.Errorf("schedulingGroup %+v, want podGroupName gang", g)
	}
	_, podNet, _ := net.ParseCIDR(PodCIDR)
	if err := c.waitUntil(ctx, "pod worker-0 Running", func(ctx context.Context) error {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "worker-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || !podNet.Contains(net.ParseIP(p.Status.PodIP)) {
			return fmt.Errorf("phase %s, IP %q", p.Status.Phase, p.Status.PodIP)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// A deleted pod is removed (kwok plays the kubelet's part).
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, "worker-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.waitUntil(ctx, "pod worker-0 gone", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().Pods("default").Get(ctx, "worker-0", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	}); err != nil {
		t.Fatal(err)
	}

	// Stop leaves no process and no directory behind.
	pids := c.Pids()
	if len(pids) != 4 {
		t.Fatalf("pids %v, want etcd, kube-apiserver, kube-controller-manager, kwok", pids)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop (%v)", c.Dir, err)
	}
}

// TestStartReportsExit checks that a control-plane process that exits
// during Start fails it at once with the tail of that process's log.
func TestStartReportsExit(t *testing.T) {
	o := Options{
		Etcd: Binary(t, "etcd"), APIServer: Binary(t, "kube-apiserver"), Kwok: Binary(t, "kwok"),
		APIServerArgs: []string{"--no-such-flag"},
	}
	c, err := Start(t.Context(), o)
	if err == nil {
		c.Stop()
		t.Fatal("Start succeeded with a bad kube-apiserver flag")
	}
	if msg := err.Error(); !strings.Contains(msg, "waiting for kube-apiserver") || !strings.Contains(msg, "unknown flag: --no-such-flag") {
		t.Errorf("error %q, want kube-apiserver's exit and its log line", msg)
	}
}

// TestServiceAccountTokensArgs: by default kube-apiserver runs without
// the ServiceAccount admission plugin (pods get no token);
// ServiceAccountTokens leaves it on, TaintNodesByCondition still off; it
// is refused without the controller manager, which makes the default
// ServiceAccounts the plugin requires.
func TestServiceAccountTokensArgs(t *testing.T) {
	pk := &pki{}
	for _, c := range []struct {
		tokens bool
		want   string
	}{{false, "--disable-admission-plugins=TaintNodesByCondition,ServiceAccount"}, {true, "--disable-admission-plugins=TaintNodesByCondition"}} {
		args := apiServerArgs(Options{ServiceAccountTokens: c.tokens}, t.TempDir(), "http://127.0.0.1:1", 1, pk)
		var got []string
		for _, a := range args {
			if strings.HasPrefix(a, "--disable-admission-plugins=") {
				got = append(got, a)
			}
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("ServiceAccountTokens %v: %v, want [%s]", c.tokens, got, c.want)
		}
	}
	if _, err := Start(context.Background(), Options{ServiceAccountTokens: true, NoControllerManager: true}); err == nil {
		t.Error("ServiceAccountTokens without the controller manager: no error")
	}
}
