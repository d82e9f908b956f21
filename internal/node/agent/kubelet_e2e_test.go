// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

// The node agent against an upstream kubelet (internal/testenv/kube's
// StartKubeletNode: kubelet v1.37.2 registered with a real kube-apiserver,
// its containers "run" by a fake runtime that records each CreateContainer
// request). Nothing here is played by a test double: the kubelet's device
// manager registers the agent's plugin through the device-plugin directory,
// asks it for a preferred allocation, allocates and hands the result to the
// runtime; the agent's exporter reads the kubelet's pod-resources API.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/testenv/kube/cri"
)

// realProfile is an 8-GPU H100 node, GPUs 0-3 on NUMA node 0 and 4-7 on
// NUMA node 1, connected through PCIe (NODE within a NUMA node, SYS
// across) except GPUs 5 and 6, which have 4 NVLinks. So the best pair,
// the one the agent prefers for a request of 2 (links first: NV4 scores
// 400, NODE 20, SYS 10), is GPUs 5 and 6, not the first two.
const realProfile = `name: real-kubelet
gpus:
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-00000000-0000-4000-8000-000000000000}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-11111111-1111-4111-8111-111111111111}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-22222222-2222-4222-8222-222222222222}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-33333333-3333-4333-8333-333333333333}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 1, uuid: GPU-44444444-4444-4444-8444-444444444444}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 1, uuid: GPU-55555555-5555-4555-8555-555555555555}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 1, uuid: GPU-66666666-6666-4666-8666-666666666666}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 1, uuid: GPU-77777777-7777-4777-8777-777777777777}
links:
  matrix:
    - "X    NODE NODE NODE SYS  SYS  SYS  SYS"
    - "NODE X    NODE NODE SYS  SYS  SYS  SYS"
    - "NODE NODE X    NODE SYS  SYS  SYS  SYS"
    - "NODE NODE NODE X    SYS  SYS  SYS  SYS"
    - "SYS  SYS  SYS  SYS  X    NODE NODE NODE"
    - "SYS  SYS  SYS  SYS  NODE X    NV4  NODE"
    - "SYS  SYS  SYS  SYS  NODE NV4  X    NODE"
    - "SYS  SYS  SYS  SYS  NODE NODE NODE X"
`

const (
	realUUID5 = "GPU-55555555-5555-4555-8555-555555555555"
	realUUID6 = "GPU-66666666-6666-4666-8666-666666666666"
)

// TestRealKubelet: the agent (mock backend, realProfile, device nodes
// passed) serves a real kubelet. The node's allocatable shows the 8 GPUs;
// a pod bound to the node asking for 2 runs, and its container was
// created with GPUs 5 and 6 exactly: NVIDIA_VISIBLE_DEVICES their UUIDs
// (in either order),
// device nodes /dev/nvidia5 and /dev/nvidia6 after the three control
// devices; the exporter labels those GPUs' series with the pod, read from
// the kubelet's pod-resources API. Then the kubelet restarts: the plugin
// registers again, the pod stays Running and no container is created
// again.
func TestRealKubelet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary and a kubelet")
	}
	c := kube.StartT(t, kube.Options{})
	const node = "gpu-node"
	k := kube.StartKubeletNodeT(t, c, node, kube.KubeletOptions{})
	t.Logf("kubelet node Ready %v after start", k.ReadyAfter.Round(time.Millisecond))
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.yaml")
	config := filepath.Join(dir, "config.yaml")
	for f, s := range map[string]string{profile: realProfile, config: "version: v1\nflags: {plugin: {passDeviceSpecs: true}}\n"} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// startMetricsAgent's own profile, device-plugin directory and
	// pod-resources socket are overridden: the last of a repeated flag
	// counts.
	a := startMetricsAgent(t, "--mock-profile", profile, "--config", config, "--device-plugin-dir", k.DevicePluginDir,
		"--node-name", node, "--pod-resources-socket", k.PodResourcesSocket)
	t0 := time.Now() // the agent serves metrics: its plugin is registering
	ctx, cancel := context.WithTimeout(a.exited, 2*time.Minute)
	defer cancel()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nagent log:\n%s", fmt.Sprintf(format, args...), a.log())
	}
	poll := func(what string, cond func() error) {
		t.Helper()
		var err error
		for {
			if err = cond(); err == nil {
				return
			}
			select {
			case <-ctx.Done():
				fail("waiting for %s: %v (%v)", what, err, context.Cause(ctx))
			case <-k.Exited():
				fail("waiting for %s: the kubelet exited", what)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}

	allocatable := func() error {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		q := n.Status.Allocatable[gpuresource.GPU]
		cq := n.Status.Capacity[gpuresource.GPU]
		if q.Value() != 8 || cq.Value() != 8 {
			return fmt.Errorf("allocatable %s, capacity %s", q.String(), cq.String())
		}
		return nil
	}
	poll("nvidia.com/gpu: 8 allocatable", allocatable)
	t.Logf("nvidia.com/gpu: 8 allocatable %v after the agent started", time.Since(t0).Round(time.Millisecond))

	t1 := time.Now()
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
			Name: "main", Image: "example.com/train:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("2")}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := func() error {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "train", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 0 {
			return fmt.Errorf("phase %s, statuses %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		return nil
	}
	poll("pod train Running", running)
	t.Logf("pod Running %v after it was created", time.Since(t1).Round(time.Millisecond))

	recs, err := k.Records()
	if err != nil {
		t.Fatal(err)
	}
	mine := cri.Find(recs, "default", "train", "main")
	if len(mine) != 1 {
		fail("%d CreateContainer records of default/train/main, want 1: %+v", len(mine), recs)
	}
	// In the order of the kubelet's Allocate request, which comes from a
	// set: either order.
	visible := strings.Split(mine[0].Env["NVIDIA_VISIBLE_DEVICES"], ",")
	slices.Sort(visible)
	if want := []string{realUUID5, realUUID6}; !slices.Equal(visible, want) {
		t.Errorf("NVIDIA_VISIBLE_DEVICES %q, want %v in some order (GPUs 5 and 6, the NVLinked pair)", mine[0].Env["NVIDIA_VISIBLE_DEVICES"], want)
	}
	var devs []string
	for _, d := range mine[0].Devices {
		devs = append(devs, d.HostPath+":"+d.ContainerPath+":"+d.Permissions)
	}
	if want := []string{"/dev/nvidiactl:/dev/nvidiactl:rw", "/dev/nvidia-uvm:/dev/nvidia-uvm:rw", "/dev/nvidia-uvm-tools:/dev/nvidia-uvm-tools:rw",
		"/dev/nvidia5:/dev/nvidia5:rw", "/dev/nvidia6:/dev/nvidia6:rw"}; !slices.Equal(devs, want) {
		t.Errorf("devices %v, want %v", devs, want)
	}

	// The exporter attributes GPUs 5 and 6, and no other, to the pod,
	// from the real kubelet's pod-resources API.
	attributed := func(m map[string]*dto.MetricFamily) string {
		var out []string
		for _, s := range seriesOf(m, "gpuplane_device_allocation", nil) {
			ls := metricLabels(s)
			out = append(out, ls["gpu"]+"="+ls["namespace"]+"/"+ls["pod"]+"/"+ls["container"])
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	const wantAttributed = "5=default/train/main 6=default/train/main"
	a.eventually(t, "GPUs 5 and 6 attributed to default/train/main", func(m map[string]*dto.MetricFamily) bool {
		return attributed(m) == wantAttributed
	})

	// The kubelet restarts: the agent registers again with the new
	// kubelet, whose device manager has removed the plugin sockets; the
	// pod keeps running and its container is not created again.
	registered := func() int { return strings.Count(a.log(), `"Registered with the kubelet" resource="nvidia.com/gpu"`) }
	if n := registered(); n != 1 {
		fail("%d registrations before the restart, want 1", n)
	}
	t2 := time.Now()
	pid := k.Pid()
	if err := k.Restart(ctx); err != nil {
		fail("restart: %v", err)
	}
	if k.Pid() == pid {
		t.Fatalf("kubelet pid %d before and after the restart", pid)
	}
	t.Logf("kubelet restarted, node Ready again, in %v", time.Since(t2).Round(time.Millisecond))
	poll("the plugin registered again", func() error {
		if n := registered(); n != 2 {
			return fmt.Errorf("%d registrations", n)
		}
		return nil
	})
	t.Logf("plugin registered again %v after the restart began", time.Since(t2).Round(time.Millisecond))
	poll("nvidia.com/gpu: 8 allocatable after the restart", allocatable)
	if err := running(); err != nil {
		t.Errorf("after the restart: %v", err)
	}
	a.eventually(t, "GPUs 5 and 6 still attributed after the restart", func(m map[string]*dto.MetricFamily) bool {
		return attributed(m) == wantAttributed
	})
	if recs, err = k.Records(); err != nil || len(recs) != 1 {
		t.Errorf("after the restart: %d CreateContainer records (%v), want the 1 from before", len(recs), err)
	}
}
