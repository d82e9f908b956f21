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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// BenchmarkThroughput measures scheduling throughput in the style of
// kube-scheduler's scheduler_perf: kwok nodes with 8 V100 GPUs each, 10,000
// GPU pods (half of one whole GPU, half of 500 milli-GPU) created at once,
// pods/s from the first creation to the last binding, for the gpuplane
// profile (fgd, all nodes scored) and for kube-scheduler's default profile
// in the same binary. One iteration takes minutes: run with -benchtime 1x.
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
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var nodes []kube.Node
			for i := range n {
				nodes = append(nodes, kube.Node{Name: fmt.Sprintf("node-%05d", i), CPUMilli: 96000, MemoryMiB: 512 << 10, GPUs: 8, Model: "V100M16"})
			}
			c := startCluster(b, nodes)
			s := startScheduler(b, c, policyArgs("fgd", "random"))
			for _, profile := range []string{"gpuplane", "default-scheduler"} {
				b.Run("profile="+profile, func(b *testing.B) {
					for range b.N {
						rate := runThroughput(b, c, s, profile, pods)
						b.ReportMetric(rate, "pods/s")
					}
				})
			}
		})
	}
}

// runThroughput creates pods for profile from 8 goroutines, waits until
// all are bound, reports pods/s, then deletes them.
func runThroughput(b *testing.B, c *kube.Cluster, s *schedulerProc, profile string, n int) float64 {
	ctx := b.Context()
	w, err := c.Client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermNotEqualSelector("spec.nodeName", "").String()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
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
				spec := podSpec{name: fmt.Sprintf("%s-%05d", profile[:3], i), cpu: "1", mem: "2Gi", scheduler: profile}
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
	seen := map[string]bool{}
	timeout := time.After(30 * time.Minute)
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				b.Fatal("watch closed")
			}
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				if p, ok := ev.Object.(*v1.Pod); ok && p.Spec.NodeName != "" {
					seen[p.Name] = true
				}
			}
		case err := <-errs:
			b.Fatal(err)
		case <-s.exited:
			b.Fatal("scheduler exited")
		case <-timeout:
			b.Fatalf("%d of %d pods bound after 30 minutes", len(seen), n)
		}
	}
	elapsed := time.Since(start)
	wg.Wait()
	zero := int64(0)
	if err := c.Client.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	waitFor(b, s, "pods deleted", func() (bool, error) {
		l, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(l.Items) == 0, err
	})
	return float64(n) / elapsed.Seconds()
}
