// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
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

// draMIG2Node is two A100-SXM4-80GB in MIG mode with no MIG device.
const draMIG2Node = `name: dra-mig2
gpus:
  - {count: 2, productName: NVIDIA A100-SXM4-80GB, migEnabled: true}
`

// TestRealKubeletDRAMIGOrder: the plugin's published order of MIG
// placements follows what the real kubelet prepares and unprepares. The
// agent ranks against half 2g.20gb, half 4g.40gb pods
// (--dra-target-workload-file; shares of 285 and 571 milli-GPU), as
// internal/node/dra's TestBuildRank and placement's TestRankMIG work by
// hand on these two GPUs. The 2g.20gb devices, read from the API server's
// ResourceSlices in the allocator's order (slices by name, devices in
// order):
//   - empty: GPU 0 and 1 at slot 4 (a 2g there keeps the GPU's 4g start,
//     fragmentation 0), then slots 0 and 2 of each (357.5);
//   - with a pod's 4g.40gb running (gpu-0-mig-4g40gb-5-0, the empty
//     node's first 4g placement): GPU 1 at 4, 0, 2, then GPU 0 at 4
//     (beside the 4g, slot 6 stranded), then GPU 0's 0 and 2, which the
//     4g overlaps;
//   - with that pod deleted (unprepared): the empty order again.
//
// In the table's order (--dra-mig-order=table) the first wait fails: 0@0,
// 0@2, 0@4, 1@0, 1@2, 1@4.
func TestRealKubeletDRAMIGOrder(t *testing.T) {
	pods := filepath.Join(t.TempDir(), "pods.csv")
	csv := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,285,\np1,4000,8192,1,571,\n"
	if err := os.WriteFile(pods, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDRAEnv(t, draMIG2Node, "--dra-target-workload-file="+pods)
	empty := []string{"0@4", "1@4", "0@0", "0@2", "1@0", "1@2"}
	d.waitOrder2g("the empty node's order", empty)
	d.createTemplate("mig-4g", "mig.nvidia.com", nil, "device.attributes['gpu.nvidia.com'].profile == '4g.40gb'")
	d.createClaimPod("big", "mig-4g")
	d.waitRunning("big")
	if dev, _ := d.migOf("big"); dev != "gpu-0-mig-4g40gb-5-0" {
		d.fail("4g.40gb on %s, want gpu-0-mig-4g40gb-5-0", dev)
	}
	d.waitOrder2g("the order with the 4g prepared", []string{"1@4", "1@0", "1@2", "0@4", "0@0", "0@2"})
	d.deletePod("big")
	d.waitOrder2g("the order with the 4g unprepared", empty)
}

// waitOrder2g waits until the node's published 2g.20gb devices, in the
// allocator's order, are want ("<GPU>@<start>").
func (d *draEnv) waitOrder2g(what string, want []string) {
	d.t.Helper()
	d.poll(what, func() error {
		l, err := d.c.Client.ResourceV1().ResourceSlices().List(d.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		sl := l.Items
		slices.SortFunc(sl, func(a, b resourcev1.ResourceSlice) int { return strings.Compare(a.Name, b.Name) })
		var got []string
		for _, s := range sl {
			for _, dev := range s.Spec.Devices {
				var g, start int
				if _, err := fmt.Sscanf(dev.Name, "gpu-%d-mig-2g20gb-14-%d", &g, &start); err == nil {
					got = append(got, fmt.Sprintf("%d@%d", g, start))
				}
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("2g.20gb devices %v, want %v", got, want)
		}
		return nil
	})
}

// TestRealKubeletDRAMIGAgreement: a sequence of MIG claims and a release
// on the real kubelet, the agent ranking its placements
// (--dra-mig-order=core, the chart's default) against a third each of
// 2g.20gb, 3g.40gb and 4g.40gb pods, gets the GPU and start slot the
// simulator chooses for each under `--gpu-api dra --dra-mig-order core`
// (placement.WithDRAOrder with CoreOrder over FGD, placement.Allocate, on
// a node of two A100-80GB of MIG on demand): the whole path from the
// core's ranking through the agent's republication after each prepare
// and unprepare, the scheduler's allocator and the kubelet's prepare.
// Before each claim the test waits until the API server's first
// placement of the claim's profile is the simulator's choice (the agent
// republishes after a prepare: the stale window, docs/dra.md); a ranking
// that differs from the core's never gets there and fails the wait. The
// release is of the pod at the highest start of its profile on its GPU,
// the instance the simulator's release frees (cluster's dynTake).
func TestRealKubeletDRAMIGAgreement(t *testing.T) {
	pods := filepath.Join(t.TempDir(), "pods.csv")
	csv := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,285,\np1,4000,8192,1,400,\np2,4000,8192,1,571,\n"
	if err := os.WriteFile(pods, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := newMIGSim(t, pods)
	d := startDRAEnv(t, draMIG2Node, "--dra-target-workload-file="+pods)
	profiles := gpu.MIGProfiles("A100-80GB")
	for _, k := range []int{3, 4, 5} {
		d.createTemplate("mig-"+profiles[k].Name, "mig.nvidia.com", nil, fmt.Sprintf("device.attributes['gpu.nvidia.com'].profile == '%s'", profiles[k].Name))
	}
	// Claims of 4g.40gb, 2g.20gb, 3g.40gb, 2g.20gb and 2g.20gb, m1's
	// release (-1), then a 3g.40gb.
	for i, k := range []int{5, 3, 4, 3, 3, -1, 4} {
		if k < 0 {
			d.deletePod("m1")
			sim.release("m1")
			continue
		}
		name := fmt.Sprintf("m%d", i)
		want := sim.place(name, k)
		d.waitFirst(profiles[k].Name, want)
		created := time.Now()
		d.createClaimPod(name, "mig-"+profiles[k].Name)
		d.waitRunning(name)
		running := time.Since(created)
		dev, _ := d.migOf(name)
		if got := placementOf(dev); got != want {
			t.Errorf("pod %s (%s): %s, the simulator's choice %s", name, profiles[k].Name, dev, want)
		}
		t.Logf("pod %s (%s): %s, Running %.2f s after its creation", name, profiles[k].Name, dev, running.Seconds())
	}
}

// migSim is the simulator's side of TestRealKubeletDRAMIGAgreement.
type migSim struct {
	t      *testing.T
	c      *cluster.Cluster
	pol    placement.Policy
	pl     *placement.Placer
	placed map[string]simPod
}

// simPod is a pod the simulator placed and its GPU.
type simPod struct {
	pod cluster.Pod
	gpu int
}

// newMIGSim is a node of two A100-80GB of MIG on demand and the
// simulator's placer under --gpu-api dra --dra-mig-order core, FGD
// against the pods of file as the agent reads them.
func newMIGSim(t *testing.T, file string) *migSim {
	pods, err := trace.ReadTargetPods(file)
	if err != nil {
		t.Fatal(err)
	}
	tw := placement.NewTargetWorkload(pods, placement.DefaultPopularity)
	c := cluster.New()
	ni, err := c.AddNode("dra-mig2", 1<<20, 1<<30, 2, "A100-80GB")
	if err != nil {
		t.Fatal(err)
	}
	for g := range 2 {
		if err := c.Nodes[ni].EnableDynamicMIG(g); err != nil {
			t.Fatal(err)
		}
	}
	pol := placement.WithDRAOrder(placement.FGD{Target: tw}, placement.DRA, placement.CoreOrder, tw)
	return &migSim{t: t, c: c, pol: pol, pl: placement.NewPlacer(pol, placement.TieFirst, rand.New(rand.NewPCG(1, 0))), placed: map[string]simPod{}}
}

// release releases pod name: the instance of its profile at the highest
// start on its GPU.
func (s *migSim) release(name string) {
	sp := s.placed[name]
	if err := s.c.Nodes[0].Remove(&sp.pod, 1<<uint(sp.gpu)); err != nil {
		s.t.Fatal(err)
	}
	delete(s.placed, name)
}

// place places pod name of MIG profile k and returns its
// "<GPU>@<start>".
func (s *migSim) place(name string, k int) string {
	p := cluster.Pod{Name: name, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, MIGProfile: int8(k + 1), GPUMilli: cluster.MIGMilli(k), Resource: cluster.ResourceMIG}
	ni, set, ok := s.pl.Place(s.c, &p)
	if !ok {
		s.t.Fatalf("the simulator places no %s", gpu.MIGProfiles("A100-80GB")[k].Name)
	}
	n := &s.c.Nodes[ni]
	g := set.Indices()[0]
	before := n.DynamicMIGStarts(g, k)
	if err := placement.Allocate(s.pol, s.c, ni, &p, set); err != nil {
		s.t.Fatal(err)
	}
	s.placed[name] = simPod{p, g}
	for _, st := range n.DynamicMIGStarts(g, k) {
		if !slices.Contains(before, st) {
			return fmt.Sprintf("%d@%d", g, st)
		}
	}
	s.t.Fatalf("no new %s instance on GPU %d", gpu.MIGProfiles("A100-80GB")[k].Name, g)
	return ""
}

// placementOf is "<GPU>@<start>" of a MIG device named
// gpu-<minor>-mig-<profile>-<id>-<start>.
func placementOf(device string) string {
	g, rest, _ := strings.Cut(strings.TrimPrefix(device, "gpu-"), "-mig-")
	return g + "@" + rest[strings.LastIndexByte(rest, '-')+1:]
}

// waitFirst waits until the first placement of profile that the API
// server's ResourceSlices publish, in the allocator's order (slices by
// name, devices in order), is want ("<GPU>@<start>"). The agent publishes
// a profile's free placements first, ranked (internal/node/dra's
// orderMIG), so that is the one the allocator takes.
func (d *draEnv) waitFirst(profile, want string) {
	d.t.Helper()
	infix := "-mig-" + strings.ReplaceAll(profile, ".", "") + "-"
	d.poll("the first "+profile+" placement "+want, func() error {
		l, err := d.c.Client.ResourceV1().ResourceSlices().List(d.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		sl := l.Items
		slices.SortFunc(sl, func(a, b resourcev1.ResourceSlice) int { return strings.Compare(a.Name, b.Name) })
		for _, s := range sl {
			for _, dev := range s.Spec.Devices {
				if strings.Contains(dev.Name, infix) {
					if got := placementOf(dev.Name); got != want {
						return fmt.Errorf("first %s placement %s, want %s", profile, got, want)
					}
					return nil
				}
			}
		}
		return fmt.Errorf("no %s placement published", profile)
	})
}
