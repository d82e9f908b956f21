// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"fmt"
	"os"
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

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// BenchmarkInvalidFlood measures the finding that PreEnqueue fixes: with
// gpuplane-scheduler running on the shipped profile and client settings
// (kube-scheduler's default 50 requests/s, 100 burst), N pods with invalid
// GPU requests (gpu-milli 0, gpu-milli 5000, whole GPUs with a share, in
// turn) are created as fast as 8 clients can, then M valid pods of 500
// milli-GPU; it reports how long the valid pods waited: from the first
// valid pod's creation to the last one's binding (s-valid-bound), and the
// median and largest wait of one pod (s-wait-p50, s-wait-max), as an
// informer sees the bindings, and how long the invalid pods took to
// create (s-create-invalid). Sub-benchmarks invalid=0 and invalid=N.
// Opt-in: GPUPLANE_FLOOD=NxM (e.g. 2000x100); 20 nodes of 8 T4.
// hack/bench-invalid-flood.sh runs it on this tree and on a base commit.
// Everything shares the machine: figures, not assertions.
func BenchmarkInvalidFlood(b *testing.B) {
	spec := os.Getenv("GPUPLANE_FLOOD")
	if spec == "" {
		b.Skip("opt-in: GPUPLANE_FLOOD=2000x100 (invalid x valid pods)")
	}
	ns, ms, ok := strings.Cut(spec, "x")
	n, err1 := strconv.Atoi(ns)
	m, err2 := strconv.Atoi(ms)
	if !ok || err1 != nil || err2 != nil || n < 0 || m < 1 {
		b.Fatalf("GPUPLANE_FLOOD=%q: want NxM, e.g. 2000x100", spec)
	}
	for _, invalid := range []int{0, n} {
		b.Run(fmt.Sprintf("invalid=%d/valid=%d", invalid, m), func(b *testing.B) {
			for range b.N {
				runFlood(b, invalid, m)
			}
		})
	}
}

func runFlood(b *testing.B, invalid, valid int) {
	var nodes []kube.Node
	for i := range 20 {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("node-%02d", i), CPUMilli: 64000, MemoryMiB: 256 << 10, GPUs: 8, Model: "T4"})
	}
	c := startCluster(b, nodes)
	ctx := b.Context()

	var mu sync.Mutex
	created, boundAt := map[string]time.Time{}, map[string]time.Time{}
	done := make(chan struct{})
	note := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" || !strings.HasPrefix(p.Name, "ok-") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, seen := boundAt[p.Name]; !seen {
			boundAt[p.Name] = time.Now()
			if len(boundAt) == valid {
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

	// The shipped client settings: kube-scheduler's defaults.
	s := startSchedulerWith(b, c, policyArgs("fgd", "random"), func(conf map[string]any) {
		conf["clientConnection"] = map[string]any{"kubeconfig": c.Kubeconfig}
	})
	// A first pod bound: the scheduler is up.
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, makePod(podSpec{name: "warm", cpu: "100m", mem: "256Mi", gpus: 1}), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	waitFor(b, s, "the first pod bound", bound(c.Client, "warm"))

	create := func(specs []podSpec) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(specs) {
						return
					}
					t := time.Now()
					if _, err := c.Client.CoreV1().Pods("default").Create(ctx, makePod(specs[i]), metav1.CreateOptions{}); err != nil {
						errs <- err
						return
					}
					mu.Lock()
					created[specs[i].name] = t
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
	}
	var bad []podSpec
	for i := range invalid {
		sp := podSpec{cpu: "100m", mem: "256Mi"}
		switch i % 3 {
		case 0:
			sp.name, sp.milli = fmt.Sprintf("zero-%05d", i), 0
		case 1:
			sp.name, sp.milli = fmt.Sprintf("bad-5000-%05d", i), 5000
		default:
			sp.name, sp.gpus, sp.milli = fmt.Sprintf("bad-both-%05d", i), 2, 500
		}
		bad = append(bad, sp)
	}
	t0 := time.Now()
	create(bad)
	createInvalid := time.Since(t0)
	var good []podSpec
	for i := range valid {
		good = append(good, podSpec{name: fmt.Sprintf("ok-%05d", i), cpu: "100m", mem: "256Mi", milli: 500})
	}
	t1 := time.Now()
	create(good)
	select {
	case <-done:
	case <-s.exited:
		b.Fatal("scheduler exited")
	case <-time.After(10 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		b.Fatalf("%d of %d valid pods bound after 10 minutes", len(boundAt), valid)
	}
	mu.Lock()
	defer mu.Unlock()
	var last time.Time
	waits := make([]float64, 0, valid)
	for name, at := range boundAt {
		if at.After(last) {
			last = at
		}
		waits = append(waits, at.Sub(created[name]).Seconds())
	}
	slices.Sort(waits)
	b.ReportMetric(createInvalid.Seconds(), "s-create-invalid")
	b.ReportMetric(last.Sub(t1).Seconds(), "s-valid-bound")
	b.ReportMetric(waits[len(waits)/2], "s-wait-p50")
	b.ReportMetric(waits[len(waits)-1], "s-wait-max")
}
