// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// draMIGNode is one A100-SXM4-80GB in MIG mode with no MIG device: the
// plugin publishes its 25 placements (no whole GPU in MIG mode) and
// creates MIG devices on prepare.
const draMIGNode = `name: dra-mig
gpus:
  - {productName: NVIDIA A100-SXM4-80GB, migEnabled: true, uuid: GPU-00000000-0000-4000-8000-000000000000}
`

const (
	sel1g = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
	sel3g = "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
)

// migOf is the pod's MIG device: the device allocated to its claim and
// the MIG UUID its container got as CDI device nvidia.com/gpu=<UUID>.
func (d *draEnv) migOf(pod string) (device, uuid string) {
	d.t.Helper()
	devs := d.devices(pod)
	r := d.record(pod)
	if len(devs) != 1 || len(r.CDIDevices) != 1 || !strings.HasPrefix(r.CDIDevices[0], "nvidia.com/gpu=MIG-") {
		d.fail("pod %s: devices %v, CDI devices %v; want one MIG device", pod, devs, r.CDIDevices)
	}
	return devs[0], strings.TrimPrefix(r.CDIDevices[0], "nvidia.com/gpu=")
}

// waitDestroyed waits for the agent to log the destruction of the MIG
// device uuid at device and to remove its CDI spec.
func (d *draEnv) waitDestroyed(device, uuid string) {
	d.t.Helper()
	d.poll("MIG device "+device+" destroyed", func() error {
		if !d.logLine(`"Destroyed a MIG device"`, `device="`+device+`" mig="`+uuid+`"`) {
			return fmt.Errorf("not in the agent's log")
		}
		if slices.Contains(d.cdiSpecs(), "gpuplane_nvidia.com_gpu_"+uuid+".json") {
			return fmt.Errorf("its CDI spec is still there")
		}
		return nil
	})
}

// TestRealKubeletDRAMIG: MIG devices made on demand on a mock
// A100-80GB. By the MIG table (NVIDIA's A100 MIG user guide), 1g.10gb
// (GPU instance profile ID 19) starts at memory slots 0..6, at most 7;
// 3g.40gb (ID 9) at 0 or 4 and spans 4 memory slots and 3 of the 7
// compute slices. So:
//   - seven pods each with a 1g.10gb claim all run: the scheduler
//     allocates gpu-0-mig-1g10gb-19-0 .. -6, one each, and the plugin
//     creates seven MIG devices, seven distinct UUIDs, each container
//     getting its own as its CDI device;
//   - an 8th 1g.10gb pod stays pending (the 7 compute slices are used);
//   - with the pod at slot 4 deleted, its MIG device is destroyed (its CDI
//     spec removed) but a 3g.40gb pod still waits: slot 0 is taken, and
//     at slot 4 slots 5 and 6 are, and 6 + 3 compute slices exceed 7;
//   - with the pods at slots 5 and 6 deleted too, the 3g.40gb pod runs
//     on gpu-0-mig-3g40gb-9-4 (slots 4..7, 4 + 3 compute slices); the
//     mock backend refuses a GPU instance overlapping a live one, so its
//     creation shows the three 1g.10gb devices were destroyed.
func TestRealKubeletDRAMIG(t *testing.T) {
	d := startDRAEnv(t, draMIGNode)
	d.createTemplate("mig-1g", "mig.nvidia.com", nil, sel1g)
	d.createTemplate("mig-3g", "mig.nvidia.com", nil, sel3g)
	for i := range 7 {
		d.createClaimPod(fmt.Sprintf("m%d", i), "mig-1g")
	}
	bySlot := map[int]string{} // start slot -> pod
	uuids := map[string]string{}
	for i := range 7 {
		p := fmt.Sprintf("m%d", i)
		d.waitRunning(p)
		dev, uuid := d.migOf(p)
		var slot int
		if _, err := fmt.Sscanf(dev, "gpu-0-mig-1g10gb-19-%d", &slot); err != nil || slot < 0 || slot > 6 {
			d.fail("pod %s: device %s, want gpu-0-mig-1g10gb-19-<0..6>", p, dev)
		}
		if prev, ok := bySlot[slot]; ok {
			t.Errorf("%s allocated to %s and %s", dev, prev, p)
		}
		bySlot[slot] = p
		if prev, ok := uuids[uuid]; ok {
			t.Errorf("MIG device %s given to %s and %s", uuid, prev, p)
		}
		uuids[uuid] = p
	}
	if n := d.logCount("Created a MIG device"); n != 7 {
		t.Errorf("%d MIG devices created, want 7", n)
	}
	if n := len(d.cdiSpecs()); n != 7 {
		t.Errorf("%d CDI specs, want 7: %v", n, d.cdiSpecs())
	}
	d.createClaimPod("m7", "mig-1g")
	t.Logf("8th 1g.10gb pod: %s", d.waitUnschedulable("m7"))
	d.deletePod("m7")

	_, u4 := d.migOf(bySlot[4])
	d.deletePod(bySlot[4])
	d.waitDestroyed("gpu-0-mig-1g10gb-19-4", u4)
	d.createClaimPod("big", "mig-3g")
	t.Logf("3g.40gb pod with slots 0..3, 5 and 6 taken: %s", d.waitUnschedulable("big"))
	d.deletePod(bySlot[5])
	d.deletePod(bySlot[6])
	d.waitRunning("big")
	dev, uuid := d.migOf("big")
	if dev != "gpu-0-mig-3g40gb-9-4" {
		t.Errorf("3g.40gb pod on %s, want gpu-0-mig-3g40gb-9-4", dev)
	}
	if _, ok := uuids[uuid]; ok {
		t.Errorf("3g.40gb pod got %s, a 1g.10gb device's UUID", uuid)
	}
	if n, m := d.logCount("Created a MIG device"), d.logCount("Destroyed a MIG device"); n != 8 || m != 3 {
		t.Errorf("%d MIG devices created, %d destroyed; want 8 and 3", n, m)
	}
	for s := range 4 {
		if err := d.running(bySlot[s]); err != nil {
			t.Error(err)
		}
	}
}
