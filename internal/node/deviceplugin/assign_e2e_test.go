// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin_test

// The node side of gpuplane-scheduler, end to end: a real kube-apiserver
// (internal/testenv/kube) holds pods bound to a node with the scheduler's
// choice on them, the real gpuplane-node-agent binary serves that node, and
// the test kubelet plays the kubelet's Allocate calls.
//
// The kubelet's Allocate names device IDs but no pod. HAMi's device plugin
// (github.com/Project-HAMi/HAMi, pkg/device-plugin/nvidiadevice/nvinternal/
// plugin/server.go, Allocate) therefore asks the API server for the pending
// pod its scheduler annotated (pkg/util GetPendingPod: the pods of
// spec.nodeName=<node> whose bind phase is "allocating", one at a time under
// a node lock), gives the container the devices written on that pod and
// marks it allocated. gpuplane does the same without a node lock: it takes
// the not-yet-allocated pod bound first whose request equals the container's.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// A node of four V100s with UUIDs given in the profile, so that every
// expected value below is read off this text.
const (
	uuid0 = "GPU-00000000-0000-4000-8000-000000000000"
	uuid1 = "GPU-11111111-1111-4111-8111-111111111111"
	uuid2 = "GPU-22222222-2222-4222-8222-222222222222"
	uuid3 = "GPU-33333333-3333-4333-8333-333333333333"
)

const choiceProfile = `name: choice
gpus:
  - {productName: Tesla V100-SXM2-16GB, uuid: ` + uuid0 + `}
  - {productName: Tesla V100-SXM2-16GB, uuid: ` + uuid1 + `}
  - {productName: Tesla V100-SXM2-16GB, uuid: ` + uuid2 + `}
  - {productName: Tesla V100-SXM2-16GB, uuid: ` + uuid3 + `}
`

// t0 is when the test pods were bound; metav1.Time keeps whole seconds.
var t0 = time.Date(2020, 1, 2, 3, 4, 0, 0, time.UTC)

// boundPod creates a pod bound to node whose one container asks for n of
// resource, with the given annotations, and the PodScheduled condition at
// t0+at when at >= 0 (none otherwise: a pod created with spec.nodeName).
func boundPod(t *testing.T, ctx context.Context, c kubernetes.Interface, node, name, res string, n int64, ann map[string]string, at time.Duration) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "main", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(res): *resource.NewQuantity(n, resource.DecimalSI)}},
		}}},
	}
	p, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		return
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(at))}}
	if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// choice is the scheduler's annotations.
func choice(gpus, share string) map[string]string {
	return map[string]string{"gpuplane.io/gpus": gpus, "gpuplane.io/gpu-share": share}
}

// allocated returns a pod's gpuplane.io/allocated annotation.
func allocated(t *testing.T, ctx context.Context, c kubernetes.Interface, name string) string {
	t.Helper()
	p, err := c.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Annotations["gpuplane.io/allocated"]
}

// allocateEnv plays the kubelet's Allocate of ids for one container and
// returns the container's environment.
func allocateEnv(ctx context.Context, p *kubelettest.Plugin, ids ...string) (map[string]string, error) {
	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
	if err != nil {
		return nil, err
	}
	return resp.ContainerResponses[0].Envs, nil
}

// milliIDs returns the gpu-milli device IDs k in [from, to) of a GPU.
func milliIDs(uuid string, from, to int) []string {
	var out []string
	for k := from; k < to; k++ {
		out = append(out, fmt.Sprintf("%s::m%d", uuid, k))
	}
	return out
}

func TestE2ESchedulerChoice(t *testing.T) {
	kc := kube.StartT(t, kube.Options{})
	c := kc.Client
	ctx := testCtx(t)
	work := shortDir(t)
	profile := writeFile(t, work, "profile.yaml", choiceProfile)
	cfg := writeFile(t, work, "config.yaml", "version: v1\ngpuplane: {milliGPU: true}\n")

	// agent starts the node agent of node with a test kubelet, following
	// the scheduler's choice (--kubeconfig, --scheduler-choice) when api is
	// set, and returns the kubelet's view of resource.
	agent := func(t *testing.T, node string, api bool, resource string, extra ...string) (*kubelettest.Plugin, *agent) {
		t.Helper()
		dir := shortDir(t)
		k := startKubelet(t, dir)
		args := []string{"--mock-profile", profile, "--config", cfg, "--metrics-addr=", "--node-name", node}
		if api {
			// The test kubelet serves no pod-resources: without the
			// socket the agent takes the pod bound first and cannot check
			// the choice against the kubelet's allocations (with a socket
			// that does not answer it would refuse every choice).
			args = append(args, "--kubeconfig", kc.Kubeconfig, "--scheduler-choice", "--pod-resources-socket=")
		}
		a := startAgent(t, dir, append(args, extra...)...)
		p, err := k.Plugin(a.ctx, resource)
		if err != nil {
			t.Fatal(err)
		}
		return p, a
	}

	t.Run("whole GPUs", func(t *testing.T) {
		// Two pods bound to node a: "first" (1 GPU, the choice GPU 2) one
		// minute before "second" (2 GPUs, GPUs 0 and 1).
		boundPod(t, ctx, c, "a", "first", "nvidia.com/gpu", 1, map[string]string{"gpuplane.io/gpus": "2", "gpuplane.io/gpu-share": "1000", "gpuplane.io/gpu-uuids": uuid2}, 0)
		boundPod(t, ctx, c, "a", "second", "nvidia.com/gpu", 2, choice("0,1", "1000"), time.Minute)
		p, _ := agent(t, "a", true, "nvidia.com/gpu")
		// The kubelet picks GPU 3 for the 1-GPU container: it gets GPU 2.
		env, err := allocateEnv(ctx, p, uuid3)
		if err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid2 {
			t.Fatalf("Allocate of 1 GPU: %v, %v; want %s", env, err, uuid2)
		}
		if got := allocated(t, ctx, c, "first"); got != "true" {
			t.Errorf("first: gpuplane.io/allocated=%q after its Allocate", got)
		}
		if got := allocated(t, ctx, c, "second"); got != "" {
			t.Errorf("second: gpuplane.io/allocated=%q before its Allocate", got)
		}
		// The kubelet picks GPUs 2 and 3 for the 2-GPU container: it gets
		// GPUs 0 and 1.
		env, err = allocateEnv(ctx, p, uuid2, uuid3)
		if err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid0+","+uuid1 {
			t.Fatalf("Allocate of 2 GPUs: %v, %v; want %s,%s", env, err, uuid0, uuid1)
		}
		if got := allocated(t, ctx, c, "second"); got != "true" {
			t.Errorf("second: gpuplane.io/allocated=%q after its Allocate", got)
		}
		// Both are allocated: the next container gets the kubelet's GPU.
		if env, err = allocateEnv(ctx, p, uuid3); err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid3 {
			t.Errorf("Allocate with no pod left: %v, %v; want %s", env, err, uuid3)
		}
	})

	t.Run("bound first", func(t *testing.T) {
		// Equal requests: "late" was created first but bound two minutes
		// after "early"; "nocond" has no PodScheduled condition, so its
		// creation (now, years after t0) counts as its binding.
		boundPod(t, ctx, c, "b", "nocond", "nvidia.com/gpu", 1, choice("0", "1000"), -1)
		boundPod(t, ctx, c, "b", "late", "nvidia.com/gpu", 1, choice("3", "1000"), 3*time.Minute)
		boundPod(t, ctx, c, "b", "early", "nvidia.com/gpu", 1, choice("1", "1000"), time.Minute)
		p, _ := agent(t, "b", true, "nvidia.com/gpu")
		for i, want := range []string{uuid1, uuid3, uuid0} {
			env, err := allocateEnv(ctx, p, uuid2)
			if err != nil || env["NVIDIA_VISIBLE_DEVICES"] != want {
				t.Errorf("Allocate %d: %v, %v; want %s", i, env, err, want)
			}
		}
	})

	t.Run("share", func(t *testing.T) {
		boundPod(t, ctx, c, "c", "share", "gpuplane.io/gpu-milli", 300, map[string]string{"gpuplane.io/gpus": "3", "gpuplane.io/gpu-share": "300", "gpuplane.io/gpu-uuids": uuid3}, 0)
		p, _ := agent(t, "c", true, "gpuplane.io/gpu-milli")
		if n := len(p.Devices()); n != 4000 {
			t.Errorf("gpu-milli lists %d devices, want 4 GPUs x 1000", n)
		}
		// The kubelet picks 300 units of GPU 0: the container gets GPU 3.
		env, err := allocateEnv(ctx, p, milliIDs(uuid0, 0, 300)...)
		if err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid3 || env["GPUPLANE_GPU_SHARE"] != "300" {
			t.Fatalf("Allocate of 300 milli-GPU: %v, %v; want %s with share 300", env, err, uuid3)
		}
		if got := allocated(t, ctx, c, "share"); got != "true" {
			t.Errorf("share: gpuplane.io/allocated=%q", got)
		}
	})

	t.Run("no choice", func(t *testing.T) {
		boundPod(t, ctx, c, "d", "plain", "nvidia.com/gpu", 1, nil, 0)
		p, _ := agent(t, "d", true, "nvidia.com/gpu")
		if env, err := allocateEnv(ctx, p, uuid1); err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid1 {
			t.Errorf("pod without a choice: %v, %v; want the kubelet's %s", env, err, uuid1)
		}
		if got := allocated(t, ctx, c, "plain"); got != "" {
			t.Errorf("plain: gpuplane.io/allocated=%q", got)
		}
	})

	t.Run("no API access", func(t *testing.T) {
		boundPod(t, ctx, c, "e", "unseen", "nvidia.com/gpu", 1, choice("2", "1000"), 0)
		p, _ := agent(t, "e", false, "nvidia.com/gpu")
		if env, err := allocateEnv(ctx, p, uuid1); err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid1 {
			t.Errorf("without API access: %v, %v; want the kubelet's %s", env, err, uuid1)
		}
		if got := allocated(t, ctx, c, "unseen"); got != "" {
			t.Errorf("unseen: gpuplane.io/allocated=%q", got)
		}
	})

	t.Run("API access without --scheduler-choice", func(t *testing.T) {
		// An agent that only labels its Node reads no pod (the chart
		// grants it no right on pods): the kubelet's IDs, pod not marked.
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "h"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		boundPod(t, ctx, c, "h", "ignored", "nvidia.com/gpu", 1, choice("2", "1000"), 0)
		p, _ := agent(t, "h", false, "nvidia.com/gpu", "--kubeconfig", kc.Kubeconfig, "--label-node")
		if env, err := allocateEnv(ctx, p, uuid1); err != nil || env["NVIDIA_VISIBLE_DEVICES"] != uuid1 {
			t.Errorf("without --scheduler-choice: %v, %v; want the kubelet's %s", env, err, uuid1)
		}
		if got := allocated(t, ctx, c, "ignored"); got != "" {
			t.Errorf("ignored: gpuplane.io/allocated=%q", got)
		}
	})

	t.Run("GPU the node lacks", func(t *testing.T) {
		boundPod(t, ctx, c, "f", "nogpu", "nvidia.com/gpu", 1, choice("4", "1000"), 0)
		p, _ := agent(t, "f", true, "nvidia.com/gpu")
		_, err := allocateEnv(ctx, p, uuid1)
		want := "pod default/nogpu: annotation gpuplane.io/gpus: GPU 4 does not exist on this node, which has 4 GPUs (0..3)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("choice of GPU 4: %v, want an error with %q", err, want)
		}
		if got := allocated(t, ctx, c, "nogpu"); got != "" {
			t.Errorf("nogpu: gpuplane.io/allocated=%q after a refused Allocate", got)
		}
		// A choice whose UUIDs are not the node's (a GPU replaced since
		// the scheduler read the node).
		boundPod(t, ctx, c, "f", "stale", "nvidia.com/gpu", 2, map[string]string{"gpuplane.io/gpus": "1,2", "gpuplane.io/gpu-uuids": uuid1 + "," + uuid3}, 0)
		_, err = allocateEnv(ctx, p, uuid0, uuid1)
		want = "pod default/stale: annotation gpuplane.io/gpu-uuids: GPU 2 is " + uuid2 + " on this node, not " + uuid3
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("stale UUIDs: %v, want an error with %q", err, want)
		}
	})

	t.Run("node annotation", func(t *testing.T) {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "g"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, a := agent(t, "g", true, "nvidia.com/gpu", "--label-node")
		want := uuid0 + "," + uuid1 + "," + uuid2 + "," + uuid3
		var n *corev1.Node
		for {
			var err error
			if n, err = c.CoreV1().Nodes().Get(ctx, "g", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if n.Annotations["gpuplane.io/gpu-uuids"] != "" {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("node g was not annotated: %v", ctx.Err())
			case err := <-a.done:
				a.done <- err
				t.Fatalf("agent exited: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
		}
		if got := n.Annotations["gpuplane.io/gpu-uuids"]; got != want || n.Labels["nvidia.com/gpu.count"] != "4" {
			t.Errorf("node g: gpuplane.io/gpu-uuids=%q, gpu.count=%q; want %q, 4", got, n.Labels["nvidia.com/gpu.count"], want)
		}
	})
}
