// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

// Fault tests on the real control plane (internal/testenv/kube): the
// scheduler killed mid-burst, kube-apiserver restarted mid-burst, the
// leader of two scheduler replicas killed, a node deleted under its GPU
// pods, and a node whose GPU count shrinks under its pods. Each checks
// the pods bound, the GPUs per node and that no GPU is handed out twice;
// the figures they log are in docs/scheduler.md ("Faults").
//
//	go test -count=1 -v -run TestFault ./internal/scheduler/

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// The burst: 4 nodes of 8 T4 (32 GPUs) and 32 pods, 16 of one whole GPU
// and 16 of 500 milli-GPU: 24 GPUs of demand, which fits however the
// halves are spread (16 + 16 GPUs at worst), so every pod must bind.
const (
	burstNodes    = 4
	burstGPUs     = 8
	burstPods     = 32
	burstMilli    = 16*1000 + 16*500
	burstFirst    = 24 // created before the scheduler starts; the rest during the fault
	faultAfter    = 4  // bound pods before the fault
	faultDeadline = 2 * time.Minute
)

func burstCluster(t *testing.T, o kube.Options) *kube.Cluster {
	t.Helper()
	o.FeatureGates, o.RuntimeConfig = kube.WorkloadFeatureGates, kube.WorkloadRuntimeConfig
	c := kube.StartT(t, o)
	var nodes []kube.Node
	for i := range burstNodes {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("n%d", i), CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: burstGPUs, Model: "T4"})
	}
	if err := c.CreateNodes(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	return c
}

// throttled limits the scheduler's API client to 10 requests a second
// (burst 2), so that a burst takes seconds to bind and a fault after its
// 4th binding finds bindings queued and in flight; unthrottled, the
// scheduler binds all 24 waiting pods within milliseconds of the 4th.
func throttled(conf map[string]any) {
	cc := conf["clientConnection"].(map[string]any)
	cc["qps"], cc["burst"] = 10, 2
}

func burstSpec(i int) podSpec {
	s := podSpec{name: fmt.Sprintf("p-%02d", i), cpu: "1", mem: "1Gi"}
	if i%2 == 0 {
		s.gpus = 1
	} else {
		s.milli = 500
	}
	return s
}

// createBurst creates pods from..to-1 of the burst, 4 at a time, retrying
// each while the API server is away (a create that reached it before a
// restart answers AlreadyExists the second time). It returns at once; the
// channel yields the first error, or is closed when all are created.
func createBurst(t *testing.T, c *kube.Cluster, from, to int) <-chan error {
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(t.Context(), faultDeadline)
	work := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	for range 4 {
		wg.Go(func() {
			for i := range work {
				for {
					_, err := c.Client.CoreV1().Pods("default").Create(ctx, makePod(burstSpec(i)), metav1.CreateOptions{})
					if err == nil || apierrors.IsAlreadyExists(err) {
						break
					}
					if ctx.Err() != nil {
						once.Do(func() { done <- fmt.Errorf("create pod %d: %w", i, err) })
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	go func() {
		defer cancel()
		for i := from; i < to; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		close(done)
	}()
	return done
}

// boundPods lists the default namespace's pods of the gpuplane scheduler
// and counts those bound with their GPUs.
func boundPods(ctx context.Context, c *kube.Cluster) (int, []v1.Pod, error) {
	list, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.NodeName != "" && p.Annotations[gpuresource.AnnotationGPUs] != "" {
			n++
		}
	}
	return n, list.Items, nil
}

// poll calls cond every 20 ms until it holds, failing the test after
// timeout or when any of exited is closed. API errors (the API server
// restarting) are retried; cond's own false is not an error.
func poll(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error), exited ...<-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok && err == nil {
			return
		}
		if err != nil {
			last = err
		}
		for _, ch := range exited {
			select {
			case <-ch:
				t.Fatalf("waiting for %s: a scheduler exited", what)
			default:
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error: %v)", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// awaitBound returns once n pods are bound with their GPUs, as a watch
// reports them (within milliseconds, so that a fault can follow the n-th
// binding while the others are still in flight), or fails the test.
func awaitBound(t *testing.T, c *kube.Cluster, n int, exited <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), faultDeadline)
	defer cancel()
	list, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	note := func(p *v1.Pod) {
		if p.Spec.NodeName != "" && p.Annotations[gpuresource.AnnotationGPUs] != "" {
			seen[p.Name] = true
		}
	}
	for i := range list.Items {
		note(&list.Items[i])
	}
	w, err := c.Client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("waiting for %d pods bound: the watch ended at %d (%v)", n, len(seen), ctx.Err())
			}
			if p, ok := ev.Object.(*v1.Pod); ok {
				note(p)
			}
		case <-exited:
			t.Fatalf("waiting for %d pods bound: the scheduler exited at %d", n, len(seen))
		}
	}
}

func atLeastBound(c *kube.Cluster, n int, got *int) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		k, _, err := boundPods(ctx, c)
		*got = k
		return k >= n, err
	}
}

// checkBurst checks the end state of a burst: every pod bound with its
// GPUs, on GPUs the node has, no GPU over 1000 milli-GPU (gpuUse), no
// node's GPUs over its allocatable, and 24,000 milli-GPU held in all.
func checkBurst(t *testing.T, c *kube.Cluster) {
	t.Helper()
	n, pods, err := boundPods(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if n != burstPods || len(pods) != burstPods {
		t.Fatalf("%d of %d pods bound with GPUs (%d pods)", n, burstPods, len(pods))
	}
	use := gpuUse(t, c.Client)
	total := int64(0)
	for node, u := range use {
		if len(u) > burstGPUs {
			t.Errorf("node %s: a pod on GPU %d, the node has %d", node, len(u)-1, burstGPUs)
		}
		sum := int64(0)
		for _, m := range u {
			sum += m
		}
		if sum > burstGPUs*1000 {
			t.Errorf("node %s: %d milli-GPU bound, allocatable %d", node, sum, burstGPUs*1000)
		}
		total += sum
	}
	if total != burstMilli {
		t.Errorf("%d milli-GPU bound in all, want %d", total, burstMilli)
	}
	t.Logf("GPU use per node: %v", use)
}

// TestFaultSchedulerKilledMidBurst: the scheduler is killed (SIGKILL)
// while a burst is binding, and a new one started at once; the second
// half of the burst is created meanwhile. Every pod binds, no GPU twice.
// TestRestartNeverDoubleAllocates checks the same between bindings, down
// to the milli-GPU; this one kills it with bindings in flight.
func TestFaultSchedulerKilledMidBurst(t *testing.T) {
	c := burstCluster(t, kube.Options{})
	if err := <-createBurst(t, c, 0, burstFirst); err != nil {
		t.Fatal(err)
	}
	s := startSchedulerWith(t, c, policyArgs("fgd", "random"), throttled)
	awaitBound(t, c, faultAfter, s.exited)
	s.stop()
	killed := time.Now()
	atKill, _, _ := boundPods(t.Context(), c)
	second := createBurst(t, c, burstFirst, burstPods)
	s = startSchedulerWith(t, c, policyArgs("fgd", "random"), throttled)
	var n int
	poll(t, "all pods bound", faultDeadline, atLeastBound(c, burstPods, &n), s.exited)
	t.Logf("killed after the %dth binding: %d of %d bound once it had exited; all %d bound %v after the kill",
		faultAfter, atKill, burstFirst, burstPods, time.Since(killed).Round(time.Millisecond))
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if atKill >= burstFirst {
		t.Logf("all %d pods created first were bound before the kill: no binding was in flight this run", atKill)
	}
	checkBurst(t, c)
}

// TestFaultAPIServerRestartMidBurst: kube-apiserver is killed (SIGKILL:
// bindings in flight lose their connection, answered or not) while a
// burst is binding and started again on the same port; the second half of
// the burst is created while it is away (retried). The same scheduler,
// which keeps running, binds every pod, no GPU twice. (With SIGTERM the
// API server goes on serving its open connections through the grace: the
// burst completed within a 3 s grace, so that is no fault mid-burst.)
func TestFaultAPIServerRestartMidBurst(t *testing.T) {
	c := burstCluster(t, kube.Options{})
	if err := <-createBurst(t, c, 0, burstFirst); err != nil {
		t.Fatal(err)
	}
	s := startSchedulerWith(t, c, policyArgs("fgd", "random"), throttled)
	awaitBound(t, c, faultAfter, s.exited)
	atKill, _, _ := boundPods(t.Context(), c)
	if err := c.Kill(kube.APIServer); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// The second half arrives while the API server is away: its creates
	// are retried until it is back.
	second := createBurst(t, c, burstFirst, burstPods)
	if err := c.StartComponent(t.Context(), kube.APIServer); err != nil {
		t.Fatal(err)
	}
	ready := time.Now()
	atReady, _, _ := boundPods(t.Context(), c)
	var n int
	poll(t, "all pods bound", faultDeadline, atLeastBound(c, burstPods, &n), s.exited)
	t.Logf("killed after the %dth binding (%d of %d bound just before); ready again %v later, with %d bound; all %d bound %v after that",
		faultAfter, atKill, burstFirst, ready.Sub(killed).Round(time.Millisecond), atReady, burstPods, time.Since(ready).Round(time.Millisecond))
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	checkBurst(t, c)
}

const acquired = "Successfully acquired lease"

func logHas(p *schedulerProc, s string) bool {
	b, _ := os.ReadFile(p.log)
	return strings.Contains(string(b), s)
}

// TestFaultLeaderFailover: two replicas with kube-scheduler's own leader
// election as shipped (deploy/scheduler/config.yaml: Lease
// kube-system/gpuplane-scheduler, kube-scheduler's default 15 s lease, 10 s
// renew deadline, 2 s retry). The leader is killed (SIGKILL: it releases
// nothing) while a burst is binding. The other takes the lease once it
// expires and binds the rest; it bound nothing before; no GPU twice.
func TestFaultLeaderFailover(t *testing.T) {
	c := burstCluster(t, kube.Options{})
	elect := func(conf map[string]any) {
		conf["leaderElection"] = map[string]any{"leaderElect": true, "resourceNamespace": "kube-system", "resourceName": "gpuplane-scheduler"}
		throttled(conf)
	}
	if err := <-createBurst(t, c, 0, burstFirst); err != nil {
		t.Fatal(err)
	}
	a := startSchedulerWith(t, c, policyArgs("fgd", "random"), elect)
	b := startSchedulerWith(t, c, policyArgs("fgd", "random"), elect)
	either := make(chan struct{})
	go func() {
		select {
		case <-a.exited:
		case <-b.exited:
		}
		close(either)
	}()
	awaitBound(t, c, faultAfter, either)
	var leader, follower *schedulerProc
	switch la, lb := logHas(a, acquired), logHas(b, acquired); {
	case la && !lb:
		leader, follower = a, b
	case lb && !la:
		leader, follower = b, a
	default:
		t.Fatalf("pods bound, and the lease taken by replica a: %v, b: %v; want exactly one", la, lb)
	}
	leader.stop()
	killed := time.Now()
	atKill, _, _ := boundPods(t.Context(), c)
	lease, err := c.Client.CoordinationV1().Leases("kube-system").Get(t.Context(), "gpuplane-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := *lease.Spec.HolderIdentity
	second := createBurst(t, c, burstFirst, burstPods)
	var failover time.Duration
	poll(t, "the lease taken over", faultDeadline, func(ctx context.Context) (bool, error) {
		l, err := c.Client.CoordinationV1().Leases("kube-system").Get(ctx, "gpuplane-scheduler", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if h := l.Spec.HolderIdentity; h != nil && *h != holder {
			failover = time.Since(killed)
			return true, nil
		}
		return false, nil
	}, follower.exited)
	var n int
	poll(t, "all pods bound", faultDeadline, atLeastBound(c, burstPods, &n), follower.exited)
	t.Logf("leader killed after the %dth binding, %d of %d bound once it had exited; the lease held by the other replica %v later; all %d bound %v after the kill",
		faultAfter, atKill, burstFirst, failover.Round(time.Millisecond), burstPods, time.Since(killed).Round(time.Millisecond))
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	checkBurst(t, c)
	// The follower scheduled nothing before it led: its first binding
	// (kube-scheduler -v=2 logs each) comes after it took the lease.
	log, _ := os.ReadFile(follower.log)
	took, firstBind := strings.Index(string(log), acquired), strings.Index(string(log), "Successfully bound pod to node")
	if took < 0 || firstBind < 0 || firstBind < took {
		t.Errorf("follower's log: lease taken at byte %d, first binding at byte %d; want both, the binding after", took, firstBind)
	}
}

// deleteNow deletes a pod with no grace, as the pod garbage collector
// deletes a pod whose node is gone.
func deleteNow(t *testing.T, c *kube.Cluster, name string) {
	t.Helper()
	zero := int64(0)
	if err := c.Client.CoreV1().Pods("default").Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	poll(t, "pod "+name+" gone", faultDeadline, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func podOf(t *testing.T, c *kube.Cluster, name string) *v1.Pod {
	t.Helper()
	p, err := c.Client.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pendingWith waits until pod name is unschedulable with a message
// containing want.
func pendingWith(t *testing.T, c *kube.Cluster, s *schedulerProc, name, want string) {
	t.Helper()
	var msg string
	waitFor(t, s, "pod "+name+" refused with "+want, func() (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("pod %s bound to %s (GPUs %s), want it pending", name, p.Spec.NodeName, p.Annotations[gpuresource.AnnotationGPUs])
		}
		msg = unschedulable(p)
		return strings.Contains(msg, want), nil
	})
}

// TestFaultNodeDeleted: node n0 (4 GPUs) is deleted while 4 one-GPU pods
// are bound to it. With no kube-controller-manager nothing deletes them:
// they stay bound to the missing node (kwok keeps them Running). The
// scheduler drops the node, so new pods go to n1 only (4 bind, the fifth
// waits). When a node named n0 registers again the scheduler still counts
// the 4 pods on it, so the fifth stays pending ("0/2 nodes"); once one of
// them is deleted, as the pod garbage collector would, it gets that GPU.
func TestFaultNodeDeleted(t *testing.T) {
	n0 := kube.Node{Name: "n0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 4, Model: "T4"}
	c := startCluster(t, []kube.Node{n0, {Name: "n1", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 4, Model: "T4"}})
	// Best-fit, tie-break first: the first pod goes to n0 (the smaller
	// name), the next three to n0 too (the least free), GPUs 0 to 3.
	s := startScheduler(t, c, policyArgs("bestfit", "first"))
	for i := range 4 {
		name := fmt.Sprintf("a%d", i)
		createPod(t, c.Client, podSpec{name: name, cpu: "1", mem: "1Gi", gpus: 1})
		waitFor(t, s, name+" bound", bound(c.Client, name))
		if p := podOf(t, c, name); p.Spec.NodeName != "n0" || p.Annotations[gpuresource.AnnotationGPUs] != fmt.Sprint(i) {
			t.Fatalf("pod %s on %s GPUs %s, want n0 GPU %d", name, p.Spec.NodeName, p.Annotations[gpuresource.AnnotationGPUs], i)
		}
	}
	if err := c.Client.CoreV1().Nodes().Delete(t.Context(), "n0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	for i := range 4 {
		name := fmt.Sprintf("b%d", i)
		createPod(t, c.Client, podSpec{name: name, cpu: "1", mem: "1Gi", gpus: 1})
		waitFor(t, s, name+" bound", bound(c.Client, name))
		if p := podOf(t, c, name); p.Spec.NodeName != "n1" {
			t.Fatalf("pod %s on %s, want n1 (n0 is deleted)", name, p.Spec.NodeName)
		}
	}
	createPod(t, c.Client, podSpec{name: "b4", cpu: "1", mem: "1Gi", gpus: 1})
	pendingWith(t, c, s, "b4", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu")
	orphans := func() {
		t.Helper()
		for i := range 4 {
			p := podOf(t, c, fmt.Sprintf("a%d", i))
			if p.Spec.NodeName != "n0" || p.DeletionTimestamp != nil || p.Status.Phase != v1.PodRunning {
				t.Errorf("pod %s: node %q, deleting %v, phase %s: want it left Running, bound to n0", p.Name, p.Spec.NodeName, p.DeletionTimestamp != nil, p.Status.Phase)
			}
		}
	}
	orphans()
	gone := time.Since(deleted)

	if err := c.CreateNodes(t.Context(), []kube.Node{n0}); err != nil {
		t.Fatal(err)
	}
	pendingWith(t, c, s, "b4", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu")
	orphans()
	t.Logf("a0..a3 stayed bound and Running through the %v n0 was gone and %v after; b4 refused on the new n0",
		gone.Round(time.Millisecond), (time.Since(deleted) - gone).Round(time.Millisecond))
	deleteNow(t, c, "a0")
	waitFor(t, s, "b4 bound", bound(c.Client, "b4"))
	if p := podOf(t, c, "b4"); p.Spec.NodeName != "n0" || p.Annotations[gpuresource.AnnotationGPUs] != "0" {
		t.Errorf("pod b4 on %s GPUs %s, want n0 GPU 0 (a0's)", p.Spec.NodeName, p.Annotations[gpuresource.AnnotationGPUs])
	}
	use := gpuUse(t, c.Client)
	if fmt.Sprint(use["n0"]) != "[1000 1000 1000 1000]" || fmt.Sprint(use["n1"]) != "[1000 1000 1000 1000]" {
		t.Errorf("GPU use %v, want every GPU of n0 and n1 at 1000", use)
	}
}

// setGPUs sets a node's nvidia.com/gpu and gpuplane.io/gpu-milli capacity
// and allocatable, as a device plugin reporting fewer healthy GPUs does.
func setGPUs(t *testing.T, c *kube.Cluster, node string, gpus int64) {
	t.Helper()
	n, err := c.Client.CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []v1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		l[gpuresource.GPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
		l[gpuresource.GPUMilli] = *resource.NewQuantity(gpus*1000, resource.DecimalSI)
	}
	if _, err := c.Client.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestFaultGPUsShrink: a node of 4 GPUs runs a, b, c on GPUs 0, 1, 2;
// its allocatable nvidia.com/gpu drops to 2 (GPUs 2 and 3 gone). The three
// keep running; a new 1-GPU pod d is refused (3 bound, 2 allocatable), and
// still after c (on the lost GPU 2) is deleted (2 bound, 2 allocatable).
// Once a is deleted it fits, and gets a's GPU 0 (b holds 1).
func TestFaultGPUsShrink(t *testing.T) {
	c := startCluster(t, []kube.Node{{Name: "n0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 4, Model: "T4"}})
	s := startScheduler(t, c, policyArgs("bestfit", "first"))
	for i, name := range []string{"a", "b", "c"} {
		createPod(t, c.Client, podSpec{name: name, cpu: "1", mem: "1Gi", gpus: 1})
		waitFor(t, s, name+" bound", bound(c.Client, name))
		if g := gpusOf(t, c, name); g != fmt.Sprint(i) {
			t.Fatalf("pod %s on GPUs %s, want %d", name, g, i)
		}
	}
	setGPUs(t, c, "n0", 2)
	// The scheduler's node watch sees the update about when ours does;
	// a second's margin before the next pod keeps d from racing it.
	waitFor(t, s, "the node at 2 GPUs", func() (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(t.Context(), "n0", metav1.GetOptions{})
		q := n.Status.Allocatable[gpuresource.GPU]
		return err == nil && q.Value() == 2, err
	})
	time.Sleep(time.Second)
	createPod(t, c.Client, podSpec{name: "d", cpu: "1", mem: "1Gi", gpus: 1})
	pendingWith(t, c, s, "d", "Insufficient nvidia.com/gpu")
	deleteNow(t, c, "c")
	// d must stay pending: give the scheduler (which retries d on a pod
	// deletion) a moment to (wrongly) bind it.
	time.Sleep(2 * time.Second)
	pendingWith(t, c, s, "d", "Insufficient nvidia.com/gpu")
	for _, name := range []string{"a", "b"} {
		if p := podOf(t, c, name); p.Spec.NodeName != "n0" || p.Status.Phase != v1.PodRunning {
			t.Errorf("pod %s: node %q phase %s, want still Running on n0", name, p.Spec.NodeName, p.Status.Phase)
		}
	}
	deleteNow(t, c, "a")
	waitFor(t, s, "d bound", bound(c.Client, "d"))
	if g := gpusOf(t, c, "d"); g != "0" {
		t.Errorf("pod d on GPUs %s, want 0 (a's; b holds 1)", g)
	}
	if use := gpuUse(t, c.Client); fmt.Sprint(use["n0"]) != "[1000 1000]" {
		t.Errorf("GPU use %v, want n0 [1000 1000]", use["n0"])
	}
}
