// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestInvalidRequestsParked is the finding at a test's size: 200 pods
// whose GPU request the scheduler can never honour (gpu-milli 0 or 5000,
// whole GPUs with a share, an unknown model, one of them in a 250 KiB
// annotation) are created first, then 50 valid pods, with the real
// scheduler running on the shipped profile. Every valid pod binds; no
// invalid pod is ever attempted (scheduler_schedule_attempts_total counts
// the valid pods' cycles only, and no invalid pod has a PodScheduled
// condition or a FailedScheduling event); each has exactly one
// InvalidGPURequest event, with a note of at most 1 KiB; kube-scheduler
// counts them as gated. Two are then fixed by an annotation patch and bind.
// On the code before PreEnqueue the invalid pods took cycles and got no
// InvalidGPURequest event: this test failed there.
func TestInvalidRequestsParked(t *testing.T) {
	const invalid, valid = 200, 50
	var nodes []kube.Node
	for i := range 4 {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("n%d", i), CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 8, Model: "T4"})
	}
	c := startCluster(t, nodes)
	port := freePort(t)
	s := startSchedulerFlags(t, c, policyArgs("fgd", "random"), nil,
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
	ctx := t.Context()
	huge := strings.Repeat("A", 250<<10)

	specs := make([]podSpec, 0, invalid+valid)
	for i := range invalid {
		sp := podSpec{cpu: "100m", mem: "256Mi"}
		switch {
		case i == 0:
			sp.name, sp.gpus, sp.model = "bad-huge-model", 1, huge
		case i == 1:
			sp.name, sp.gpus, sp.model = "bad-b300", 1, "B300"
		case i%3 == 0:
			sp.name, sp.milli = fmt.Sprintf("zero-%03d", i), 0
		case i%3 == 1:
			sp.name, sp.milli = fmt.Sprintf("bad-5000-%03d", i), 5000
		default:
			sp.name, sp.gpus, sp.milli = fmt.Sprintf("bad-both-%03d", i), 2, 500
		}
		specs = append(specs, sp)
	}
	createAll(t, c, specs)
	specs = specs[:0]
	for i := range valid {
		specs = append(specs, podSpec{name: fmt.Sprintf("ok-%03d", i), cpu: "100m", mem: "256Mi", milli: 500})
	}
	createAll(t, c, specs)

	waitFor(t, s, "the valid pods bound", func() (bool, error) {
		return countBound(t, c, "ok-") == valid, nil
	})
	// Up to a minute for the events to arrive (not fatal, so that the
	// checks below say what went wrong), then time for a second event of
	// a pod to show: it would follow the first at once, the events library
	// making the two a series.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		evs, err := c.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + scheduler.ReasonInvalidGPURequest})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs.Items) >= invalid {
			break
		}
	}
	time.Sleep(2 * time.Second)

	evs, err := c.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parked, failed := map[string]int{}, map[string]int{}
	for _, e := range evs.Items {
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		switch e.Reason {
		case scheduler.ReasonInvalidGPURequest:
			parked[e.Regarding.Name] += n
			if len(e.Note) > 1024 {
				t.Errorf("pod %s: event note of %d bytes", e.Regarding.Name, len(e.Note))
			}
			if e.Regarding.Name == "bad-huge-model" && !strings.Contains(e.Note, "(256000 bytes)") {
				t.Errorf("pod bad-huge-model: note %.300q, want the model quoted short with its length", e.Note)
			}
		case "FailedScheduling":
			failed[e.Regarding.Name] += n
		}
	}
	pods, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Each check counts the pods that fail it and names the first.
	bad := map[string]int{}
	first := map[string]string{}
	fail := func(check, example string) {
		if bad[check]++; bad[check] == 1 {
			first[check] = example
		}
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "ok-") {
			if parked[p.Name] != 0 {
				fail("valid pods with an InvalidGPURequest event", p.Name)
			}
			continue
		}
		if parked[p.Name] != 1 {
			fail("invalid pods without exactly one InvalidGPURequest event", fmt.Sprintf("%s: %d", p.Name, parked[p.Name]))
		}
		if failed[p.Name] != 0 {
			fail("invalid pods with FailedScheduling events (scheduling cycles)", fmt.Sprintf("%s: %d", p.Name, failed[p.Name]))
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == v1.PodScheduled {
				fail("invalid pods with a PodScheduled condition (a scheduling cycle)", fmt.Sprintf("%s: %s %.200q", p.Name, cond.Reason, cond.Message))
			}
		}
		if p.Spec.NodeName != "" {
			fail("invalid pods bound", p.Name+" on "+p.Spec.NodeName)
		}
	}
	for check, n := range bad {
		t.Errorf("%d %s, e.g. %s", n, check, first[check])
	}
	m := scrapeAll(t, port)
	if got := m.sum("scheduler_schedule_attempts_total", `profile="gpuplane"`); got != valid {
		t.Errorf("scheduler_schedule_attempts_total of profile gpuplane %v, want %d (the valid pods only)", got, valid)
	}
	if got := m.sum("scheduler_pending_pods", `queue="gated"`); got != invalid {
		t.Errorf("scheduler_pending_pods{queue=\"gated\"} %v, want %d", got, invalid)
	}

	// Fixed by the user, a parked pod is scheduled.
	for _, name := range []string{"bad-b300", "bad-huge-model"} {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"T4"}}}`, gpuresource.AnnotationGPUModel)
		if _, err := c.Client.CoreV1().Pods("default").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, s, name+" bound once fixed", bound(c.Client, name))
	}
}

// createAll creates the pods with 4 clients at once, in about their order.
func createAll(t *testing.T, c *kube.Cluster, specs []podSpec) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(specs) {
					return
				}
				if _, err := c.Client.CoreV1().Pods("default").Create(t.Context(), makePod(specs[i]), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// countBound counts the bound pods whose names start with prefix.
func countBound(t *testing.T, c *kube.Cluster, prefix string) int {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// metricsText is a /metrics page.
type metricsText string

// sum adds the values of the series of metric name whose labels contain
// label (e.g. `profile="gpuplane"`).
func (m metricsText) sum(name, label string) float64 {
	var total float64
	for line := range strings.SplitSeq(string(m), "\n") {
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !strings.Contains(labels, label) {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			total += v
		}
	}
	return total
}

// scrapeAll returns the scheduler's /metrics page.
func scrapeAll(t *testing.T, port int) metricsText {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get("https://127.0.0.1:" + strconv.Itoa(port) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %v %s", err, resp.Status)
	}
	return metricsText(b)
}
