// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/dra"
)

// TestRealKubeletDRAMPSWithoutProgram: on a node whose agent cannot find
// nvidia-cuda-mps-control (the agent says so at start), a pod whose
// claim asks MPS (GpuConfig, strategy MPS) is scheduled onto GPU 0, and
// the plugin refuses its prepare with the message naming the program:
// the kubelet reports it in a FailedPrepareDynamicResources event and
// does not start the pod; nothing is held (no CDI spec, no daemon
// directory). Deleting the pod completes (the kubelet deletes it only
// once its claim is unprepared), and a pod without MPS then runs on the
// same GPU.
func TestRealKubeletDRAMPSWithoutProgram(t *testing.T) {
	if p, err := exec.LookPath(dra.DefaultMPSControl); err == nil {
		t.Skipf("%s is on PATH (%s): the agent would run it", dra.DefaultMPSControl, p)
	}
	d := startDRAEnv(t, draOneGPU)
	if !d.logLine("Claims under an MPS configuration will be refused") {
		d.fail("the agent did not log at start that MPS claims will be refused")
	}
	mps := `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}}`
	if _, err := d.c.Client.ResourceV1().ResourceClaimTemplates("default").Create(d.ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "mps"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}},
			Config: []resourcev1.DeviceClaimConfiguration{{DeviceConfiguration: resourcev1.DeviceConfiguration{
				Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: apidra.DriverName, Parameters: runtime.RawExtension{Raw: []byte(mps)}}}}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.createClaimPod("mps", "mps")
	want := "sharing strategy MPS needs NVIDIA's MPS control program, which the node agent cannot find"
	d.poll("the kubelet's FailedPrepareDynamicResources event", func() error {
		l, err := d.c.Client.CoreV1().Events("default").List(d.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=mps"})
		if err != nil {
			return err
		}
		for _, ev := range l.Items {
			if ev.Reason == "FailedPrepareDynamicResources" {
				if !strings.Contains(ev.Message, want) {
					d.fail("event message %q, want it to hold %q", ev.Message, want)
				}
				t.Logf("event: %s", ev.Message)
				return nil
			}
		}
		return fmt.Errorf("events %+v", l.Items)
	})
	if p, err := d.pod("mps"); err != nil || p.Status.Phase != corev1.PodPending || len(d.recordsOf("mps")) != 0 {
		t.Errorf("pod mps: %v %+v, %d containers created; want it pending, none", err, p.Status, len(d.recordsOf("mps")))
	}
	if s := d.cdiSpecs(); len(s) != 0 {
		t.Errorf("CDI specs %v after the refusal, want none", s)
	}
	if ents, _ := os.ReadDir(filepath.Join(d.pluginDir, "mps")); len(ents) != 0 {
		t.Errorf("MPS daemon directories %v after the refusal, want none", ents)
	}
	d.deletePod("mps")

	d.createTemplate("plain", "gpu.nvidia.com", nil)
	d.createClaimPod("plain", "plain")
	d.waitRunning("plain")
	if got := d.devices("plain"); strings.Join(got, ",") != "gpu-0" {
		t.Errorf("plain pod's devices %v, want gpu-0", got)
	}
}
