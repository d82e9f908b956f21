// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

// A harness for the node agent against a real kubelet (internal/testenv/kube
// StartKubeletNode): one control plane, one kubelet node, an agent that can
// be started, stopped and started again with the same arguments, and
// helpers for pods and the fake runtime's CreateContainer records.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/testenv/kube/cri"
)

type realEnv struct {
	t      *testing.T
	c      *kube.Cluster
	k      *kube.KubeletNode
	node   string
	dir    string
	faults string
	args   []string
	a      *metricsAgent
	ctx    context.Context
}

// startRealEnv starts a control plane and a kubelet node, and writes the
// profile and config the agent will use; startAgent starts the agent.
func startRealEnv(t *testing.T, profile, config string) *realEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary and a kubelet")
	}
	return startRealEnvOn(t, kube.StartT(t, kube.Options{}), profile, config)
}

// startRealEnvOn is startRealEnv on a cluster of one's own.
func startRealEnvOn(t *testing.T, c *kube.Cluster, profile, config string) *realEnv {
	t.Helper()
	return startRealEnvWith(t, c, kube.KubeletOptions{}, profile, config)
}

// startRealEnvWith is startRealEnvOn with the kubelet node's options (a
// real runtime: KubeletOptions.Containerd).
func startRealEnvWith(t *testing.T, c *kube.Cluster, o kube.KubeletOptions, profile, config string) *realEnv {
	t.Helper()
	e := &realEnv{t: t, c: c, node: "gpu-node", dir: t.TempDir()}
	e.k = kube.StartKubeletNodeT(t, c, e.node, o)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	e.ctx = ctx
	pf := filepath.Join(e.dir, "profile.yaml")
	cf := filepath.Join(e.dir, "config.yaml")
	e.faults = filepath.Join(e.dir, "faults.yaml")
	for f, s := range map[string]string{pf: profile, cf: config} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.args = []string{"--mock-profile", pf, "--config", cf, "--mock-faults-file", e.faults,
		"--device-plugin-dir", e.k.DevicePluginDir, "--node-name", e.node, "--pod-resources-socket", e.k.PodResourcesSocket}
	return e
}

func (e *realEnv) startAgent(extra ...string) {
	e.t.Helper()
	e.a = startMetricsAgent(e.t, append(slices.Clone(e.args), extra...)...)
}

func (e *realEnv) log() string {
	if e.a == nil {
		return "(no agent)"
	}
	return e.a.log()
}

func (e *realEnv) fail(format string, args ...any) {
	e.t.Helper()
	e.t.Fatalf("%s\nagent log:\n%s", fmt.Sprintf(format, args...), e.log())
}

func (e *realEnv) poll(what string, cond func() error) {
	e.t.Helper()
	var err error
	for {
		if err = cond(); err == nil {
			return
		}
		select {
		case <-e.ctx.Done():
			e.fail("waiting for %s: %v", what, err)
		case <-e.k.Exited():
			e.fail("waiting for %s: the kubelet exited", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// resources returns the Node's allocatable and capacity of name.
func (e *realEnv) resources(name corev1.ResourceName) (alloc, capacity int64, err error) {
	n, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.node, metav1.GetOptions{})
	if err != nil {
		return 0, 0, err
	}
	a, c := n.Status.Allocatable[name], n.Status.Capacity[name]
	return a.Value(), c.Value(), nil
}

func (e *realEnv) waitResource(name corev1.ResourceName, alloc, capacity int64) {
	e.t.Helper()
	e.poll(fmt.Sprintf("%s allocatable %d, capacity %d", name, alloc, capacity), func() error {
		a, c, err := e.resources(name)
		if err != nil {
			return err
		}
		if a != alloc || c != capacity {
			return fmt.Errorf("allocatable %d, capacity %d", a, c)
		}
		return nil
	})
}

// createPod binds a pod of one container "main" asking limits to the node.
func (e *realEnv) createPod(name string, limits map[corev1.ResourceName]string, annotations map[string]string) {
	e.t.Helper()
	l := corev1.ResourceList{}
	for r, q := range limits {
		l[r] = resource.MustParse(q)
	}
	if _, err := e.c.Client.CoreV1().Pods("default").Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{{
			Name: "main", Image: "example.com/work:1",
			Resources: corev1.ResourceRequirements{Limits: l},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *realEnv) pod(name string) (*corev1.Pod, error) {
	return e.c.Client.CoreV1().Pods("default").Get(e.ctx, name, metav1.GetOptions{})
}

// running is nil when the pod is Running, its one container not restarted.
func (e *realEnv) running(name string) error {
	p, err := e.pod(name)
	if err != nil {
		return err
	}
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 0 {
		return fmt.Errorf("pod %s: phase %s, reason %q, message %q, statuses %+v", name, p.Status.Phase, p.Status.Reason, p.Status.Message, p.Status.ContainerStatuses)
	}
	return nil
}

func (e *realEnv) waitRunning(name string) {
	e.t.Helper()
	e.poll("pod "+name+" Running", func() error { return e.running(name) })
}

// waitFailed waits for the pod to fail and returns its reason and message.
func (e *realEnv) waitFailed(name string) (reason, message string) {
	e.t.Helper()
	e.poll("pod "+name+" Failed", func() error {
		p, err := e.pod(name)
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodRunning {
			e.fail("pod %s Running, want Failed: %+v", name, p.Status)
		}
		if p.Status.Phase != corev1.PodFailed {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		reason, message = p.Status.Reason, p.Status.Message
		return nil
	})
	return reason, message
}

// deletePod deletes the pod at once and waits until the kubelet has
// removed it.
func (e *realEnv) deletePod(name string) {
	e.t.Helper()
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods("default").Delete(e.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		e.t.Fatal(err)
	}
	e.poll("pod "+name+" gone", func() error {
		_, err := e.pod(name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			return fmt.Errorf("still there")
		}
		return err
	})
}

func (e *realEnv) records() []cri.Container {
	e.t.Helper()
	recs, err := e.k.Records()
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

// record is the one CreateContainer record of the pod's container main.
func (e *realEnv) record(pod string) cri.Container {
	e.t.Helper()
	mine := cri.Find(e.records(), "default", pod, "main")
	if len(mine) != 1 {
		e.fail("%d CreateContainer records of default/%s/main, want 1", len(mine), pod)
	}
	return mine[0]
}

// visible is the pod's NVIDIA_VISIBLE_DEVICES, sorted (the kubelet's
// Allocate request comes from a set, so its order is not fixed).
func (e *realEnv) visible(pod string) []string {
	e.t.Helper()
	r := e.record(pod)
	v, ok := r.Env["NVIDIA_VISIBLE_DEVICES"]
	if !ok {
		e.fail("pod %s: no NVIDIA_VISIBLE_DEVICES in %v", pod, r.Env)
	}
	out := strings.Split(v, ",")
	slices.Sort(out)
	return out
}

// setFaults replaces the mock's faults file atomically.
func (e *realEnv) setFaults(yaml string) {
	e.t.Helper()
	if err := os.WriteFile(e.faults+".tmp", []byte(yaml), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(e.faults+".tmp", e.faults); err != nil {
		e.t.Fatal(err)
	}
}

// realUUID is GPU i's UUID in realProfile.
func realUUID(i int) string {
	d := fmt.Sprint(i)
	return fmt.Sprintf("GPU-%s-%s-4%s-8%s-%s", strings.Repeat(d, 8), strings.Repeat(d, 4), strings.Repeat(d, 3), strings.Repeat(d, 3), strings.Repeat(d, 12))
}

func realUUIDs(is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, realUUID(i))
	}
	slices.Sort(out)
	return out
}
