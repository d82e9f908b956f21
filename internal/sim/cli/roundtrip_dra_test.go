// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// rtDRATemplates are the ResourceClaimTemplates of the DRA round trip, by
// name: a whole GPU (class gpu.nvidia.com, as NVIDIA's quickstart
// gpu-test1) and MIG devices of class mig.nvidia.com selected by profile
// (NVIDIA's gpu-test-mig shapes), made on demand on the GPU in MIG mode.
var rtDRATemplates = map[string]resourceapi.ExactDeviceRequest{
	"whole": {DeviceClassName: apidra.GPUDeviceClass},
	"mig1g": {DeviceClassName: apidra.MIGDeviceClass, Selectors: rtProfile("1g.10gb")},
	"mig3g": {DeviceClassName: apidra.MIGDeviceClass, Selectors: rtProfile("3g.40gb")},
	"mig7g": {DeviceClassName: apidra.MIGDeviceClass, Selectors: rtProfile("7g.80gb")},
}

func rtProfile(p string) []resourceapi.DeviceSelector {
	return []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "device.attributes['" + apidra.DriverName + "'].profile == '" + p + "'"}}}
}

// rtDRAPod is a pod of the DRA round trip: a claim from template tpl
// ("" none) or gpus nvidia.com/gpu devices; want is the node worked out by
// hand ("" pending, "*" any).
type rtDRAPod struct {
	name, tpl string
	gpus      int64
	want      string
}

func (p rtDRAPod) object(gated bool) *corev1.Pod {
	c := corev1.Container{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("8Gi")}}}
	o := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: rtNS}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	if p.tpl != "" {
		o.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(p.tpl)}}
		o.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	if p.gpus > 0 {
		q := *resource.NewQuantity(p.gpus, resource.DecimalSI)
		o.Spec.Containers[0].Resources.Requests[gpuresource.GPU] = q
		o.Spec.Containers[0].Resources.Limits = corev1.ResourceList{gpuresource.GPU: q}
	}
	if gated {
		o.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: rtGate}}
	}
	return o
}

// TestRoundTripDRA is issue 32's round trip on DRA: a node whose GPUs
// gpuplane's driver publishes (dra.Build of realProfile: GPU 0 an
// A100-80GB in MIG mode, its placements made on demand; GPU 1 whole),
// with the chart's DeviceClasses, beside a device-plugin T4 node and a
// CPU node, on a real control plane whose kube-scheduler (default
// profile: DynamicResources allocates) and resourceclaim controller
// (claims from templates) decide. `kubectl get
// nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o json` is
// read by simulate --snapshot --gpu-api dra --sharing mig: every running
// pod is read on its node, every pod kube-scheduler leaves Unschedulable
// is pending in the simulator, and a second wave, gated, predicted and
// ungated one pod at a time, lands where the simulator says (one DRA node:
// the node is the placement) or is pending in both. What it shows: claims
// fit only the node whose slices publish their devices (never the T4),
// nvidia.com/gpu never the DRA-only node, and a MIG profile the GPU can
// no longer make stays pending in both.
func TestRoundTripDRA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a control plane and builds gpuplane-scheduler")
	}
	kubectl := kube.Binary(t, "kubectl")
	c := kube.StartT(t, kube.Options{})
	rtDRASetup(t, c)
	kube.StartGPUplaneSchedulerT(t, c, kube.DefaultProfileOnly)
	// By hand: one whole GPU (GPU 1; GPU 0 in MIG mode publishes MIG
	// placements only), so train-1 waits though the T4 has two free
	// (it publishes no slices); GPU 0 makes two 1g.10gb and a 3g.40gb
	// (5 of 7 slices), so no 7g.80gb; the device-plugin pod takes the T4
	// (the DRA-only node maps no extended resource).
	wave1 := []rtDRAPod{
		{name: "train-0", tpl: "whole", want: "a100-0"}, {name: "train-1", tpl: "whole"},
		{name: "nb-0", tpl: "mig1g", want: "a100-0"}, {name: "nb-1", tpl: "mig1g", want: "a100-0"},
		{name: "ft-0", tpl: "mig3g", want: "a100-0"},
		{name: "big-0", tpl: "mig7g"},
		{name: "dp-0", gpus: 1, want: "t4-0"},
		{name: "cpu-0", want: "*"},
	}
	for _, p := range wave1 {
		rtDRACreate(t, c, p, false)
		rtWait(t, c, []rtPod{{name: p.name}})
	}
	real := rtWait(t, c, rtDRAAsRt(wave1))
	file := rtDRASnapshot(t, c, kubectl)
	if n, want := rtReadRunning(t, file, real), rtCount(real); n != want || want == 0 {
		t.Errorf("the reader reads %d pods bound where they run, of %d", n, want)
	}
	pred, stderr := rtSimulateDRA(t, file)
	for _, p := range wave1 {
		s := real[p.name]
		rtDRAWant(t, p, s)
		if s.node != "" {
			if rtNamed(rtLeftOut(stderr), p.name) {
				t.Errorf("pod %s runs on %s; the simulator left it out", p.name, s.node)
			}
			continue
		}
		if o, ok := pred[p.name]; !ok || o.Node != "" {
			t.Errorf("pod %s is Unschedulable (%s); the simulator: %+v", p.name, s.msg, o)
		}
		t.Logf("wave 1: %s pending in both (%s; simulator %s)", p.name, s.msg, pred[p.name].Reason)
	}
	// By hand: a sixth slice of GPU 0 for a 1g.10gb, no 3g.40gb placement
	// left (an A100-80GB has two, starts 0 and 4: the first 3g.40gb holds
	// one, the 1g.10gb instances overlap the other), no whole GPU, the
	// T4's second GPU for one device and not for two.
	wave2 := []rtDRAPod{{name: "w2-nb-0", tpl: "mig1g", want: "a100-0"}, {name: "w2-ft-0", tpl: "mig3g"}, {name: "w2-train-0", tpl: "whole"}, {name: "w2-dp-0", gpus: 1, want: "t4-0"}, {name: "w2-dp-1", gpus: 2}}
	sort.Slice(wave2, func(i, j int) bool { return wave2[i].name < wave2[j].name })
	agree := 0
	for _, p := range wave2 {
		rtDRACreate(t, c, p, true)
		pr, _ := rtSimulateDRA(t, rtDRASnapshot(t, c, kubectl))
		rtUngate(t, c, []rtPod{{name: p.name}})
		got := rtWait(t, c, []rtPod{{name: p.name}})[p.name]
		rtDRAWant(t, p, got)
		if got.node != pr[p.name].Node {
			t.Errorf("second wave: %s: kube-scheduler %q (%s), the simulator %q (%s)", p.name, got.node, got.msg, pr[p.name].Node, pr[p.name].Reason)
			continue
		}
		agree++
		t.Logf("second wave: %s: both %q", p.name, got.node)
	}
	t.Logf("DRA round trip: %d running pods read on their node, second wave %d of %d agree", rtCount(real), agree, len(wave2))
}

// rtDRASetup makes the namespace, the DeviceClasses, the templates, the
// nodes (a100-0 with the driver's slices, t4-0 with the device plugin's
// nvidia.com/gpu, cpu-0) and waits for them to be Ready.
func rtDRASetup(t *testing.T, c *kube.Cluster) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rtNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.InstallDeviceClasses(ctx, c.Client, "../../../"+kube.DeviceClassTemplate); err != nil {
		t.Fatal(err)
	}
	for name, req := range rtDRATemplates {
		tpl := &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rtNS},
			Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &req}}}}}}
		if _, err := c.Client.ResourceV1().ResourceClaimTemplates(rtNS).Create(ctx, tpl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodes := []*corev1.Node{
		rtNode("a100-0", "64", "256Gi", nil, nil),
		rtNode("t4-0", "64", "256Gi", gfd("Tesla-T4", "2", "1", "none", ""), qty("nvidia.com/gpu", "2")),
		rtNode("cpu-0", "16", "64Gi", nil, nil),
	}
	nodes[1].Spec.Taints = nil
	slices := buildSlices(t).Pool().Slices
	for i, s := range slices {
		sl := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("a100-0-gpu.nvidia.com-%d", i)},
			Spec: resourceapi.ResourceSliceSpec{Driver: apidra.DriverName, NodeName: ptr.To("a100-0"), Pool: resourceapi.ResourcePool{Name: "a100-0", ResourceSliceCount: int64(len(slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters}}
		if _, err := c.Client.ResourceV1().ResourceSlices().Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rtCreateNodes(t, c, nodes)
}

func rtDRACreate(t *testing.T, c *kube.Cluster, p rtDRAPod, gated bool) {
	t.Helper()
	if _, err := c.Client.CoreV1().Pods(rtNS).Create(t.Context(), p.object(gated), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func rtDRAAsRt(pods []rtDRAPod) []rtPod {
	out := make([]rtPod, len(pods))
	for i, p := range pods {
		out[i] = rtPod{name: p.name}
	}
	return out
}

// rtDRASnapshot writes what `kubectl get
// nodes,pods,resourceslices,resourceclaims,deviceclasses -A -o json`
// prints.
func rtDRASnapshot(t *testing.T, c *kube.Cluster, kubectl string) string {
	t.Helper()
	return rtSnapshotOf(t, c, kubectl, "nodes,pods,resourceslices,resourceclaims,deviceclasses")
}

// rtSimulateDRA runs simulate --snapshot --gpu-api dra --sharing mig
// (bestfit, one seed) and returns each pending pod's outcome, and stderr.
func rtSimulateDRA(t *testing.T, file string) (map[string]engine.PodOutcome, string) {
	t.Helper()
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Format, o.Sharing, o.GPUAPI = file, "bestfit", 1, "json", "mig", "dra"
	return rtRun(t, o)
}

// rtDRAWant checks kube-scheduler's outcome for p against the one worked
// out by hand.
func rtDRAWant(t *testing.T, p rtDRAPod, s rtState) {
	t.Helper()
	if (p.want == "*" && s.node == "") || (p.want != "*" && s.node != p.want) {
		t.Errorf("pod %s: kube-scheduler %q (%s), worked out by hand %q", p.name, s.node, s.msg, p.want)
	}
}
