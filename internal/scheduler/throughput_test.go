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

	"github.com/gpuplane/gpuplane/internal/gpu"
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
// first binding to its last), its peak RSS (VmHWM), its Go heap in use
// once every pod is bound, after a collection (go_memstats_heap_inuse_bytes
// of its /metrics after /debug/pprof/heap?gc=1), in MiB, and pod start-up
// latency, creation to Running as kwok sets it (throughput.startup). With
// GPUPLANE_THROUGHPUT_PPROF=DIR it also saves a 20 s CPU profile of the
// scheduler, taken from its first binding, to DIR/nodes=N-profile=P.pprof,
// and its heap profile once every pod is bound to
// DIR/heap-nodes=N-profile=P.pprof.
//
// With GPUPLANE_THROUGHPUT_API=dra the nodes have no nvidia.com/gpu: each
// publishes its 8 GPUs as gpuplane's DRA driver does, three in four V100s
// with shares, one in four MIG-mode A100-80GBs with every MIG placement
// (publishThroughputDRA), the chart's DeviceClasses are installed, and
// the pods ask through ResourceClaimTemplates: a quarter one whole GPU,
// half a share of 500 milliGPU and 1Mi (class gpu.nvidia.com), a quarter
// one MIG instance of a profile (class mig.nvidia.com, draTemplate),
// their claims made by kube-controller-manager's resourceclaim
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
						b.Logf("%s start-up (creation to Running, s): p50 %.0f, p90 %.0f, p99 %.0f, max %.0f; from the scheduler's start: p50 %.0f, p90 %.0f, p99 %.0f, max %.0f",
							profile, r.startup.p50, r.startup.p90, r.startup.p99, r.startup.max, r.fromStart.p50, r.fromStart.p90, r.fromStart.p99, r.fromStart.max)
						b.ReportMetric(r.podsPerSec, "pods/s")
						b.ReportMetric(r.peakRSSMiB, "MiB-peak-RSS")
						b.ReportMetric(r.heapMiB, "MiB-heap")
						b.ReportMetric(r.cpuMsPerPod, "ms-CPU/pod")
						b.ReportMetric(r.startup.p50, "s-startup-p50")
						b.ReportMetric(r.startup.p99, "s-startup-p99")
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

// publishThroughputDRA installs the chart's DeviceClasses and publishes
// each node's GPUs as gpuplane's DRA driver does: every fourth node
// (index 3, 7, ...) 8 MIG-mode A100-80GB with every MIG placement
// (dra.Build with MIG: shared counters, as TestSimAgreementDRAMIG's
// nodes), the others 8 V100M16 (dra.Build with Shares). It creates the
// ResourceClaimTemplates that draTemplate names: "gpu-whole" (one whole
// GPU), "gpu-share" (500 milliGPU and 1Mi of one) and "mig-<profile>"
// (createMIGTemplate) for each profile of migPods.
func publishThroughputDRA(b *testing.B, c *kube.Cluster, nodes []kube.Node) {
	installClasses(b, c.Client)
	v100, err := dra.Build(draGPUs(8, "V100M16", 16<<10), dra.Options{Shares: true})
	if err != nil {
		b.Fatal(err)
	}
	a100, err := dra.Build(migGPUs(8), dra.Options{MIG: true})
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(nodes); i = int(next.Add(1)) - 1 {
				r := v100
				if i%4 == 3 {
					r = a100
				}
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
	for _, k := range migPods {
		createMIGTemplate(b, c, gpu.MIGProfiles("A100-80GB")[k].Name)
	}
}

// draTemplate is the ResourceClaimTemplate of the DRA benchmark's pod i:
// a quarter one whole GPU (i%4 == 0), half a share (i%4 == 1 or 2) and a
// quarter one MIG instance made on demand (i%4 == 3), of migPods'
// profiles in turn (1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb).
// 10,000 pods fit 1,000 nodes of publishThroughputDRA: the whole and
// shared pods ask 2,500 + 5,000/2 = 5,000 of the 750 V100 nodes' 6,000
// GPUs; the MIG pods, 417 of each profile, 417 * (1+2+2+4+4+8) memory
// slices of 8 a GPU, 1,095 of the 250 A100 nodes' 2,000 GPUs, the rest
// room for the slices that fixed placements leave unusable.
func draTemplate(i int) string {
	switch i % 4 {
	case 0:
		return "gpu-whole"
	case 3:
		return "mig-" + gpu.MIGProfiles("A100-80GB")[migPods[i/4%len(migPods)]].Name
	default:
		return "gpu-share"
	}
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
	// startup is pod start-up latency: each pod's status.startTime (set
	// by kwok's pod-ready stage, stages.yaml, with phase Running and the
	// same time as the Ready condition's lastTransitionTime) less its
	// creationTimestamp, both in whole seconds. The pods are all created
	// before the scheduler starts, so it holds their wait for it;
	// fromStart is startTime less the time the scheduler was started.
	startup, fromStart latency
}

// latency is a distribution's nearest-rank percentiles and maximum, in s.
type latency struct{ p50, p90, p99, max float64 }

// percentiles returns the nearest-rank p50, p90 and p99 of d (the
// ceil(p/100 * len(d))-th smallest, in integers) and its maximum; it
// sorts d. Empty d: zero.
func percentiles(d []float64) latency {
	if len(d) == 0 {
		return latency{}
	}
	slices.Sort(d)
	rank := func(p int) float64 { return d[(p*len(d)+99)/100-1] }
	return latency{p50: rank(50), p90: rank(90), p99: rank(99), max: d[len(d)-1]}
}

// TestPercentiles checks nearest ranks worked by hand: of 1..10 the
// ceil(5) = 5th, ceil(9) = 9th and ceil(9.9) = 10th smallest; of 3 values
// the ceil(1.5) = 2nd, ceil(2.7) = 3rd and ceil(2.97) = 3rd.
func TestPercentiles(t *testing.T) {
	for _, c := range []struct {
		d    []float64
		want latency
	}{
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, latency{p50: 5, p90: 9, p99: 10, max: 10}},
		{[]float64{30, 10, 20}, latency{p50: 20, p90: 30, p99: 30, max: 30}},
		{nil, latency{}},
	} {
		if got := percentiles(c.d); got != c.want {
			t.Errorf("percentiles of %v: %+v, want %+v", c.d, got, c.want)
		}
	}
}

// waitRunning waits until the n pods of profile (named "<profile>-...")
// are Running, listing them every 2 s for up to 10 minutes, and returns
// their start-up latencies (throughput.startup, .fromStart) with
// started the scheduler's start (truncated to whole seconds as the
// pods' times are). It logs the pods whose Ready condition
// changed at another time than their startTime (kwok sets both from one
// time: none expected).
func waitRunning(b *testing.B, c *kube.Cluster, profile string, n int, started time.Time) (startup, fromStart latency) {
	var running []v1.Pod
	for range 10 * 30 {
		l, err := c.Client.CoreV1().Pods("default").List(b.Context(), metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		running = running[:0]
		for _, p := range l.Items {
			if strings.HasPrefix(p.Name, profile+"-") && p.Status.Phase == v1.PodRunning && p.Status.StartTime != nil {
				running = append(running, p)
			}
		}
		if len(running) >= n {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if len(running) < n {
		b.Fatalf("%d of %d pods Running after 10 minutes", len(running), n)
	}
	var fromCreation, fromSched []float64
	differ := 0
	for _, p := range running {
		at := p.Status.StartTime.Time
		for _, cond := range p.Status.Conditions {
			if cond.Type == v1.PodReady && !cond.LastTransitionTime.Equal(p.Status.StartTime) {
				differ++
			}
		}
		fromCreation = append(fromCreation, at.Sub(p.CreationTimestamp.Time).Seconds())
		fromSched = append(fromSched, at.Sub(started.Truncate(time.Second)).Seconds())
	}
	if differ > 0 {
		b.Logf("%s: %d of %d pods Ready at another time than their startTime", profile, differ, n)
	}
	return percentiles(fromCreation), percentiles(fromSched)
}

// runThroughput creates the pods on c (the nodes named by nodes, e.g.
// "nodes=1000"), starts the scheduler and returns pods/s from its first
// binding to its last, its CPU time and its memory. With claims the pods
// ask through publishThroughputDRA's templates, and the scheduler starts
// once every pod's claim exists.
func runThroughput(b *testing.B, c *kube.Cluster, nodes string, profile string, n int, claims bool) throughput {
	ctx := b.Context()
	binary(b) // built before the pods' creation: not in their start-up
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
				case claims:
					pod = makeClaimPod(spec, draTemplate(i))
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
	schedStart := time.Now()
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
	r.startup, r.fromStart = waitRunning(b, c, profile, n, schedStart)
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
