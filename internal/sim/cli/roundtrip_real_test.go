// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/snapshot"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// The round trip of issue 32: a real control plane (kube-apiserver, kwok
// nodes) whose nodes are labelled and sized as NVIDIA's GPU Operator
// publishes them, a workload scheduled by kube-scheduler's default
// profile, `kubectl get nodes,pods -A -o json` read back by simulate
// --snapshot. Sources of the labels and allocatable, all in
// github.com/NVIDIA/k8s-device-plugin: internal/lm/resource.go (product,
// count, replicas; "-SHARED" when shared and not renamed; replicas "0"
// for MIG-enabled GPUs, which no sharing applies to),
// internal/lm/mig-strategy.go and its test (single: the MIG devices as
// nvidia.com/gpu, count = MIG devices, product "<gpu>-MIG-<profile>",
// replicas 1; mixed: nvidia.com/mig-<profile> per profile),
// api/config/v1 (timeSlicing and mps replicas, renameByDefault serving
// nvidia.com/gpu.shared). The taint nvidia.com/gpu=present:NoSchedule is
// the GPU Operator's convention for GPU nodes (its docs, "GPU node
// taints"); the cordon is spec.unschedulable as `kubectl cordon` sets it.

// rtTaint is the GPU Operator's taint of GPU nodes; rtGate holds the
// second wave's pods until the simulator has predicted them.
const (
	rtTaint = "nvidia.com/gpu"
	rtGate  = "gpuplane.io/roundtrip"
	rtNS    = "ml"
)

// rtNode is a node of the round trip; its setup is its name up to the
// last "-".
func rtNode(name, cpu, mem string, labels map[string]string, gpus corev1.ResourceList) *corev1.Node {
	l := map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")}
	var taints []corev1.Taint
	if len(gpus) > 0 {
		l[gpuresource.LabelGPUPresent] = "true"
		taints = []corev1.Taint{{Key: rtTaint, Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	}
	for k, v := range labels {
		l[k] = v
	}
	for k, v := range gpus {
		res[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{kube.KwokAnnotation: "fake"}},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
	}
}

func qty(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// gfd is gpu-feature-discovery's labels of a node: product, count,
// replicas, sharing strategy ("" for none) and MIG strategy ("" for none).
func gfd(product, count, replicas, sharing, mig string) map[string]string {
	l := map[string]string{gpuresource.LabelGPUProduct: product, gpuresource.LabelGPUCount: count, gpuresource.LabelGPUReplicas: replicas}
	if sharing != "" {
		l[gpuresource.LabelGPUSharingStrategy] = sharing
	}
	if mig != "" {
		l[gpuresource.LabelMIGStrategy] = mig
	}
	return l
}

// rtNodes are the setups, one node each.
func rtNodes() []*corev1.Node {
	cord := rtNode("t4cord-0", "64", "256Gi", gfd("Tesla-T4", "2", "1", "none", ""), qty("nvidia.com/gpu", "2"))
	cord.Spec.Unschedulable = true
	// Both GPUs MIG-enabled (replicas "0"), mig-parted's all-balanced
	// layout of an A100-80GB: 2 x 1g.10gb + 2g.20gb + 3g.40gb each.
	mixed := gfd("NVIDIA-A100-80GB-PCIe", "2", "0", "", "mixed")
	mixed[gpuresource.LabelMIGConfig] = "all-balanced"
	return []*corev1.Node{
		rtNode("t4-0", "64", "256Gi", gfd("Tesla-T4", "2", "1", "none", ""), qty("nvidia.com/gpu", "2")),
		// time-slicing x4, default naming: 4 GPUs as 16 nvidia.com/gpu.
		rtNode("l4ts-0", "64", "256Gi", gfd("NVIDIA-L4-SHARED", "4", "4", "time-slicing", ""), qty("nvidia.com/gpu", "16")),
		// time-slicing x4, renameByDefault: 1 GPU as 4 nvidia.com/gpu.shared.
		rtNode("l4rn-0", "64", "256Gi", gfd("NVIDIA-L4", "1", "4", "time-slicing", ""), qty("nvidia.com/gpu.shared", "4")),
		// MPS x4: 2 GPUs as 8 nvidia.com/gpu.
		rtNode("a100mps-0", "64", "256Gi", gfd("NVIDIA-A100-SXM4-40GB-SHARED", "2", "4", "mps", ""), qty("nvidia.com/gpu", "8")),
		// single MIG strategy, all-1g.10gb: 8 GPUs as 56 nvidia.com/gpu.
		rtNode("h100mig-0", "64", "256Gi", gfd("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "56", "1", "none", "single"), qty("nvidia.com/gpu", "56")),
		rtNode("a100mix-0", "64", "256Gi", mixed, qty("nvidia.com/mig-1g.10gb", "4", "nvidia.com/mig-2g.20gb", "2", "nvidia.com/mig-3g.40gb", "2")),
		cord,
		rtNode("cpu-0", "16", "64Gi", nil, nil),
	}
}

// rtPod is a pod of the workload: what it asks for, whether it tolerates
// the GPU taint, its nodeSelector, its nodeName.
type rtPod struct {
	name    string
	cpu     string
	gpu     corev1.ResourceList
	tol     bool
	sel     map[string]string
	node    string
	pending string // wave 1: the failure class expected ("" runs)
	on      string // the setup a pod that runs nowhere counts under
	sched   string // spec.schedulerName ("": the default)
}

func (p rtPod) object(gated bool) *corev1.Pod {
	cpu := p.cpu
	if cpu == "" {
		cpu = "2"
	}
	req := qty("cpu", cpu, "memory", "8Gi")
	for k, v := range p.gpu {
		req[k] = v
	}
	o := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: rtNS},
		Spec: corev1.PodSpec{NodeName: p.node, NodeSelector: p.sel, SchedulerName: p.sched,
			Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Requests: req, Limits: p.gpu}}}}}
	if p.tol {
		o.Spec.Tolerations = []corev1.Toleration{{Key: rtTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	if gated {
		o.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: rtGate}}
	}
	return o
}

func product(p string) map[string]string { return map[string]string{gpuresource.LabelGPUProduct: p} }

// rtWave1 is the first wave, created in this order: pods that run on
// each setup and pods that stay pending for each reason class.
func rtWave1() []rtPod {
	gpu1, mig1g := qty("nvidia.com/gpu", "1"), qty("nvidia.com/mig-1g.10gb", "1")
	ps := []rtPod{
		{name: "train-0", gpu: qty("nvidia.com/gpu", "2"), tol: true, sel: product("Tesla-T4")},
		{name: "train-1", gpu: qty("nvidia.com/gpu", "2"), tol: true, sel: product("Tesla-T4"), pending: engine.ClassCapacity, on: "t4"},
		{name: "ft-0", gpu: qty("nvidia.com/mig-3g.40gb", "1"), tol: true},
		{name: "ft-1", gpu: qty("nvidia.com/mig-3g.40gb", "1"), tol: true},
		{name: "ft-2", gpu: qty("nvidia.com/mig-3g.40gb", "1"), tol: true, pending: engine.ClassCapacity, on: "a100mix"},
		{name: "pinned-0", gpu: gpu1, node: "l4ts-0"},
		{name: "nbh-0", gpu: gpu1, tol: true, sel: product("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb")},
		{name: "nbh-1", gpu: gpu1, tol: true, sel: product("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb")},
		{name: "l4-0", gpu: qty("nvidia.com/gpu.shared", "1"), tol: true, sel: product("NVIDIA-L4")},
		{name: "l4-1", gpu: qty("nvidia.com/gpu.shared", "1"), tol: true, sel: product("NVIDIA-L4")},
		{name: "cpu-a", cpu: "4"}, {name: "cpu-b", cpu: "4"}, {name: "cpu-c", cpu: "4"},
		{name: "cpu-d", cpu: "8", pending: engine.ClassCapacity, on: "cpu"},
		{name: "cpu-big", cpu: "32", pending: engine.ClassTaint, on: "cpu"},
		{name: "notol-0", gpu: gpu1, pending: engine.ClassTaint, on: "t4"},
		{name: "cord-0", gpu: gpu1, tol: true, sel: map[string]string{corev1.LabelHostname: "t4cord-0"}, pending: engine.ClassTaint, on: "t4cord"},
		{name: "h200-0", gpu: gpu1, tol: true, sel: product("NVIDIA-H200"), pending: engine.ClassSelector, on: "none"},
		{name: "mig7g-0", gpu: qty("nvidia.com/mig-7g.80gb", "1"), tol: true, pending: engine.ClassResourceKind, on: "a100mix"},
	}
	for i := range 8 {
		ps = append(ps, rtPod{name: fmt.Sprintf("infer-%d", i), gpu: gpu1, tol: true})
	}
	for i := range 4 {
		ps = append(ps, rtPod{name: fmt.Sprintf("nb-%d", i), gpu: mig1g, tol: true})
	}
	return ps
}

// rtWave2 is the second wave, submitted gated: the simulator predicts it
// from a snapshot, then the gates go and kube-scheduler places it.
func rtWave2() []rtPod {
	gpu1 := qty("nvidia.com/gpu", "1")
	ps := []rtPod{
		{name: "w2-train", gpu: qty("nvidia.com/gpu", "2"), tol: true, sel: product("Tesla-T4"), on: "t4"},
		{name: "w2-ft", gpu: qty("nvidia.com/mig-3g.40gb", "1"), tol: true, on: "a100mix"},
		{name: "w2-nb2g", gpu: qty("nvidia.com/mig-2g.20gb", "1"), tol: true, on: "a100mix"},
		{name: "w2-nbh", gpu: gpu1, tol: true, sel: product("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"), on: "h100mig"},
		// 4 cores left on cpu-0: two of the three fit. (Pods of different
		// shapes contending for the last room can go either way: the
		// simulator places pending pods in a seeded random order,
		// kube-scheduler in its queue's; w2-cpu of 4 cores and one of 2
		// did.)
		{name: "w2-cpu-0", cpu: "2", on: "cpu"}, {name: "w2-cpu-1", cpu: "2", on: "cpu"}, {name: "w2-cpu-2", cpu: "2", on: "cpu"},
		{name: "w2-notol", gpu: gpu1, on: "t4"},
	}
	for i := range 3 {
		ps = append(ps, rtPod{name: fmt.Sprintf("w2-l4-%d", i), gpu: qty("nvidia.com/gpu.shared", "1"), tol: true, sel: product("NVIDIA-L4"), on: "l4rn"})
	}
	for i := range 2 {
		ps = append(ps, rtPod{name: fmt.Sprintf("w2-nb-%d", i), gpu: qty("nvidia.com/mig-1g.10gb", "1"), tol: true, on: "a100mix"})
	}
	for i := range 4 {
		ps = append(ps, rtPod{name: fmt.Sprintf("w2-infer-%d", i), gpu: gpu1, tol: true, on: "any nvidia.com/gpu"})
	}
	return ps
}

// rtState is what the real scheduler did with a pod: its node, or the
// message of its PodScheduled=False (Unschedulable) condition.
type rtState struct{ node, msg string }

// rtRow is one setup's line of the round trip's table.
type rtRow struct {
	pods, running, readWhereRun, pending, pendingAgree, wave2, wave2Agree, known int
}

// rtKnown are the disagreements the round trip found and the simulator
// does not yet model, by pod (wave 1) or group (wave 2); the test fails
// on any other, and when one of these stops happening (update this and
// docs/simulate-validation.md then).
var rtKnown = map[string]string{}

// rtGroup is a second-wave pod's group: its name without the trailing
// index; the pods of a group are alike.
func rtGroup(name string) string {
	return strings.TrimSuffix(strings.TrimRight(name, "0123456789"), "-")
}

// TestRoundTripRealControlPlane is issue 32's proof: what simulate
// --snapshot reads of a real cluster is the cluster kube-scheduler sees.
// Every pod that runs is read on its node (none left out), every pod
// kube-scheduler leaves Unschedulable is pending in the simulator with
// the failure class its message names, and a second wave, gated until
// the simulator has predicted it from a snapshot, is placed or left
// pending by kube-scheduler as the simulator said. kube-scheduler here is
// gpuplane-scheduler with upstream's default profile only (what a GPU
// Operator cluster runs): nodes are scored differently from the
// simulator's policy, so placed-or-pending is compared, not the node.
// `make roundtrip` runs it verbosely; the table is in
// docs/simulate-validation.md.
func TestRoundTripRealControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a control plane and builds gpuplane-scheduler")
	}
	kubectl := kube.Binary(t, "kubectl")
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	rtSetupCluster(t, c)
	kube.StartGPUplaneSchedulerT(t, c, kube.DefaultProfileOnly)
	wave1, wave2 := rtWave1(), rtWave2()
	rtCreate(t, c, wave1, false)
	real := rtWait(t, c, wave1)
	file := rtSnapshot(t, c, kubectl)
	rep, stderr := rtSimulate(t, file)
	if n, want := rtReadRunning(t, file, real), rtCount(real); n != want {
		t.Errorf("the reader reads %d pods bound where they run, of %d", n, want)
	}
	rows := map[string]*rtRow{}
	rtCheckWave1(t, wave1, real, rep, stderr, rows)

	rtCreate(t, c, wave2, true)
	pred, _ := rtSimulate(t, rtSnapshot(t, c, kubectl))
	rtUngate(t, c, wave2)
	real2 := rtWait(t, c, wave2)
	rtCheckWave2(t, wave2, real2, pred, rows)
	rtTable(t, rows)
}

// rtSetupCluster creates the namespace and the nodes and waits until kwok
// has made every node Ready.
func rtSetupCluster(t *testing.T, c *kube.Cluster) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rtNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rtCreateNodes(t, c, rtNodes())
}

// rtCreateNodes creates the nodes and waits until kwok has made every
// node Ready.
func rtCreateNodes(t *testing.T, c *kube.Cluster, nodes []*corev1.Node) {
	t.Helper()
	ctx := t.Context()
	for _, n := range nodes {
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rtPoll(t, c, "nodes Ready", func() (bool, error) {
		l, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, n := range l.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == len(nodes), nil
	})
}

// rtPoll polls cond every 50 ms until it holds; it fails the test when a
// control-plane process (the scheduler included) exits, or after a minute.
func rtPoll(t *testing.T, c *kube.Cluster, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if ok {
			return
		}
		select {
		case <-c.Exited():
			t.Fatalf("waiting for %s: %v", what, c.Err())
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error %v)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// rtCreate creates the pods in order; ungated, one at a time, each once
// kube-scheduler has bound or refused the one before, so that the
// scheduler sees them in this order.
func rtCreate(t *testing.T, c *kube.Cluster, pods []rtPod, gated bool) {
	t.Helper()
	for _, p := range pods {
		if _, err := c.Client.CoreV1().Pods(rtNS).Create(t.Context(), p.object(gated), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !gated {
			rtWait(t, c, []rtPod{p})
		}
	}
}

// rtUngate removes the second wave's gates one pod at a time, in the
// order of their names, which is the snapshot's (kubectl sorts by
// namespace and name) and so the simulator's.
func rtUngate(t *testing.T, c *kube.Cluster, pods []rtPod) {
	t.Helper()
	pods = append([]rtPod(nil), pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].name < pods[j].name })
	for _, p := range pods {
		o, err := c.Client.CoreV1().Pods(rtNS).Get(t.Context(), p.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o.Spec.SchedulingGates = nil
		if _, err := c.Client.CoreV1().Pods(rtNS).Update(t.Context(), o, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		rtWait(t, c, []rtPod{p})
	}
}

// rtWait waits until every pod is bound or Unschedulable and returns
// what became of each.
func rtWait(t *testing.T, c *kube.Cluster, pods []rtPod) map[string]rtState {
	t.Helper()
	out := map[string]rtState{}
	rtPoll(t, c, "every pod bound or Unschedulable", func() (bool, error) {
		l, err := c.Client.CoreV1().Pods(rtNS).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range l.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
					out[p.Name] = rtState{msg: cond.Message}
				}
			}
			if p.Spec.NodeName != "" {
				out[p.Name] = rtState{node: p.Spec.NodeName}
			}
		}
		for _, p := range pods {
			if _, ok := out[p.name]; !ok {
				return false, fmt.Errorf("pod %s neither bound nor Unschedulable", p.name)
			}
		}
		return true, nil
	})
	return out
}

// rtSnapshot writes what `kubectl get nodes,pods -A -o json` prints.
func rtSnapshot(t *testing.T, c *kube.Cluster, kubectl string) string {
	t.Helper()
	return rtSnapshotOf(t, c, kubectl, "nodes,pods")
}

// rtSnapshotOf writes what `kubectl get <kinds> -A -o json` prints.
func rtSnapshotOf(t *testing.T, c *kube.Cluster, kubectl, kinds string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", c.Kubeconfig, "get", kinds, "-A", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// rtSimulate runs simulate --snapshot (bestfit, one seed) and returns the
// outcome of each pending pod by name, and stderr.
func rtSimulate(t *testing.T, file string) (map[string]engine.PodOutcome, string) {
	t.Helper()
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Format, o.Sharing = file, "bestfit", 1, "json", "mig"
	return rtRun(t, o)
}

// rtRun runs simulate with o (a --snapshot, JSON) and returns the outcome
// of each pending pod by name, and stderr.
func rtRun(t *testing.T, o Options) (map[string]engine.PodOutcome, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	if err := Run(t.Context(), o, &stdout, &stderr); err != nil {
		t.Fatalf("simulate --snapshot: %v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	out := map[string]engine.PodOutcome{}
	for _, p := range rep.SnapshotPods {
		out[strings.TrimPrefix(p.Pod, rtNS+"/")] = p
	}
	return out, stderr.String()
}

// rtPhrases are what kube-scheduler's Unschedulable message says for
// each failure class of the simulator (its NodeResourcesFit,
// NodeAffinity, TaintToleration and NodeUnschedulable plugins).
var rtPhrases = map[string][]string{
	engine.ClassCapacity:     {"Insufficient "},
	engine.ClassSize:         {"Insufficient "},
	engine.ClassResourceKind: {"Insufficient "},
	engine.ClassSelector:     {"didn't match Pod's node affinity/selector"},
	engine.ClassTaint:        {"had untolerated taint", "were unschedulable"},
}

// rtAgrees: the simulator's failure class is one kube-scheduler's
// message names.
func rtAgrees(class, msg string) bool {
	for _, ph := range rtPhrases[class] {
		if strings.Contains(msg, ph) {
			return true
		}
	}
	return false
}

// rtCount counts the pods bound to a node.
func rtCount(real map[string]rtState) int {
	n := 0
	for _, s := range real {
		if s.node != "" {
			n++
		}
	}
	return n
}

func rtSetupOf(p rtPod, s rtState) string {
	if s.node != "" {
		return s.node[:strings.LastIndex(s.node, "-")]
	}
	return p.on
}

// rtCheckWave1: every pod that runs is read on its node, every pod
// kube-scheduler left Unschedulable is pending in the simulator, of the
// class the pod was made for and that the message names.
func rtCheckWave1(t *testing.T, pods []rtPod, real map[string]rtState, sim map[string]engine.PodOutcome, stderr string, rows map[string]*rtRow) {
	t.Helper()
	warned := rtLeftOut(stderr)
	running := 0
	for _, p := range pods {
		s := real[p.name]
		r := rtRowOf(rows, rtSetupOf(p, s))
		r.pods++
		if s.node != "" {
			running++
			r.running++
			if rtNamed(warned, p.name) {
				t.Errorf("pod %s runs on %s; the simulator did not put it there: %v", p.name, s.node, warned)
			} else {
				r.readWhereRun++
			}
			if p.pending != "" {
				t.Errorf("pod %s was made to stay pending (%s), and kube-scheduler bound it to %s", p.name, p.pending, s.node)
			}
			continue
		}
		r.pending++
		o, ok := sim[p.name]
		class := engine.FailureClass(o.Reason)
		what := ""
		switch {
		case !ok:
			what = fmt.Sprintf("pod %s is Unschedulable (%s); the simulator did not read it as pending", p.name, s.msg)
		case o.Node != "":
			what = fmt.Sprintf("pod %s is Unschedulable (%s); the simulator places it on %s", p.name, s.msg, o.Node)
		case !rtAgrees(class, s.msg):
			what = fmt.Sprintf("pod %s: the simulator's reason %s (class %s) is not what kube-scheduler says: %s", p.name, o.Reason, class, s.msg)
		case class != p.pending:
			what = fmt.Sprintf("pod %s: the simulator's reason %s (class %s), made for class %q; kube-scheduler: %s", p.name, o.Reason, class, p.pending, s.msg)
		}
		disagree := what != ""
		if !disagree {
			r.pendingAgree++
			what = fmt.Sprintf("pod %s: pending, class %s", p.name, class)
		}
		rtJudge(t, p.name, what, disagree, r, 1)
	}
	if sim == nil || running == 0 {
		t.Errorf("%d pods run, outcomes %v", running, sim)
	}
}

// rtLeftOut are the simulator's warnings of a running pod it did not put
// where it runs.
func rtLeftOut(stderr string) []string {
	var warned []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "warning:") && (strings.Contains(l, "left out") || strings.Contains(l, "chosen again") || strings.Contains(l, "lacks")) {
			warned = append(warned, l)
		}
	}
	return warned
}

// rtReadRunning: the snapshot reader reads each pod kube-scheduler bound
// as bound to its node; it returns the pods it reads so.
func rtReadRunning(t *testing.T, file string, real map[string]rtState) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := snapshot.Read(file, f)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, p := range s.Pods {
		name := strings.TrimPrefix(p.Name, rtNS+"/")
		if st, ok := real[name]; ok && st.node != "" {
			if !p.Bound() || p.NodeName != st.node {
				t.Errorf("pod %s runs on %s; the reader reads node %q, bound %v", name, st.node, p.NodeName, p.Bound())
				continue
			}
			read++
		}
	}
	return read
}

// rtNamed reports whether a warning names pod ml/name.
func rtNamed(warnings []string, name string) bool {
	for _, w := range warnings {
		if strings.Contains(w, rtNS+"/"+name+" ") || strings.Contains(w, `"`+rtNS+"/"+name+`"`) {
			return true
		}
	}
	return false
}

func rtRowOf(rows map[string]*rtRow, setup string) *rtRow {
	if rows[setup] == nil {
		rows[setup] = &rtRow{}
	}
	return rows[setup]
}

// rtCheckWave2: the simulator, from the snapshot with the second wave
// gated, places as many of each group's pods as kube-scheduler does. Not
// which: it places pending pods in a seeded random order (fill), kube-
// scheduler in its queue's (here the names').
func rtCheckWave2(t *testing.T, pods []rtPod, real map[string]rtState, pred map[string]engine.PodOutcome, rows map[string]*rtRow) {
	t.Helper()
	type count struct{ pods, real, sim int }
	groups := map[string]*count{}
	var order []string
	for _, p := range pods {
		g := rtGroup(p.name)
		if groups[g] == nil {
			groups[g] = &count{}
			order = append(order, g)
		}
		c := groups[g]
		c.pods++
		o, ok := pred[p.name]
		if !ok {
			t.Errorf("second wave: pod %s: the simulator did not read it as pending", p.name)
		}
		if o.Node != "" {
			c.sim++
		}
		if real[p.name].node != "" {
			c.real++
		}
	}
	for _, p := range pods {
		if g := rtGroup(p.name); groups[g].pods > 0 {
			c := groups[g]
			r := rtRowOf(rows, p.on)
			r.wave2 += c.pods
			diff := max(c.real-c.sim, c.sim-c.real)
			r.wave2Agree += c.pods - diff
			rtJudge(t, g, fmt.Sprintf("second wave: %s: kube-scheduler placed %d of %d, the simulator %d", g, c.real, c.pods, c.sim), diff > 0, r, diff)
			c.pods = 0
		}
	}
}

// rtJudge fails the test on a disagreement that rtKnown does not name, and
// on a named one that no longer happens; known disagreements count in r.
func rtJudge(t *testing.T, key, what string, disagree bool, r *rtRow, n int) {
	t.Helper()
	why, known := rtKnown[key]
	switch {
	case disagree && known:
		r.known += n
		t.Logf("%s (known: %s)", what, why)
	case disagree:
		t.Errorf("%s", what)
	case known:
		t.Errorf("%s: agrees now; the known disagreement %q is gone (update rtKnown and docs/simulate-validation.md)", what, why)
	}
}

// rtTable logs the round trip's table, one line per setup.
func rtTable(t *testing.T, rows map[string]*rtRow) {
	t.Helper()
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| setup | wave-1 pods | running, read on their node | pending, same class | wave-2 placed/pending agree | known disagreements |\n|---|---|---|---|---|---|\n")
	var tot rtRow
	for _, n := range names {
		r := rows[n]
		fmt.Fprintf(&b, "| %s | %d | %d/%d | %d/%d | %d/%d | %d |\n", n, r.pods, r.readWhereRun, r.running, r.pendingAgree, r.pending, r.wave2Agree, r.wave2, r.known)
		tot.pods, tot.running, tot.readWhereRun, tot.pending, tot.pendingAgree = tot.pods+r.pods, tot.running+r.running, tot.readWhereRun+r.readWhereRun, tot.pending+r.pending, tot.pendingAgree+r.pendingAgree
		tot.wave2, tot.wave2Agree, tot.known = tot.wave2+r.wave2, tot.wave2Agree+r.wave2Agree, tot.known+r.known
	}
	fmt.Fprintf(&b, "| all | %d | %d/%d | %d/%d | %d/%d | %d |\n", tot.pods, tot.readWhereRun, tot.running, tot.pendingAgree, tot.pending, tot.wave2Agree, tot.wave2, tot.known)
	t.Logf("round trip, kube-scheduler default profile vs simulate --snapshot (bestfit):\n%s", b.String())
}
