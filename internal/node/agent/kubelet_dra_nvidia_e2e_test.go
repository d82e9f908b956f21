// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube/cri"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// nvidiaDir holds NVIDIA's DRA examples as fixtures, each file citing
// the NVIDIA file whose shape it keeps.
const nvidiaDir = "testdata/nvidia-dra"

// draNVIDIANode is the node NVIDIA's examples run on together: six
// A100-SXM4-40GB in MIG mode, no MIG device made (minors 0..5: gpu-test4's
// four replicas take four whole GPUs' 7 slices each, the MIG examples
// one device each), and twelve A100-SXM4-40GB without MIG (minors
// 6..17: the whole-GPU examples take 12 in all, by hand: 2 + 1 + 1 + 2 +
// 1 + 2 + 2 + 1).
const draNVIDIANode = `name: dra-nvidia
gpus:
  - {count: 6, productName: NVIDIA A100-SXM4-40GB, migEnabled: true}
  - {count: 12, productName: NVIDIA A100-SXM4-40GB}
`

// nvidiaExample is one of NVIDIA's DRA examples and what it must do.
type nvidiaExample struct {
	file string // in nvidiaDir
	// notes are the notes policy check must give (its claim view's
	// assumptions), by substring; admission must find no violation.
	notes []string
	// pods: the example's pods (a Deployment's replicas included).
	pods int
	// pending, when set, is what the scheduler's PodScheduled message of
	// every pod holds: it allocates nothing. Else every pod runs.
	pending string
	// event, when set, is what a FailedScheduling event of every pod
	// holds: the allocator's error. Such examples run first, alone, so
	// that every attempt meets a free device of the node (run among the
	// others, an attempt after the whole GPUs are taken reports "cannot
	// allocate all claims").
	event string
	// want is the outcome worked out from NVIDIA's docs and code, nvidia
	// what NVIDIA's driver does, with the source.
	want, nvidia string
	// check checks a running example's allocation and containers.
	check func(x *exampleRun)
}

// nvidiaExamples: the suite. NVIDIA's references are to
// sigs.k8s.io/dra-driver-nvidia-gpu at commit 95932046.
var nvidiaExamples = []nvidiaExample{
	{file: "gpu-test1.yaml", pods: 2,
		want:   "each pod one whole GPU, distinct",
		nvidia: "runs (demo/specs/quickstart/README.md)",
		check: func(x *exampleRun) {
			a, b := x.wholeGPUs("pod1", "gpu", 1), x.wholeGPUs("pod2", "gpu", 1)
			x.distinct(append(a, b...))
			x.cdi("pod1", "ctr", false, x.uuids(a)...)
			x.cdi("pod2", "ctr", false, x.uuids(b)...)
		}},
	{file: "gpu-test2.yaml", pods: 1,
		want:   "one whole GPU, both containers given it",
		nvidia: "runs (README.md)",
		check: func(x *exampleRun) {
			g := x.uuids(x.wholeGPUs("pod", "shared-gpu", 1))
			x.cdi("pod", "ctr0", false, g...)
			x.cdi("pod", "ctr1", false, g...)
		}},
	{file: "gpu-test3.yaml", pods: 2,
		want:   "one claim, one whole GPU, both pods given it",
		nvidia: "runs (README.md)",
		check: func(x *exampleRun) {
			a, b := x.wholeGPUs("pod1", "shared-gpu", 1), x.wholeGPUs("pod2", "shared-gpu", 1)
			if !slices.Equal(a, b) {
				x.t.Errorf("gpu-test3: pods on %v and %v, want one GPU", a, b)
			}
			x.cdi("pod1", "ctr", false, x.uuids(a)...)
			x.cdi("pod2", "ctr", false, x.uuids(a)...)
		}},
	{file: "gpu-test4.yaml", pods: 4,
		want: "each pod 1g.5gb, 1g.5gb, 2g.10gb, 3g.20gb made on one GPU (7 of 7 slices), 4 GPUs; " +
			"each container its own MIG device",
		nvidia: "runs on static MIG devices of mig-parted's layout (README.md), or made on demand under its DynamicMIG gate",
		check:  (*exampleRun).gpuTest4},
	{file: "gpu-test5.yaml", pods: 1,
		want: "two whole GPUs: ts-gpu time-sliced (interval recorded, not applied), mps-gpu under an MPS daemon; " +
			"ts-ctr0/1 share one, mps-ctr0/1 the other with the claim's MPS CDI device",
		nvidia: "refused at prepare by default: \"TimeSlicing\" is selected as the GPU sharing strategy, but the " +
			"\"TimeSlicingSettings\" feature gate is not enabled (api/nvidia.com/resource/v1beta1/validate.go); " +
			"runs with TimeSlicingSettings and MPSSupport on",
		check: func(x *exampleRun) {
			ts, mps := x.request("pod0", "shared-gpus", "ts-gpu"), x.request("pod0", "shared-gpus", "mps-gpu")
			x.distinct([]string{ts, mps})
			x.cdi("pod0", "ts-ctr0", false, x.uuids([]string{ts})...)
			x.cdi("pod0", "ts-ctr1", false, x.uuids([]string{ts})...)
			x.cdi("pod0", "mps-ctr0", true, x.uuids([]string{mps})...)
			x.cdi("pod0", "mps-ctr1", true, x.uuids([]string{mps})...)
		}},
	{file: "gpu-test6.yaml", pods: 4, pending: "CEL runtime error: no such key: index", event: "CEL runtime error: no such key: index",
		notes: []string{"claim a100: request gpu: selector \"device.attributes['gpu.nvidia.com'].productName.lowerAscii()", ".index == 0"},
		want: "pending: the selector reads attribute index, which no device has; on an A100 the CEL is an error " +
			"(upstream's allocator: CEL runtime error), the Deployment's pods stay pending",
		nvidia: "the same: NVIDIA's driver publishes no index since commit 36fc80ab (cmd/gpu-kubelet-plugin/deviceinfo.go)"},
	{file: "gpu-test-mps.yaml", pods: 1,
		want:   "one whole GPU under an MPS daemon, both containers given it and the claim's MPS CDI device",
		nvidia: "refused at prepare by default (MPSSupport gate off, validate.go); runs with it on",
		check: func(x *exampleRun) {
			g := x.uuids(x.wholeGPUs("test-pod", "shared-gpu", 1))
			x.cdi("test-pod", "mps-ctr0", true, g...)
			x.cdi("test-pod", "mps-ctr1", true, g...)
		}},
	{file: "gpu-test7.yaml", pods: 1,
		want:   "two claims, two distinct whole GPUs, one per container",
		nvidia: "runs",
		check: func(x *exampleRun) {
			a, b := x.wholeGPUs("gpu-pod", "gpu0", 1), x.wholeGPUs("gpu-pod", "gpu1", 1)
			x.distinct(append(a, b...))
			x.cdi("gpu-pod", "ctr0", false, x.uuids(a)...)
			x.cdi("gpu-pod", "ctr1", false, x.uuids(b)...)
		}},
	{file: "gpu-test8.yaml", pods: 1,
		want:   "one claim of two distinct whole GPUs, both given to the container",
		nvidia: "runs",
		check: func(x *exampleRun) {
			g := x.wholeGPUs("gpu-pod", "twogpus", 2)
			x.distinct(g)
			x.cdi("gpu-pod", "ctr0", false, x.uuids(g)...)
		}},
	{file: "gpu-mig-ts.yaml", pods: 1, notes: []string{"claim migdev: request mig1gts: selector \"device.capacity['gpu.nvidia.com'].multiprocessors"},
		want:   "one MIG device made (any profile: every A100-40GB profile has 14 or more SMs), MigDeviceConfig TimeSlicing recorded",
		nvidia: "refused at prepare by default (TimeSlicingSettings gate off, validate.go); runs with it on (tests/bats)",
		check: func(x *exampleRun) {
			d := x.results("pod-mig1g", "migdev")
			if len(d) != 1 || !isMIG(d[0].Device) {
				x.t.Errorf("gpu-mig-ts: results %+v, want one MIG device", d)
			}
		}},
	{file: "gpu-cel-nomatch.yaml", pods: 1, pending: "cannot allocate all claims",
		want:   "pending: no device has that productName (the scheduler's message)",
		nvidia: "the same (tests/bats/test_gpu_robustness.bats, \"CEL selector rejects non-matching productName\": the pod stays Pending)"},
	{file: "gpu-first-available.yaml", pods: 2, notes: []string{"claim gpu: request gpu: firstAvailable read as its first alternative",
		"claim gpu: request gpu: firstAvailable read as its first alternative", "claim gpu: request gpu: selector \"device.attributes['gpu.nvidia.com'].productName.contains('H100')\" not read"},
		want:   "pod-mig: subrequest mig-1g, a 1g.5gb made; pod-h100: no H100, subrequest a100, a whole GPU",
		nvidia: "no example of NVIDIA's; the scheduler picks the subrequest, drivers see a request \"gpu/<subrequest>\"",
		check: func(x *exampleRun) {
			m, a := x.results("pod-mig", "gpu"), x.results("pod-h100", "gpu")
			if len(m) != 1 || m[0].Request != "gpu/mig-1g" || !strings.Contains(m[0].Device, "-mig-1g5gb-") {
				x.t.Errorf("pod-mig: results %+v, want gpu/mig-1g on a 1g.5gb", m)
			}
			if len(a) != 1 || a[0].Request != "gpu/a100" || isMIG(a[0].Device) {
				x.t.Errorf("pod-h100: results %+v, want gpu/a100 on a whole GPU", a)
			}
		}},
}

// TestRealKubeletDRANVIDIAExamples takes NVIDIA's DRA examples
// (nvidiaExamples) through admission (policy check's claim view, which
// the webhook shares: admitted, with the notes given) and
// then, all at once, through one real API server, kube-scheduler and
// kubelet with the agent's DRA driver on draNVIDIANode: each example
// runs (allocated, prepared, every container created with its devices)
// or stays pending with the scheduler's reason. A fake
// nvidia-cuda-mps-control on PATH stands for MPS (it only exits 0).
func TestRealKubeletDRANVIDIAExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(nvidiaDir, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse("policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range nvidiaExamples {
		checkAdmission(t, pol, ex)
	}
	if testing.Short() {
		return
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "nvidia-cuda-mps-control"), []byte("#!/bin/sh\ncat >/dev/null\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	d := startDRAEnv(t, draNVIDIANode)
	t.Logf("cluster, kubelet, scheduler and agent up in %s", time.Since(start).Round(time.Second))
	start = time.Now()
	// The examples whose allocator error is awaited go first, alone: the
	// error shows only while a device it is about is free and the pool
	// complete (a republish that rewrites several slices leaves it
	// incomplete until the last is written; docs/dra.md).
	first, rest := splitExamples(nvidiaExamples)
	for _, group := range [][]nvidiaExample{first, rest} {
		for _, ex := range group {
			d.createManifests(filepath.Join(nvidiaDir, ex.file))
		}
		runExamples(t, d, group)
	}
	t.Logf("every example running or pending in %s", time.Since(start).Round(time.Second))
}

// splitExamples returns the examples that await an allocator event, then
// the others.
func splitExamples(all []nvidiaExample) (event, rest []nvidiaExample) {
	for _, ex := range all {
		if ex.event != "" {
			event = append(event, ex)
		} else {
			rest = append(rest, ex)
		}
	}
	return event, rest
}

// runExamples waits for each example's pods, running or pending as it
// says, and checks the running ones.
func runExamples(t *testing.T, d *draEnv, examples []nvidiaExample) {
	t.Helper()
	for _, ex := range examples {
		x := &exampleRun{d: d, t: t, ns: namespaceOf(t, ex.file)}
		pods := x.waitPods(ex.pods)
		for _, p := range pods {
			if ex.pending != "" {
				t.Logf("%s: pod %s pending: %s", ex.file, p, x.waitPending(p, ex.pending))
				if ex.event != "" {
					t.Logf("%s: pod %s: event %s", ex.file, p, x.waitEvent(p, ex.event))
				}
			} else {
				x.waitRunning(p)
			}
		}
		if ex.check != nil && ex.pending == "" {
			ex.check(x)
			x.logDevices(ex.file)
		}
	}
}

// logDevices logs each pod's claims' results, request=device.
func (x *exampleRun) logDevices(file string) {
	x.t.Helper()
	for _, p := range x.pods {
		pod, err := x.pod(p)
		if err != nil {
			x.t.Fatal(err)
		}
		var out []string
		for _, c := range pod.Spec.ResourceClaims {
			for _, r := range x.results(p, c.Name) {
				out = append(out, c.Name+":"+r.Request+"="+r.Device)
			}
		}
		x.t.Logf("%s: pod %s running: %s", file, p, strings.Join(out, " "))
	}
}

// checkAdmission runs policy check over the example's file: no violation,
// and exactly the notes wanted.
func checkAdmission(t *testing.T, pol *policy.Policy, ex nvidiaExample) {
	t.Helper()
	fs, n, err := pol.Check([]string{filepath.Join(nvidiaDir, ex.file)}, nil)
	if err != nil || n == 0 {
		t.Fatalf("%s: %d objects, %v", ex.file, n, err)
	}
	var notes []string
	for _, f := range fs {
		if f.Note == "" {
			t.Errorf("%s: refused: %s", ex.file, f)
			continue
		}
		notes = append(notes, f.Note)
	}
	if len(notes) != len(ex.notes) {
		t.Errorf("%s: notes %q, want %d holding %q", ex.file, notes, len(ex.notes), ex.notes)
	}
	for i, w := range ex.notes {
		if i < len(notes) && !strings.Contains(notes[i], w) {
			t.Errorf("%s: note %q, want it to hold %q", ex.file, notes[i], w)
		}
	}
}

// namespaceOf is the namespace of the example's Namespace object.
func namespaceOf(t *testing.T, file string) string {
	t.Helper()
	for _, doc := range manifestDocs(t, filepath.Join(nvidiaDir, file)) {
		var ns corev1.Namespace
		if err := yaml.Unmarshal(doc, &ns); err == nil && ns.Kind == "Namespace" {
			return ns.Name
		}
	}
	t.Fatalf("%s: no Namespace", file)
	return ""
}

func manifestDocs(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, doc := range strings.Split(string(data), "\n---\n") {
		out = append(out, []byte(doc))
	}
	return out
}

// createManifests creates the objects of a manifest file as they are:
// Namespaces, ResourceClaimTemplates, ResourceClaims, Pods, Deployments.
func (d *draEnv) createManifests(file string) {
	d.t.Helper()
	for _, doc := range manifestDocs(d.t, file) {
		var head metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &head); err != nil {
			d.t.Fatalf("%s: %v", file, err)
		}
		var err error
		switch head.Kind {
		case "Namespace":
			var o corev1.Namespace
			if err = yaml.UnmarshalStrict(doc, &o); err == nil {
				_, err = d.c.Client.CoreV1().Namespaces().Create(d.ctx, &o, metav1.CreateOptions{})
			}
		case "ResourceClaimTemplate":
			var o resourcev1.ResourceClaimTemplate
			if err = yaml.UnmarshalStrict(doc, &o); err == nil {
				_, err = d.c.Client.ResourceV1().ResourceClaimTemplates(o.Namespace).Create(d.ctx, &o, metav1.CreateOptions{})
			}
		case "ResourceClaim":
			var o resourcev1.ResourceClaim
			if err = yaml.UnmarshalStrict(doc, &o); err == nil {
				_, err = d.c.Client.ResourceV1().ResourceClaims(o.Namespace).Create(d.ctx, &o, metav1.CreateOptions{})
			}
		case "Pod":
			var o corev1.Pod
			if err = yaml.UnmarshalStrict(doc, &o); err == nil {
				_, err = d.c.Client.CoreV1().Pods(o.Namespace).Create(d.ctx, &o, metav1.CreateOptions{})
			}
		case "Deployment":
			var o appsv1.Deployment
			if err = yaml.UnmarshalStrict(doc, &o); err == nil {
				_, err = d.c.Client.AppsV1().Deployments(o.Namespace).Create(d.ctx, &o, metav1.CreateOptions{})
			}
		default:
			err = fmt.Errorf("kind %q not handled", head.Kind)
		}
		if err != nil {
			d.t.Fatalf("%s: %s: %v", file, head.Kind, err)
		}
	}
}

// exampleRun is one example's namespace on the running cluster.
type exampleRun struct {
	d  *draEnv
	t  *testing.T
	ns string
	// pods are the namespace's pods by name, sorted (waitPods).
	pods []string
}

// waitPods waits until the namespace has n pods and returns their names,
// sorted.
func (x *exampleRun) waitPods(n int) []string {
	x.t.Helper()
	x.d.poll(fmt.Sprintf("%d pods in %s", n, x.ns), func() error {
		l, err := x.d.c.Client.CoreV1().Pods(x.ns).List(x.d.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(l.Items) != n {
			return fmt.Errorf("%d pods", len(l.Items))
		}
		x.pods = nil
		for _, p := range l.Items {
			x.pods = append(x.pods, p.Name)
		}
		return nil
	})
	slices.Sort(x.pods)
	return x.pods
}

func (x *exampleRun) pod(name string) (*corev1.Pod, error) {
	return x.d.c.Client.CoreV1().Pods(x.ns).Get(x.d.ctx, name, metav1.GetOptions{})
}

// waitRunning waits until the pod is Running with every container
// running and none restarted.
func (x *exampleRun) waitRunning(name string) {
	x.t.Helper()
	x.d.poll("pod "+x.ns+"/"+name+" Running", func() error {
		p, err := x.pod(name)
		if err != nil {
			return err
		}
		ok := p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == len(p.Spec.Containers)
		for _, c := range p.Status.ContainerStatuses {
			ok = ok && c.State.Running != nil && c.RestartCount == 0
		}
		if !ok {
			return fmt.Errorf("phase %s, conditions %+v, statuses %+v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
		}
		return nil
	})
}

// waitPending waits until the scheduler gave up on the pod with a
// message holding want (reason Unschedulable, or SchedulerError where
// the allocator failed), and returns the message.
func (x *exampleRun) waitPending(name, want string) string {
	x.t.Helper()
	var msg string
	x.d.poll("pod "+x.ns+"/"+name+" pending: "+want, func() error {
		p, err := x.pod(name)
		if err != nil {
			return err
		}
		if p.Spec.NodeName != "" {
			x.d.fail("pod %s/%s bound to %s, want it pending", x.ns, name, p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, want) {
				msg = c.Message
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", p.Status.Conditions)
	})
	return msg
}

// waitEvent waits for a FailedScheduling event of the pod holding want
// and returns its message.
func (x *exampleRun) waitEvent(name, want string) string {
	x.t.Helper()
	var msg string
	x.d.poll("a FailedScheduling event of "+x.ns+"/"+name+": "+want, func() error {
		l, err := x.d.c.Client.CoreV1().Events(x.ns).List(x.d.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		for _, ev := range l.Items {
			if ev.Reason == "FailedScheduling" && strings.Contains(ev.Message, want) {
				msg = ev.Message
				return nil
			}
		}
		return fmt.Errorf("events %+v", l.Items)
	})
	return msg
}

// claimOf is the allocated ResourceClaim of the pod's claim podClaim.
func (x *exampleRun) claimOf(pod, podClaim string) *resourcev1.ResourceClaim {
	x.t.Helper()
	p, err := x.pod(pod)
	if err != nil {
		x.t.Fatal(err)
	}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == podClaim && s.ResourceClaimName != nil {
			return x.getClaim(*s.ResourceClaimName)
		}
	}
	for _, s := range p.Spec.ResourceClaims {
		if s.Name == podClaim && s.ResourceClaimName != nil {
			return x.getClaim(*s.ResourceClaimName)
		}
	}
	x.d.fail("pod %s/%s: no claim %s in %+v", x.ns, pod, podClaim, p.Status.ResourceClaimStatuses)
	return nil
}

func (x *exampleRun) getClaim(name string) *resourcev1.ResourceClaim {
	x.t.Helper()
	c, err := x.d.c.Client.ResourceV1().ResourceClaims(x.ns).Get(x.d.ctx, name, metav1.GetOptions{})
	if err != nil {
		x.t.Fatal(err)
	}
	if c.Status.Allocation == nil {
		x.d.fail("claim %s/%s not allocated", x.ns, name)
	}
	return c
}

// results are the allocation's results of the pod's claim, each of
// gpuplane's driver and the node's pool.
func (x *exampleRun) results(pod, podClaim string) []resourcev1.DeviceRequestAllocationResult {
	x.t.Helper()
	rs := x.claimOf(pod, podClaim).Status.Allocation.Devices.Results
	for _, r := range rs {
		if r.Driver != apidra.DriverName || r.Pool != x.d.node {
			x.t.Errorf("%s/%s claim %s: result %+v, want driver %s, pool %s", x.ns, pod, podClaim, r, apidra.DriverName, x.d.node)
		}
	}
	return rs
}

// wholeGPUs checks that the pod's claim got n whole GPUs and returns
// their device names, sorted.
func (x *exampleRun) wholeGPUs(pod, podClaim string, n int) []string {
	x.t.Helper()
	var out []string
	for _, r := range x.results(pod, podClaim) {
		if isMIG(r.Device) {
			x.t.Errorf("%s/%s claim %s: %s, want a whole GPU", x.ns, pod, podClaim, r.Device)
		}
		out = append(out, r.Device)
	}
	if len(out) != n {
		x.t.Errorf("%s/%s claim %s: devices %v, want %d", x.ns, pod, podClaim, out, n)
	}
	slices.Sort(out)
	return out
}

// request is the one device of the pod's claim allocated for request.
func (x *exampleRun) request(pod, podClaim, request string) string {
	x.t.Helper()
	for _, r := range x.results(pod, podClaim) {
		if r.Request == request {
			return r.Device
		}
	}
	x.d.fail("%s/%s claim %s: no result for request %s", x.ns, pod, podClaim, request)
	return ""
}

func isMIG(device string) bool {
	n, err := apidra.ParseDeviceName(device)
	return err == nil && n.MIG()
}

// distinct checks no device is given twice.
func (x *exampleRun) distinct(devices []string) {
	x.t.Helper()
	s := slices.Clone(devices)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(devices) {
		x.t.Errorf("%s: devices %v, want them distinct", x.ns, devices)
	}
}

// uuids are the mock's UUIDs of whole GPUs by device name (the
// generated UUIDs are read from the published ResourceSlices).
func (x *exampleRun) uuids(devices []string) []string {
	x.t.Helper()
	l, err := x.d.c.Client.ResourceV1().ResourceSlices().List(x.d.ctx, metav1.ListOptions{})
	if err != nil {
		x.t.Fatal(err)
	}
	var out []string
	for _, name := range devices {
		for _, s := range l.Items {
			for _, dev := range s.Spec.Devices {
				if a, ok := dev.Attributes[apidra.AttrUUID]; ok && dev.Name == name && a.StringValue != nil {
					out = append(out, "nvidia.com/gpu="+*a.StringValue)
				}
			}
		}
	}
	if len(out) != len(devices) {
		x.d.fail("UUIDs of %v: %v", devices, out)
	}
	slices.Sort(out)
	return out
}

// cdi checks the container's nvidia.com/gpu CDI devices are exactly
// want (sorted), and that it has one claim CDI device of gpuplane's
// (gpuplane.io/claim=..., the MPS pipe directory and share environment)
// where withClaim, none else.
func (x *exampleRun) cdi(pod, container string, withClaim bool, want ...string) {
	x.t.Helper()
	recs := cri.Find(x.d.records(), x.ns, pod, container)
	if len(recs) != 1 {
		x.d.fail("%d CreateContainer records of %s/%s/%s, want 1", len(recs), x.ns, pod, container)
	}
	var gpus, claims []string
	for _, c := range recs[0].CDIDevices {
		switch {
		case strings.HasPrefix(c, "nvidia.com/gpu="):
			gpus = append(gpus, c)
		case strings.HasPrefix(c, "gpuplane.io/claim="):
			claims = append(claims, c)
		default:
			x.t.Errorf("%s/%s/%s: CDI device %s", x.ns, pod, container, c)
		}
	}
	slices.Sort(gpus)
	if !slices.Equal(gpus, want) {
		x.t.Errorf("%s/%s/%s: CDI devices %v, want %v", x.ns, pod, container, gpus, want)
	}
	if withClaim != (len(claims) == 1) || len(claims) > 1 {
		x.t.Errorf("%s/%s/%s: claim CDI devices %v, want one: %v", x.ns, pod, container, claims, withClaim)
	}
}

// gpuTest4 checks each replica of gpu-test4: its claim's four results
// are MIG devices of the profiles its requests name, all of one GPU;
// the four replicas on four GPUs; each container given its request's
// MIG device alone (four distinct MIG UUIDs a pod).
func (x *exampleRun) gpuTest4() {
	x.t.Helper()
	want := map[string]string{"mig-1g-5gb-0": "1g.5gb", "mig-1g-5gb-1": "1g.5gb", "mig-2g-10gb": "2g.10gb", "mig-3g-20gb": "3g.20gb"}
	ctr := map[string]string{"mig-1g-5gb-0": "ctr0", "mig-1g-5gb-1": "ctr1", "mig-2g-10gb": "ctr2", "mig-3g-20gb": "ctr3"}
	var parents []int
	for _, p := range x.pods {
		rs := x.results(p, "mig-devices")
		minors := map[int]bool{}
		var migs []string
		for _, r := range rs {
			n, err := apidra.ParseDeviceName(r.Device)
			if err != nil || n.Profile != want[r.Request] {
				x.t.Errorf("gpu-test4 %s: request %s on %s, want a %s", p, r.Request, r.Device, want[r.Request])
				continue
			}
			minors[n.Minor] = true
			recs := cri.Find(x.d.records(), x.ns, p, ctr[r.Request])
			if len(recs) != 1 || len(recs[0].CDIDevices) != 1 || !strings.HasPrefix(recs[0].CDIDevices[0], "nvidia.com/gpu=MIG-") {
				x.t.Errorf("gpu-test4 %s/%s: records %+v, want one with one MIG CDI device", p, ctr[r.Request], recs)
				continue
			}
			migs = append(migs, recs[0].CDIDevices[0])
		}
		if len(rs) != 4 || len(minors) != 1 {
			x.t.Errorf("gpu-test4 %s: results %+v, want 4 on one GPU", p, rs)
		}
		x.distinct(migs)
		for m := range minors {
			parents = append(parents, m)
		}
	}
	slices.Sort(parents)
	if len(slices.Compact(parents)) != 4 {
		x.t.Errorf("gpu-test4: replicas on GPUs %v, want 4 distinct", parents)
	}
}
