// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

// End-to-end tests: the real gpuplane-scheduler binary against a real
// kube-apiserver and etcd with kwok nodes (internal/testenv/kube). They
// skip when the control-plane binaries are not built
// (hack/build-controlplane.sh), and fail under CI=true.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

var (
	schedulerBin  string
	buildOnce     sync.Once
	buildErr      error
	schedulerName = "gpuplane"
)

// binary builds cmd/gpuplane-scheduler once per test binary.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpuplane-scheduler-bin-")
		if err != nil {
			buildErr = err
			return
		}
		schedulerBin = filepath.Join(dir, "gpuplane-scheduler")
		out, err := exec.Command("go", "build", "-o", schedulerBin, "github.com/gpuplane/gpuplane/cmd/gpuplane-scheduler").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return schedulerBin
}

// schedulerProc is a running gpuplane-scheduler.
type schedulerProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

// startScheduler runs gpuplane-scheduler with the shipped configuration
// (deploy/scheduler/config.yaml) against the cluster: its kubeconfig, no
// leader election, and GPUPlacement's args replaced by args.
func startScheduler(t testing.TB, c *kube.Cluster, args map[string]any) *schedulerProc {
	t.Helper()
	return startSchedulerWith(t, c, args, nil)
}

// startSchedulerWith is startScheduler with a last change to the
// configuration (nil: none).
func startSchedulerWith(t testing.TB, c *kube.Cluster, args map[string]any, change func(conf map[string]any)) *schedulerProc {
	t.Helper()
	return startSchedulerFlags(t, c, args, change)
}

// startSchedulerFlags is startSchedulerWith with extra flags, which come
// last and so win over the defaults (e.g. --secure-port).
func startSchedulerFlags(t testing.TB, c *kube.Cluster, args map[string]any, change func(conf map[string]any), flags ...string) *schedulerProc {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	b, err := os.ReadFile("../../deploy/scheduler/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	conf["clientConnection"] = map[string]any{"kubeconfig": c.Kubeconfig, "qps": 1000, "burst": 2000}
	conf["leaderElection"] = map[string]any{"leaderElect": false}
	profiles := conf["profiles"].([]any)
	profiles[0].(map[string]any)["pluginConfig"] = []any{map[string]any{"name": scheduler.Name, "args": args}}
	// kube-scheduler's default profile beside it, for comparisons.
	conf["profiles"] = append(profiles, map[string]any{"schedulerName": "default-scheduler"})
	if change != nil {
		change(conf)
	}
	if b, err = yaml.Marshal(conf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &schedulerProc{exited: make(chan struct{}), log: filepath.Join(dir, "scheduler.log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary(t), append([]string{"--config", cfg, "--secure-port=0", "--feature-gates=GenericWorkload=true", "-v=2"}, flags...)...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			lines := strings.Split(string(b), "\n")
			t.Logf("scheduler log (tail):\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return p
}

func policyArgs(policy, tie string) map[string]any {
	return map[string]any{"policy": policy, "tieBreak": tie}
}

// stop kills the scheduler (SIGKILL: a crash, not a clean exit) and waits.
func (p *schedulerProc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Kill()
	<-p.exited
}

// waitFor polls cond until it holds, the scheduler exits, or 2 minutes.
func waitFor(t testing.TB, p *schedulerProc, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("waiting for %s: the scheduler exited: %v", what, p.cmd.ProcessState)
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

type podSpec struct {
	name      string
	cpu, mem  string
	gpus      int64
	milli     int64
	model     string
	podGroup  string
	scheduler string
	// resource, when set, is the resource gpus are asked in (amd.com/gpu,
	// habana.ai/gaudi); nvidia.com/gpu otherwise.
	resource v1.ResourceName
}

func makePod(s podSpec) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse(s.cpu), v1.ResourceMemory: resource.MustParse(s.mem)}
	lim := v1.ResourceList{}
	if s.gpus > 0 {
		name := v1.ResourceName(gpuresource.GPU)
		if s.resource != "" {
			name = s.resource
		}
		req[name] = *resource.NewQuantity(s.gpus, resource.DecimalSI)
		lim[name] = *resource.NewQuantity(s.gpus, resource.DecimalSI)
	}
	if s.milli != 0 || strings.HasPrefix(s.name, "zero-") {
		req[gpuresource.GPUMilli] = *resource.NewQuantity(s.milli, resource.DecimalSI)
		lim[gpuresource.GPUMilli] = *resource.NewQuantity(s.milli, resource.DecimalSI)
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: "default"},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers:    []v1.Container{{Name: "c", Image: "busybox", Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}},
			Tolerations:   []v1.Toleration{{Key: "kwok.x-k8s.io/node", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
		},
	}
	if s.scheduler != "" {
		p.Spec.SchedulerName = s.scheduler
	}
	if s.model != "" {
		p.Annotations = map[string]string{gpuresource.AnnotationGPUModel: s.model}
	}
	if s.podGroup != "" {
		g := s.podGroup
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	}
	return p
}

func createPod(t testing.TB, c kubernetes.Interface, s podSpec) {
	t.Helper()
	if _, err := c.CoreV1().Pods("default").Create(t.Context(), makePod(s), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// unschedulable returns the PodScheduled=False message of a pod, or "".
func unschedulable(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

func startCluster(t testing.TB, nodes []kube.Node) *kube.Cluster {
	t.Helper()
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	if err := c.CreateNodes(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	if err := c.WaitNodesReady(t.Context(), names); err != nil {
		t.Fatal(err)
	}
	return c
}

// gpuUse sums, per node and GPU, the milli-GPU of bound pods as their
// annotations record, and fails the test on any GPU over 1000.
func gpuUse(t testing.TB, c kubernetes.Interface) map[string][]int64 {
	t.Helper()
	pods, err := c.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	use := map[string][]int64{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Spec.SchedulerName != schedulerName {
			continue
		}
		g, ok := p.Annotations[gpuresource.AnnotationGPUs]
		if !ok {
			continue
		}
		share, err := strconv.ParseInt(p.Annotations[gpuresource.AnnotationGPUShare], 10, 64)
		if err != nil {
			t.Fatalf("pod %s: %s: %v", p.Name, gpuresource.AnnotationGPUShare, err)
		}
		for _, f := range strings.Split(g, ",") {
			i, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("pod %s: %s=%q", p.Name, gpuresource.AnnotationGPUs, g)
			}
			u := use[p.Spec.NodeName]
			for len(u) <= i {
				u = append(u, 0)
			}
			u[i] += share
			if u[i] > 1000 {
				t.Errorf("GPU %d of node %s over-committed: %d milli-GPU (pod %s)", i, p.Spec.NodeName, u[i], p.Name)
			}
			use[p.Spec.NodeName] = u
		}
	}
	return use
}

func bound(c kubernetes.Interface, name string) func() (bool, error) {
	return func() (bool, error) {
		p, err := c.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Spec.NodeName != "" && p.Annotations[gpuresource.AnnotationGPUs] != "", nil
	}
}

func rejected(c kubernetes.Interface, name string, msg *string) func() (bool, error) {
	return func() (bool, error) {
		p, err := c.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		*msg = unschedulable(p)
		return *msg != "", nil
	}
}

// TestRestartNeverDoubleAllocates kills the scheduler after it bound
// GPU-sharing pods and starts a new one: the new scheduler rebuilds each
// GPU's free share from the bound pods' annotations, so it puts the next
// pods on the free GPUs, and refuses the one that no GPU holds.
func TestRestartNeverDoubleAllocates(t *testing.T) {
	c := startCluster(t, []kube.Node{{Name: "n0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 2, Model: "T4"}})
	s := startScheduler(t, c, policyArgs("bestfit", "first"))
	// Best-fit: 600 on GPU 0, then 300 on GPU 0 (the least free that fits).
	createPod(t, c.Client, podSpec{name: "a", cpu: "1", mem: "1Gi", milli: 600})
	waitFor(t, s, "pod a bound", bound(c.Client, "a"))
	createPod(t, c.Client, podSpec{name: "b", cpu: "1", mem: "1Gi", milli: 300})
	waitFor(t, s, "pod b bound", bound(c.Client, "b"))
	s.stop()

	s = startScheduler(t, c, policyArgs("bestfit", "first"))
	// GPU 0 has 100 free, GPU 1 1000: 700 must go to GPU 1, then 200 to
	// GPU 1 (300 free there, 100 on GPU 0). Then 150 fits nowhere: the
	// node's 200 free milli-GPU (all NodeResourcesFit sees) are 100 on
	// each GPU.
	createPod(t, c.Client, podSpec{name: "c", cpu: "1", mem: "1Gi", milli: 700})
	waitFor(t, s, "pod c bound", bound(c.Client, "c"))
	createPod(t, c.Client, podSpec{name: "d", cpu: "1", mem: "1Gi", milli: 200})
	waitFor(t, s, "pod d bound", bound(c.Client, "d"))
	createPod(t, c.Client, podSpec{name: "e", cpu: "1", mem: "1Gi", milli: 150})
	var msg string
	waitFor(t, s, "pod e refused", rejected(c.Client, "e", &msg))
	if !strings.Contains(msg, "Insufficient nvidia.com/gpu") {
		t.Errorf("pod e: %q, want Insufficient nvidia.com/gpu", msg)
	}
	use := gpuUse(t, c.Client)
	if want := []int64{900, 900}; fmt.Sprint(use["n0"]) != fmt.Sprint(want) {
		t.Errorf("GPU use %v, want %v", use["n0"], want)
	}
}

// TestBadRequests: each request the plugin cannot honour leaves the pod
// pending and says why: a request it can never honour in one
// InvalidGPURequest event (the pod is parked at PreEnqueue), one that does
// not fit now in the PodScheduled condition.
func TestBadRequests(t *testing.T) {
	c := startCluster(t, []kube.Node{
		{Name: "n0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 2, Model: "T4"},
		{Name: "bare", CPUMilli: 32000, MemoryMiB: 128 << 10},
	})
	s := startScheduler(t, c, policyArgs("fgd", "random"))
	for _, tc := range []struct {
		pod    podSpec
		parked bool
		want   string
	}{
		{podSpec{name: "zero-share", cpu: "1", mem: "1Gi", milli: 0}, true, "gpuplane.io/gpu-milli 0 out of range 1..1000"},
		{podSpec{name: "big-share", cpu: "1", mem: "1Gi", milli: 1500}, true, "gpuplane.io/gpu-milli 1500 out of range 1..1000"},
		{podSpec{name: "share-of-two", cpu: "1", mem: "1Gi", milli: 500, gpus: 2}, true, "applies to one GPU, but nvidia.com/gpu is 2"},
		{podSpec{name: "unknown-model", cpu: "1", mem: "1Gi", gpus: 1, model: "B300"}, true, `unknown GPU model "B300"`},
		{podSpec{name: "wrong-model", cpu: "1", mem: "1Gi", gpus: 1, model: "A100-80GB"}, false, "not allowed"},
		{podSpec{name: "three-gpus", cpu: "1", mem: "1Gi", gpus: 3}, false, "Insufficient nvidia.com/gpu"},
	} {
		t.Run(tc.pod.name, func(t *testing.T) {
			createPod(t, c.Client, tc.pod)
			var msg string
			if tc.parked {
				waitFor(t, s, "an InvalidGPURequest event", parkedEvent(c.Client, tc.pod.name, &msg))
			} else {
				waitFor(t, s, "pod refused", rejected(c.Client, tc.pod.name, &msg))
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("reason %q, want it to contain %q", msg, tc.want)
			}
		})
	}
}

// parkedEvent waits for the InvalidGPURequest event on a pod and sets
// note to its note.
func parkedEvent(c kubernetes.Interface, name string, note *string) func() (bool, error) {
	return func() (bool, error) {
		evs, err := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: "regarding.name=" + name + ",reason=" + scheduler.ReasonInvalidGPURequest})
		if err != nil || len(evs.Items) == 0 {
			return false, err
		}
		*note = evs.Items[0].Note
		return true, nil
	}
}

// TestGang: 4 nodes with one GPU each and two gangs of 4 one-GPU pods
// created together (the check). Upstream's GangScheduling binds
// one gang whole and none of the other; the other binds once the first is
// deleted.
func TestGang(t *testing.T) {
	var nodes []kube.Node
	for i := range 4 {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("g%d", i), CPUMilli: 16000, MemoryMiB: 64 << 10, GPUs: 1, Model: "V100M32"})
	}
	c := startCluster(t, nodes)
	s := startScheduler(t, c, policyArgs("fgd", "random"))
	for _, g := range []string{"gang-a", "gang-b"} {
		pg := &schedv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: g, Namespace: "default"},
			Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: 4}}},
		}
		if _, err := c.Client.SchedulingV1beta1().PodGroups("default").Create(t.Context(), pg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		for _, g := range []string{"gang-a", "gang-b"} {
			createPod(t, c.Client, podSpec{name: fmt.Sprintf("%s-%d", g, i), cpu: "1", mem: "1Gi", gpus: 1, podGroup: g})
		}
	}
	count := func() (map[string]int, error) {
		pods, err := c.Client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		n := map[string]int{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				n[*p.Spec.SchedulingGroup.PodGroupName]++
			}
		}
		return n, nil
	}
	var first, second string
	waitFor(t, s, "one gang bound", func() (bool, error) {
		n, err := count()
		if err != nil {
			return false, err
		}
		switch {
		case n["gang-a"] == 4:
			first, second = "gang-a", "gang-b"
		case n["gang-b"] == 4:
			first, second = "gang-b", "gang-a"
		default:
			return false, nil
		}
		return true, nil
	})
	// The other gang stays whole outside: give the scheduler a moment to
	// (wrongly) bind part of it, then check none is bound.
	time.Sleep(2 * time.Second)
	n, err := count()
	if err != nil {
		t.Fatal(err)
	}
	if n[second] != 0 || n[first] != 4 {
		t.Fatalf("bound per gang %v: want %s 4 and %s 0", n, first, second)
	}
	gpuUse(t, c.Client)
	zero := int64(0)
	for i := range 4 {
		if err := c.Client.CoreV1().Pods("default").Delete(t.Context(), fmt.Sprintf("%s-%d", first, i), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, s, second+" bound", func() (bool, error) {
		n, err := count()
		return err == nil && n[second] == 4 && n[first] == 0, err
	})
	gpuUse(t, c.Client)
}

// TestVersion: --version names gpuplane's build and the kube-scheduler
// release it embeds (go.mod's k8s.io/kubernetes).
func TestVersion(t *testing.T) {
	out, err := exec.Command(binary(t), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "gpuplane-scheduler version ") || !strings.Contains(lines[0], ", go1.") || lines[1] != "kube-scheduler v1.37.2" {
		t.Errorf("--version printed %q", out)
	}
}

// TestGangLocality: four 2-GPU nodes in two racks, named so that the
// racks alternate (g0 r1, g1 r2, g2 r1, g3 r2), and a gang of two 2-GPU
// pods. Best-fit with tie-break "first" puts the first pod on g0, and on
// its own would put the second on g1, the smallest name left; GangLocality
// keeps it in rack r1: g2.
func TestGangLocality(t *testing.T) {
	var nodes []kube.Node
	for i := range 4 {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("g%d", i), CPUMilli: 16000, MemoryMiB: 64 << 10, GPUs: 2, Model: "T4",
			Labels: map[string]string{"topology.kubernetes.io/rack": fmt.Sprintf("r%d", i%2+1)}})
	}
	c := startCluster(t, nodes)
	s := startScheduler(t, c, policyArgs("bestfit", "first"))
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "ddp", Namespace: "default"},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: 2}}},
	}
	if _, err := c.Client.SchedulingV1beta1().PodGroups("default").Create(t.Context(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		createPod(t, c.Client, podSpec{name: fmt.Sprintf("ddp-%d", i), cpu: "1", mem: "1Gi", gpus: 2, podGroup: "ddp"})
	}
	waitFor(t, s, "gang bound", func() (bool, error) {
		ok0, err := bound(c.Client, "ddp-0")()
		if err != nil || !ok0 {
			return false, err
		}
		return bound(c.Client, "ddp-1")()
	})
	racks := map[string]bool{}
	for i := range 2 {
		p, err := c.Client.CoreV1().Pods("default").Get(t.Context(), fmt.Sprintf("ddp-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.Client.CoreV1().Nodes().Get(t.Context(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		racks[n.Labels["topology.kubernetes.io/rack"]] = true
		t.Logf("%s on %s (rack %s)", p.Name, n.Name, n.Labels["topology.kubernetes.io/rack"])
	}
	if len(racks) != 1 {
		t.Errorf("gang spread over racks %v, want one", racks)
	}
}
