// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// draMixedNode: GPU 0 an A100-80GB in MIG mode, GPU 1 an H100 shared
// (with --dra-shares; GPUs in MIG mode are not shared).
const draMixedNode = `name: dra-mixed
gpus:
  - {productName: NVIDIA A100-SXM4-80GB, migEnabled: true, uuid: GPU-00000000-0000-4000-8000-000000000000}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-11111111-1111-4111-8111-111111111111}
`

// TestRealKubeletDRABadClaims: claims that cannot be honoured.
//   - milliGPU 1500, beyond the share's 1..1000: no device fits, the pod
//     stays pending with the scheduler's message; nothing is prepared.
//   - MIG profile 2g.35gb (an H100's) on the A100: no device has it,
//     pending likewise.
//   - A selector that is not CEL: the API server refuses the template.
//   - A claim allocated by hand (as an administrator or a broken scheduler
//     could) to the MIG device another pod's claim holds: the plugin
//     refuses it, the kubelet reports the plugin's error in a
//     FailedPrepareDynamicResources event and does not start the pod; no
//     MIG device is created or destroyed, no CDI spec written for it.
func TestRealKubeletDRABadClaims(t *testing.T) {
	d := startDRAEnv(t, draMixedNode, "--dra-shares")
	d.createTemplate("too-much", "gpu.nvidia.com", map[string]string{"milliGPU": "1500"})
	d.createClaimPod("much", "too-much")
	t.Logf("milliGPU 1500: %s", d.waitUnschedulable("much"))
	d.createTemplate("h100-profile", "mig.nvidia.com", nil, "device.attributes['gpu.nvidia.com'].profile == '2g.35gb'")
	d.createClaimPod("prof", "h100-profile")
	t.Logf("2g.35gb on an A100: %s", d.waitUnschedulable("prof"))
	_, err := d.c.Client.ResourceV1().ResourceClaimTemplates("default").Create(d.ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "not-cel"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "mig.nvidia.com",
				Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "device.attributes['gpu.nvidia.com'].profile = '1g.10gb'"}}}}}},
		}}},
	}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression") || !strings.Contains(err.Error(), "compilation failed") {
		t.Errorf("a selector that is not CEL: %v", err)
	}
	if n := d.logCount("Preparing claim") + d.logCount("Created a MIG device"); n != 0 {
		t.Errorf("%d prepare log lines for claims never allocated", n)
	}

	d.createTemplate("mig-1g", "mig.nvidia.com", nil, sel1g)
	d.createClaimPod("m", "mig-1g")
	d.waitRunning("m")
	mdev, _ := d.migOf("m")
	d.rogueClaim("rogue", mdev)
	d.poll("the kubelet's FailedPrepareDynamicResources event", func() error {
		l, err := d.c.Client.CoreV1().Events("default").List(d.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=rogue"})
		if err != nil {
			return err
		}
		for _, ev := range l.Items {
			// The pod is bound before its claim is reserved for it
			// (rogueClaim needs the pod's UID): a kubelet quicker than
			// that update refuses the claim first, then retries.
			if ev.Reason == "FailedPrepareDynamicResources" && !strings.Contains(ev.Message, "is not allowed to use ResourceClaim") {
				want := "device " + mdev + " of request gpu: already prepared for claim"
				if !strings.Contains(ev.Message, want) {
					d.fail("event message %q, want it to hold %q", ev.Message, want)
				}
				t.Logf("event: %s", ev.Message)
				return nil
			}
		}
		return fmt.Errorf("events %+v", l.Items)
	})
	if p, err := d.pod("rogue"); err != nil || p.Status.Phase != corev1.PodPending || len(d.recordsOf("rogue")) != 0 {
		t.Errorf("rogue pod: %v %+v, %d containers created; want it pending, none", err, p.Status, len(d.recordsOf("rogue")))
	}
	if n, m := d.logCount("Created a MIG device"), d.logCount("Destroyed a MIG device"); n != 1 || m != 0 {
		t.Errorf("%d MIG devices created, %d destroyed; want 1 (m's), 0", n, m)
	}
	if s := d.cdiSpecs(); len(s) != 1 {
		t.Errorf("CDI specs %v, want m's only", s)
	}
	// A claim never prepared unprepares without error: the pod goes.
	d.deletePod("rogue")
}

// rogueClaim binds a pod to the node with a claim allocated by hand to
// device, reserved for the pod, bypassing the scheduler.
func (d *draEnv) rogueClaim(name, device string) {
	d.t.Helper()
	cl := d.c.Client.ResourceV1().ResourceClaims("default")
	claim, err := cl.Create(d.ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	zero := int64(0)
	claimName := name
	pod, err := d.c.Client.CoreV1().Pods("default").Create(d.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: d.node, TerminationGracePeriodSeconds: &zero,
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claimName}},
			Containers: []corev1.Container{{Name: "main", Image: "example.com/work:1",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		d.t.Fatal(err)
	}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: apidra.DriverName, Pool: d.node, Device: device}},
	}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: name, UID: pod.UID}}
	if _, err := cl.UpdateStatus(d.ctx, claim, metav1.UpdateOptions{}); err != nil {
		d.t.Fatal(err)
	}
}

// recordsOf are the CreateContainer records of the pod's container main.
func (d *draEnv) recordsOf(pod string) []string {
	var out []string
	for _, r := range d.records() {
		if r.Namespace == "default" && r.Pod == pod {
			out = append(out, r.ID)
		}
	}
	return out
}
