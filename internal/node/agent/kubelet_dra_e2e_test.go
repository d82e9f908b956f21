// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// draTwoGPUs is a node of two whole H100s, minors 0 and 1, the UUIDs of
// realProfile's GPUs 0 and 1.
const draTwoGPUs = `name: dra-two
gpus:
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-00000000-0000-4000-8000-000000000000}
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-11111111-1111-4111-8111-111111111111}
`

// TestRealKubeletDRAExtendedResource: pods asking nvidia.com/gpu: 1, no
// claim in their spec, are served through DRA: DeviceClass gpu.nvidia.com
// names nvidia.com/gpu as its extendedResourceName, the node has no
// nvidia.com/gpu in its allocatable (no device plugin), so the scheduler
// makes a ResourceClaim for each pod (pod.status.extendedResourceClaimStatus)
// and allocates it one whole GPU. On a node of two GPUs two such pods run
// on distinct GPUs, gpu-0 and gpu-1, and each container was created with
// the CDI device of its GPU, nvidia.com/gpu=<UUID>, and no other; the
// plugin wrote those two CDI specs. A third pod stays pending.
func TestRealKubeletDRAExtendedResource(t *testing.T) {
	d := startDRAEnv(t, draTwoGPUs)
	if a, c, err := d.resources(gpuresource.GPU); err != nil || a != 0 || c != 0 {
		t.Fatalf("node %s: nvidia.com/gpu allocatable %d, capacity %d (%v); want none", d.node, a, c, err)
	}
	for _, p := range []string{"a", "b"} {
		d.createLimitsPod(p, map[corev1.ResourceName]string{gpuresource.GPU: "1"})
	}
	d.waitRunning("a")
	d.waitRunning("b")
	got := map[string]string{} // device -> pod
	for _, p := range []string{"a", "b"} {
		pod, err := d.pod(p)
		if err != nil {
			t.Fatal(err)
		}
		st := pod.Status.ExtendedResourceClaimStatus
		if st == nil || len(st.RequestMappings) != 1 || st.RequestMappings[0].ContainerName != "main" || st.RequestMappings[0].ResourceName != string(gpuresource.GPU) {
			d.fail("pod %s: extendedResourceClaimStatus %+v, want one mapping of main's nvidia.com/gpu", p, st)
		}
		devs := d.devices(p)
		if len(devs) != 1 {
			d.fail("pod %s: devices %v, want one", p, devs)
		}
		if prev, ok := got[devs[0]]; ok {
			t.Errorf("%s given to pods %s and %s", devs[0], prev, p)
		}
		got[devs[0]] = p
		minor := strings.TrimPrefix(devs[0], "gpu-")
		var i int
		if _, err := fmt.Sscan(minor, &i); err != nil || (i != 0 && i != 1) {
			d.fail("pod %s: device %s, want gpu-0 or gpu-1", p, devs[0])
		}
		if r := d.record(p); !slices.Equal(r.CDIDevices, []string{"nvidia.com/gpu=" + realUUID(i)}) {
			t.Errorf("pod %s (%s): CDI devices %v, want [nvidia.com/gpu=%s]", p, devs[0], r.CDIDevices, realUUID(i))
		}
	}
	want := []string{"gpuplane_nvidia.com_gpu_" + realUUID(0) + ".json", "gpuplane_nvidia.com_gpu_" + realUUID(1) + ".json"}
	if got := d.cdiSpecs(); !slices.Equal(got, want) {
		t.Errorf("CDI specs %v, want %v", got, want)
	}
	// The agent's metrics count the two claims as NVIDIA's DRA driver
	// does (drametrics): two whole GPUs prepared, no prepare error.
	mfs := d.a.scrape(t)
	gpus := oneValue(t, mfs, "nvidia_dra_prepared_devices", map[string]string{"device_type": "gpu", "driver": "gpu.nvidia.com"})
	preps := oneValue(t, mfs, "nvidia_dra_requests_total", map[string]string{"operation": "prepare"})
	if gpus != 2 || preps < 2 || len(seriesOf(mfs, "nvidia_dra_node_prepare_errors_total", nil)) != 0 {
		t.Errorf("nvidia_dra_prepared_devices{gpu} %v, nvidia_dra_requests_total{prepare} %v, prepare errors %v; want 2, at least 2, none",
			gpus, preps, seriesOf(mfs, "nvidia_dra_node_prepare_errors_total", nil))
	}
	d.createLimitsPod("c", map[corev1.ResourceName]string{gpuresource.GPU: "1"})
	t.Logf("third pod: %s", d.waitUnschedulable("c"))
	n, err := d.c.Client.CoreV1().Nodes().Get(d.ctx, d.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Status.Allocatable[gpuresource.GPU]; ok {
		t.Errorf("node allocatable %v has nvidia.com/gpu", n.Status.Allocatable)
	}
}
