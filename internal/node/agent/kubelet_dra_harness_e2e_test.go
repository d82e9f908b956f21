// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

// A harness for the agent's DRA plugin (--kubelet-api=dra) against a real
// kubelet, a real kube-apiserver (resource.k8s.io/v1) and a real
// scheduler: gpuplane-scheduler built from cmd/gpuplane-scheduler with
// upstream's default profile (default-scheduler: its DynamicResources
// plugin allocates the claims), and the DeviceClasses of the chart.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

type draEnv struct {
	*realEnv
	pluginDir, cdiDir string
	agentArgs         []string
}

// startDRAEnv starts a control plane, a kubelet node, the scheduler and
// the agent serving profile through DRA with agentArgs more, and waits for
// the node's ResourceSlices.
func startDRAEnv(t *testing.T, profile string, agentArgs ...string) *draEnv {
	t.Helper()
	return startDRAEnvWith(t, kube.KubeletOptions{}, profile, agentArgs...)
}

// startDRAEnvWith is startDRAEnv with the kubelet node's options. On a
// real-container node (KubeletOptions.Containerd) the agent writes its
// CDI specs into containerd's CDI directory and reads NVIDIA's toolkit
// spec from nvidia.yaml there (--cdi-toolkit-spec, as
// /var/run/cdi/nvidia.yaml on a GPU node), which the test writes, unless
// agentArgs give --driver-root (the agent's own specs alone).
func startDRAEnvWith(t *testing.T, o kube.KubeletOptions, profile string, agentArgs ...string) *draEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs gpuplane-node-agent, gpuplane-scheduler and a kubelet")
	}
	// Registered first, run last: the kubelet removed the files of its
	// working directory with its containers (internal/testenv/kube's
	// namespaceScript); this package's directory must keep them.
	t.Cleanup(func() {
		if _, err := os.Stat("kubelet_dra_harness_e2e_test.go"); err != nil {
			t.Errorf("the package's files are gone: %v", err)
		}
	})
	c := kube.StartT(t, kube.Options{})
	e := startRealEnvWith(t, c, o, profile, "version: v1\n")
	if err := kube.InstallDeviceClasses(e.ctx, c.Client, filepath.Join("..", "..", "..", kube.DeviceClassTemplate)); err != nil {
		t.Fatal(err)
	}
	kube.StartGPUplaneSchedulerT(t, c, kube.DefaultProfileOnly)
	d := &draEnv{realEnv: e, pluginDir: filepath.Join(e.k.RootDir, "plugins", apidra.DriverName), cdiDir: filepath.Join(e.dir, "cdi")}
	if e.k.Containerd != nil {
		d.cdiDir = e.k.Containerd.CDIDir
	}
	if e.k.Containerd != nil && !slices.Contains(agentArgs, "--driver-root") {
		agentArgs = append([]string{"--cdi-toolkit-spec", filepath.Join(d.cdiDir, "nvidia.yaml")}, agentArgs...)
	}
	d.agentArgs = append([]string{"--kubelet-api=dra", "--kubeconfig", c.Kubeconfig,
		"--dra-plugin-dir", d.pluginDir, "--dra-registrar-dir", filepath.Join(e.k.RootDir, "plugins_registry"),
		"--cdi-dir", d.cdiDir}, agentArgs...)
	d.startAgent()
	d.poll("ResourceSlices of "+e.node, func() error {
		l, err := c.Client.ResourceV1().ResourceSlices().List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(l.Items) == 0 {
			return fmt.Errorf("none")
		}
		return nil
	})
	return d
}

func (d *draEnv) startAgent() { d.realEnv.startAgent(d.agentArgs...) }

// restartAgent stops the agent (SIGTERM, clean exit) and starts it again.
func (d *draEnv) restartAgent() {
	d.t.Helper()
	d.a.stop(d.t)
	d.startAgent()
}

// createTemplate creates a ResourceClaimTemplate of one request "gpu"
// for one device of class, with the CEL selectors and capacity requests
// given.
func (d *draEnv) createTemplate(name, class string, capacity map[string]string, cel ...string) {
	d.t.Helper()
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: class}
	for _, x := range cel {
		req.Selectors = append(req.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: x}})
	}
	if len(capacity) > 0 {
		req.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{}}
		for k, v := range capacity {
			req.Capacity.Requests[resourcev1.QualifiedName(k)] = resource.MustParse(v)
		}
	}
	if _, err := d.c.Client.ResourceV1().ResourceClaimTemplates("default").Create(d.ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: req}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		d.t.Fatal(err)
	}
}

// createClaimPod creates a pod (to be scheduled) of one container "main"
// using a claim from the template.
func (d *draEnv) createClaimPod(name, template string) {
	d.t.Helper()
	d.createPodSpec(name, corev1.PodSpec{
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}},
		Containers: []corev1.Container{{Name: "main", Image: "example.com/work:1",
			Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
	})
}

// createLimitsPod creates a pod (to be scheduled) of one container "main"
// asking limits, no claim.
func (d *draEnv) createLimitsPod(name string, limits map[corev1.ResourceName]string) {
	d.t.Helper()
	l := corev1.ResourceList{}
	for r, q := range limits {
		l[r] = resource.MustParse(q)
	}
	d.createPodSpec(name, corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.com/work:1",
		Resources: corev1.ResourceRequirements{Limits: l}}}})
}

func (d *draEnv) createPodSpec(name string, spec corev1.PodSpec) {
	d.t.Helper()
	zero := int64(0)
	spec.TerminationGracePeriodSeconds = &zero
	if _, err := d.c.Client.CoreV1().Pods("default").Create(d.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		d.t.Fatal(err)
	}
}

// deletePod deletes the pod with a grace period of 1 s and waits until it
// is gone. Unlike realEnv's forced deletion (grace 0: the object goes at
// once, the kubelet cleans up later), the kubelet deletes the object
// only once the pod's resources are reclaimed, its claims unprepared
// among them (pkg/kubelet kubelet_pods.go, PodCouldHaveRunningContainers
// and the DRA manager's PodMightNeedToUnprepareResources): a pod gone is
// a pod whose devices the plugin has released. A pod never bound goes at
// once.
func (d *draEnv) deletePod(name string) {
	d.t.Helper()
	one := int64(1)
	if err := d.c.Client.CoreV1().Pods("default").Delete(d.ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
		d.t.Fatal(err)
	}
	d.waitGone("pod "+name, func() error { _, err := d.pod(name); return err })
}

// claim returns the pod's one ResourceClaim: from its template, or the
// one the scheduler made for its extended resources.
func (d *draEnv) claim(pod string) (*resourcev1.ResourceClaim, error) {
	p, err := d.pod(pod)
	if err != nil {
		return nil, err
	}
	var name string
	switch {
	case len(p.Status.ResourceClaimStatuses) == 1 && p.Status.ResourceClaimStatuses[0].ResourceClaimName != nil:
		name = *p.Status.ResourceClaimStatuses[0].ResourceClaimName
	case p.Status.ExtendedResourceClaimStatus != nil:
		name = p.Status.ExtendedResourceClaimStatus.ResourceClaimName
	default:
		return nil, fmt.Errorf("pod %s names no claim yet: %+v", pod, p.Status)
	}
	return d.c.Client.ResourceV1().ResourceClaims("default").Get(d.ctx, name, metav1.GetOptions{})
}

// devices are the devices allocated to the pod's claim, by name.
func (d *draEnv) devices(pod string) []string {
	d.t.Helper()
	c, err := d.claim(pod)
	if err != nil {
		d.fail("%v", err)
	}
	if c.Status.Allocation == nil {
		d.fail("claim %s of pod %s not allocated", c.Name, pod)
	}
	var out []string
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.Driver != apidra.DriverName || r.Pool != d.node {
			d.fail("claim %s: result %+v, want driver %s, pool %s", c.Name, r, apidra.DriverName, d.node)
		}
		out = append(out, r.Device)
	}
	slices.Sort(out)
	return out
}

// waitUnschedulable waits until the scheduler has found no node for the
// pod and returns its PodScheduled message.
func (d *draEnv) waitUnschedulable(pod string) string {
	d.t.Helper()
	var msg string
	d.poll("pod "+pod+" unschedulable", func() error {
		p, err := d.pod(pod)
		if err != nil {
			return err
		}
		if p.Spec.NodeName != "" {
			d.fail("pod %s bound to %s, want it pending", pod, p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				msg = c.Message
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", p.Status.Conditions)
	})
	return msg
}

// waitGone waits until the object get reads is deleted.
func (d *draEnv) waitGone(what string, get func() error) {
	d.t.Helper()
	d.poll(what+" gone", func() error {
		err := get()
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			return fmt.Errorf("still there")
		}
		return err
	})
}

// logCount counts the agent's log lines holding s.
func (d *draEnv) logCount(s string) int { return strings.Count(d.log(), s) }

// logLine reports whether a line of the agent's log holds all of subs.
func (d *draEnv) logLine(subs ...string) bool {
	for _, l := range strings.Split(d.log(), "\n") {
		if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(l, s) }) {
			return true
		}
	}
	return false
}

// cdiSpecs are the CDI spec files the plugin wrote, by name.
func (d *draEnv) cdiSpecs() []string {
	d.t.Helper()
	ents, err := os.ReadDir(d.cdiDir)
	if err != nil && !os.IsNotExist(err) {
		d.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
