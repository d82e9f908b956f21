// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// BenchmarkThroughput measures scheduling throughput in the style of
// kube-scheduler's scheduler_perf: on a control plane with kwok nodes of
// 8 V100 GPUs each (one per node count, the profiles in turn on it, the
// pods deleted between them), 10,000 GPU pods (half of one whole GPU, half
// of 500 milli-GPU) are created first, then the scheduler starts, and
// pods/s is counted from the first binding to the last. Profiles of the
// same binary:
//   - gpuplane: deploy/scheduler/config.yaml (fgd; PreFilter names the
//     placement core's 16 best nodes, every one of them scored);
//   - gpuplane-every-node: the same with candidates 0, every node filtered
//     and scored (the shipped profile before candidates);
//   - gpuplane-adaptive: candidates 0 with kube-scheduler's adaptive
//     percentageOfNodesToScore;
//   - default-scheduler: kube-scheduler's default profile.
//
// Besides pods/s it reports the scheduler's CPU time per pod (from its
// first binding to its last), its peak RSS (VmHWM) and its Go heap in use
// once every pod is bound, after a collection (go_memstats_heap_inuse_bytes
// of its /metrics after /debug/pprof/heap?gc=1), in MiB. With
// GPUPLANE_THROUGHPUT_PPROF=DIR it also saves a 20 s CPU profile of the
// scheduler, taken from its first binding, to DIR/nodes=N-profile=P.pprof,
// and its heap profile once every pod is bound to
// DIR/heap-nodes=N-profile=P.pprof.
//
// With GPUPLANE_THROUGHPUT_API=dra the nodes have no nvidia.com/gpu: each
// publishes its 8 GPUs as gpuplane's DRA driver does (dra.Build with
// Shares, one ResourceSlice a node), the chart's DeviceClasses are
// installed, and the pods ask through ResourceClaimTemplates of class
// gpu.nvidia.com (half one whole GPU, half a share of 500 milliGPU and
// 1Mi), their claims made by kube-controller-manager's resourceclaim
// controller before the scheduler starts; the sub-benchmarks and profile
// files are then named "dra-nodes=N".
//
// One iteration takes minutes: run with -benchtime 1x.
// GPUPLANE_THROUGHPUT sets the node counts (default "1000,5000"),
// GPUPLANE_THROUGHPUT_PODS the pods (default 10000) and
// GPUPLANE_THROUGHPUT_PROFILES the profiles (default
// "gpuplane,default-scheduler,gpuplane-every-node").
func BenchmarkThroughput(b *testing.B) {
	counts := []int{1000, 5000}
	if s := os.Getenv("GPUPLANE_THROUGHPUT"); s != "" {
		counts = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("GPUPLANE_THROUGHPUT=%q: want node counts, e.g. 1000,5000", s)
			}
			counts = append(counts, n)
		}
	}
	pods := 10000
	if s := os.Getenv("GPUPLANE_THROUGHPUT_PODS"); s != "" {
		var err error
		if pods, err = strconv.Atoi(s); err != nil || pods < 1 {
			b.Fatalf("GPUPLANE_THROUGHPUT_PODS=%q", s)
		}
	}
	profiles := []string{"gpuplane", "default-scheduler", "gpuplane-every-node"}
	if s := os.Getenv("GPUPLANE_THROUGHPUT_PROFILES"); s != "" {
		profiles = strings.Split(s, ",")
		for _, p := range profiles {
			if !slices.Contains([]string{"gpuplane", "gpuplane-every-node", "gpuplane-adaptive", "default-scheduler"}, p) {
				b.Fatalf("GPUPLANE_THROUGHPUT_PROFILES=%q: unknown profile %q", s, p)
			}
		}
	}
	var useDRA bool
	switch s := os.Getenv("GPUPLANE_THROUGHPUT_API"); s {
	case "", "device-plugin":
	case "dra":
		useDRA = true
	default:
		b.Fatalf("GPUPLANE_THROUGHPUT_API=%q: want device-plugin or dra", s)
	}
	for _, n := range counts {
		// One control plane per node count, for every profile in turn:
		// the profiles are compared on the same nodes, in the same minutes.
		name := fmt.Sprintf("nodes=%d", n)
		if useDRA {
			name = "dra-" + name
		}
		b.Run(name, func(b *testing.B) {
			var ns []kube.Node
			for i := range n {
				node := kube.Node{Name: fmt.Sprintf("node-%05d", i), CPUMilli: 96000, MemoryMiB: 512 << 10, GPUs: 8, Model: "V100M16"}
				if useDRA {
					node.GPUs, node.Model = 0, ""
				}
				ns = append(ns, node)
			}
			c := startThroughputCluster(b, ns)
			if useDRA {
				publishThroughputDRA(b, c, ns)
			}
			for k, profile := range profiles {
				b.Run("profile="+profile, func(b *testing.B) {
					for range b.N {
						r := runThroughput(b, c, name, profile, pods, useDRA)
						b.Logf("%s, %d nodes, %d pods: %.1f pods/s, %.2f ms CPU a pod, peak RSS %.0f MiB, heap %.0f MiB",
							profile, n, pods, r.podsPerSec, r.cpuMsPerPod, r.peakRSSMiB, r.heapMiB)
						b.ReportMetric(r.podsPerSec, "pods/s")
						b.ReportMetric(r.peakRSSMiB, "MiB-peak-RSS")
						b.ReportMetric(r.heapMiB, "MiB-heap")
						b.ReportMetric(r.cpuMsPerPod, "ms-CPU/pod")
						if k < len(profiles)-1 {
							deletePods(b, c, useDRA)
						}
					}
				})
			}
		})
	}
}

// startThroughputCluster is startCluster without kube-controller-manager's
// node-lifecycle-controller and taint-eviction-controller: kwok, sharing
// 2 loaded cores with the control plane, misses node heartbeats at 5,000
// nodes, and the lifecycle controller then marks nodes NotReady and taints
// them faster than kwok makes them Ready (2,041 of 5,000 NotReady after
// 25 minutes in one try). Nothing here tests node health.
func startThroughputCluster(b *testing.B, nodes []kube.Node) *kube.Cluster {
	var keep []string
	for _, ctl := range strings.Split(kube.Controllers, ",") {
		if ctl != "node-lifecycle-controller" && ctl != "taint-eviction-controller" {
			keep = append(keep, ctl)
		}
	}
	c := kube.StartT(b, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig, Controllers: strings.Join(keep, ",")})
	if err := c.CreateNodes(b.Context(), nodes); err != nil {
		b.Fatal(err)
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	if err := c.WaitNodesReady(b.Context(), names); err != nil {
		b.Fatal(err)
	}
	return c
}

// publishThroughputDRA installs the chart's DeviceClasses, publishes
// each node's 8 V100M16 as gpuplane's DRA driver does (dra.Build with
// Shares) and creates the ResourceClaimTemplates "gpu-whole" (one whole
// GPU) and "gpu-share" (500 milliGPU and 1Mi of one).
func publishThroughputDRA(b *testing.B, c *kube.Cluster, nodes []kube.Node) {
	installClasses(b, c.Client)
	r, err := dra.Build(draGPUs(8, "V100M16", 16<<10), dra.Options{Shares: true})
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(nodes); i = int(next.Add(1)) - 1 {
				for _, s := range nodeSlices(nodes[i].Name, r) {
					if _, err := c.Client.ResourceV1().ResourceSlices().Create(b.Context(), s, metav1.CreateOptions{}); err != nil {
						errs <- fmt.Errorf("ResourceSlice of %s: %w", nodes[i].Name, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	createGPUTemplate(b, c.Client, "gpu-whole", 1, 0)
	createGPUTemplate(b, c.Client, "gpu-share", 1, 500)
}

// deletePods deletes every pod of the default namespace and waits until
// none is left, the nodes empty again for the next profile; with claims,
// then every ResourceClaim too, their devices free again. The API
// server, loaded, may fail or time out the DeleteCollection of 10,000 pods
// and go on deleting: the request is made again when a minute passes with
// pods left, for up to 15 minutes.
func deletePods(b *testing.B, c *kube.Cluster, claims bool) {
	pods := c.Client.CoreV1().Pods("default")
	zero := int64(0)
	deleteAll(b, "pods", func(ctx context.Context) error {
		return pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	}, func(ctx context.Context) (int, error) {
		l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	})
	if !claims {
		return
	}
	rc := c.Client.ResourceV1().ResourceClaims("default")
	deleteAll(b, "claims", func(ctx context.Context) error {
		return rc.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}, func(ctx context.Context) (int, error) {
		l, err := rc.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	})
}

// deleteAll calls del, then polls left once a second until it returns 0,
// calling del again each minute, for up to 15 minutes; what names the
// objects in the error.
func deleteAll(b *testing.B, what string, del func(context.Context) error, left func(context.Context) (int, error)) {
	ctx := b.Context()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last error
	for polls := 0; polls < 15*60; polls++ {
		if polls%60 == 0 {
			last = del(ctx)
		}
		k, err := left(ctx)
		if err == nil && k == 0 {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		case <-tick.C:
		}
	}
	b.Fatalf("%s left after 15 minutes of deletes: %v", what, last)
}

// waitClaims waits until n ResourceClaims exist in the default namespace
// (the resourceclaim controller's, one a pod), for up to 15 minutes.
func waitClaims(b *testing.B, c *kube.Cluster, n int) {
	rc := c.Client.ResourceV1().ResourceClaims("default")
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	k := 0
	for range 15 * 30 {
		l, err := rc.List(b.Context(), metav1.ListOptions{Limit: 1})
		if err == nil {
			k = len(l.Items)
			if l.RemainingItemCount != nil {
				k += int(*l.RemainingItemCount)
			}
			if k >= n {
				return
			}
		}
		select {
		case <-b.Context().Done():
			b.Fatal(b.Context().Err())
		case <-tick.C:
		}
	}
	b.Fatalf("%d of %d ResourceClaims made after 15 minutes", k, n)
}

// throughput is one run's figures.
type throughput struct {
	podsPerSec float64
	peakRSSMiB float64 // scheduler's VmHWM
	heapMiB    float64 // scheduler's heap in use after a collection, once all are bound
	// cpuMsPerPod is the scheduler's CPU time (user and system) from its
	// first binding to its last, per pod after the first, in ms.
	cpuMsPerPod float64
}

// runThroughput creates the pods on c (the nodes named by nodes, e.g.
// "nodes=1000"), starts the scheduler and returns pods/s from its first
// binding to its last, its CPU time and its memory. With claims the pods
// ask through publishThroughputDRA's templates, and the scheduler starts
// once every pod's claim exists.
func runThroughput(b *testing.B, c *kube.Cluster, nodes string, profile string, n int, claims bool) throughput {
	ctx := b.Context()
	schedulerName := profile
	if strings.HasPrefix(profile, "gpuplane") {
		schedulerName = "gpuplane"
	}

	// Pod names carry the profile: a DeleteCollection of the last
	// profile's pods that the API server still runs deletes them by name.
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				spec := podSpec{name: fmt.Sprintf("%s-%05d", profile, i), cpu: "1", mem: "2Gi", scheduler: schedulerName}
				var pod *v1.Pod
				switch {
				case claims && i%2 == 0:
					pod = makeClaimPod(spec, "gpu-whole")
				case claims:
					pod = makeClaimPod(spec, "gpu-share")
				case i%2 == 0:
					spec.gpus = 1
					pod = makePod(spec)
				default:
					spec.milli = 500
					pod = makePod(spec)
				}
				if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	if claims {
		waitClaims(b, c, n)
	}

	// An informer notes when each pod is first seen bound; it re-lists when
	// the apiserver closes its watch, which a plain watch would not
	// survive.
	var mu sync.Mutex
	var first, last time.Time
	seen := map[string]bool{}
	done := make(chan struct{})
	started := make(chan struct{})
	note := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[p.Name] {
			now := time.Now()
			if len(seen) == 0 {
				first = now
				close(started)
			}
			last = now
			seen[p.Name] = true
			if len(seen) == n {
				close(done)
			}
		}
	}
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace("default"))
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }}); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	f.WaitForCacheSync(stop)

	b.ResetTimer()
	args := policyArgs("fgd", "random")
	if profile == "gpuplane-every-node" || profile == "gpuplane-adaptive" {
		args["candidates"] = 0
	}
	port := freePort(b)
	s := startSchedulerFlags(b, c, args, func(conf map[string]any) {
		if profile == "gpuplane-adaptive" {
			delete(conf["profiles"].([]any)[0].(map[string]any), "percentageOfNodesToScore")
		}
	}, "--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*")
	var cpuAtFirst float64
	profiled := make(chan struct{})
	go func() {
		defer close(profiled)
		select {
		case <-started:
			cpuAtFirst = cpuSeconds(b, s.cmd.Process.Pid)
		case <-s.exited:
			return
		}
		if dir := os.Getenv("GPUPLANE_THROUGHPUT_PPROF"); dir != "" {
			saveCPUProfile(b, port, filepath.Join(dir, fmt.Sprintf("%s-profile=%s.pprof", nodes, profile)))
		}
	}()
	select {
	case <-done:
	case <-s.exited:
		b.Fatal("scheduler exited")
	case <-time.After(30 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		b.Fatalf("%d of %d pods bound after 30 minutes", len(seen), n)
	}
	b.StopTimer()
	cpuAtDone := cpuSeconds(b, s.cmd.Process.Pid)
	<-profiled
	r := throughput{peakRSSMiB: peakRSSMiB(b, s.cmd.Process.Pid), cpuMsPerPod: (cpuAtDone - cpuAtFirst) * 1000 / float64(n-1)}
	// The heap profile's gc=1 collects first: the heap in use after it is
	// what the scheduler keeps, not the garbage of the last cycles.
	heap, err := debugGet(port, "/debug/pprof/heap?gc=1")
	if err != nil {
		b.Fatalf("heap profile: %v", err)
	}
	if dir := os.Getenv("GPUPLANE_THROUGHPUT_PPROF"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("heap-%s-profile=%s.pprof", nodes, profile)), heap, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if v, err := strconv.ParseFloat(scrape(b, port, "go_memstats_heap_inuse_bytes"), 64); err == nil {
		r.heapMiB = v / (1 << 20)
	}
	mu.Lock()
	defer mu.Unlock()
	r.podsPerSec = float64(n-1) / last.Sub(first).Seconds()
	return r
}

// saveCPUProfile saves a 20 s CPU profile of the scheduler (its
// /debug/pprof/profile) to file.
func saveCPUProfile(b *testing.B, port int, file string) {
	body, err := debugGet(port, "/debug/pprof/profile?seconds=20")
	if err == nil {
		err = os.WriteFile(file, body, 0o644)
	}
	if err != nil {
		b.Errorf("CPU profile: %v", err)
	}
}

// debugGet returns the body of a GET of path on the scheduler's secure
// port (self-signed serving certificate).
func debugGet(port int, path string) ([]byte, error) {
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get("https://127.0.0.1:" + strconv.Itoa(port) + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s: %.300s", path, resp.Status, body)
	}
	return body, err
}

// cpuSeconds returns a process's CPU time so far, user and system
// (utime and stime of /proc/PID/stat, in clock ticks of 1/100 s, Linux's
// USER_HZ).
func cpuSeconds(b *testing.B, pid int) float64 {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(st), ')')
	f := strings.Fields(string(st)[i+1:])
	if i < 0 || len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, st)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, st)
	}
	return (utime + stime) / 100
}

// peakRSSMiB returns a process's peak resident set size (VmHWM of
// /proc/PID/status) in MiB.
func peakRSSMiB(b *testing.B, pid int) float64 {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
