// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"fmt"
	"os"
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

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// BenchmarkThroughput measures scheduling throughput in the style of
// kube-scheduler's scheduler_perf: on a fresh control plane with kwok
// nodes of 8 V100 GPUs each, 10,000 GPU pods (half of one whole GPU, half
// of 500 milli-GPU) are created first, then the scheduler starts, and
// pods/s is counted from the first binding to the last. Three profiles of
// the same binary:
//   - gpuplane: deploy/scheduler/config.yaml (fgd, every feasible node
//     scored);
//   - gpuplane-adaptive: the same with kube-scheduler's adaptive
//     percentageOfNodesToScore, to separate the plugin's cost from that
//     choice;
//   - default-scheduler: kube-scheduler's default profile.
//
// One iteration takes minutes: run with -benchtime 1x.
// GPUPLANE_THROUGHPUT sets the node counts (default "1000,5000") and
// GPUPLANE_THROUGHPUT_PODS the pods (default 10000).
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
	for _, n := range counts {
		for _, profile := range []string{"gpuplane", "gpuplane-adaptive", "default-scheduler"} {
			b.Run(fmt.Sprintf("nodes=%d/profile=%s", n, profile), func(b *testing.B) {
				for range b.N {
					b.ReportMetric(runThroughput(b, n, profile, pods), "pods/s")
				}
			})
		}
	}
}

// runThroughput creates the cluster and the pods, starts the scheduler and
// returns pods/s from its first binding to its last.
func runThroughput(b *testing.B, nodes int, profile string, n int) float64 {
	var ns []kube.Node
	for i := range nodes {
		ns = append(ns, kube.Node{Name: fmt.Sprintf("node-%05d", i), CPUMilli: 96000, MemoryMiB: 512 << 10, GPUs: 8, Model: "V100M16"})
	}
	c := startCluster(b, ns)
	ctx := b.Context()
	schedulerName := profile
	if profile == "gpuplane-adaptive" {
		schedulerName = "gpuplane"
	}

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
				spec := podSpec{name: fmt.Sprintf("p-%05d", i), cpu: "1", mem: "2Gi", scheduler: schedulerName}
				if i%2 == 0 {
					spec.gpus = 1
				} else {
					spec.milli = 500
				}
				if _, err := c.Client.CoreV1().Pods("default").Create(ctx, makePod(spec), metav1.CreateOptions{}); err != nil {
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

	// An informer notes when each pod is first seen bound; it re-lists when
	// the apiserver closes its watch, which a plain watch would not
	// survive.
	var mu sync.Mutex
	var first, last time.Time
	seen := map[string]bool{}
	done := make(chan struct{})
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
	s := startSchedulerWith(b, c, policyArgs("fgd", "random"), func(conf map[string]any) {
		if profile == "gpuplane-adaptive" {
			delete(conf["profiles"].([]any)[0].(map[string]any), "percentageOfNodesToScore")
		}
	})
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
	mu.Lock()
	defer mu.Unlock()
	return float64(n-1) / last.Sub(first).Seconds()
}
