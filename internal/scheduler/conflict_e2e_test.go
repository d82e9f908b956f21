// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	apimetrics "github.com/gpuplane/gpuplane/api/metrics"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestAnnotationConflict reproduces the finding: pod a is bound to GPU 0
// of an 8-GPU node, then its gpuplane.io/gpus annotation is patched to 7
// (by the admin, whom no admission policy stops here). Before the fix the
// scheduler rebuilt GPU 0 as free from the annotation and gave it to the
// next 1-GPU pod while a still ran on it. Now it keeps its own record
// (GPU 0) and holds the claim (GPU 7) too: best-fit with tie-break first
// on the seven GPUs left gives the next pod GPU 1; the pod gets a Warning
// event and gpuplane_scheduler_gpu_annotation_conflicts_total counts 1.
func TestAnnotationConflict(t *testing.T) {
	c := startCluster(t, []kube.Node{{Name: "n0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 8, Model: "V100M16"}})
	port := freePort(t)
	s := startSchedulerFlags(t, c, policyArgs("bestfit", "first"), nil,
		"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
	ctx := t.Context()
	createPod(t, c.Client, podSpec{name: "a", cpu: "1", mem: "1Gi", gpus: 1})
	waitFor(t, s, "pod a bound", bound(c.Client, "a"))
	if g := gpusOf(t, c, "a"); g != "0" {
		t.Fatalf("pod a on GPUs %q, want 0 (best-fit, first, on an empty node)", g)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"7"}}}`, gpuresource.AnnotationGPUs)
	if _, err := c.Client.CoreV1().Pods("default").Patch(ctx, "a", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, c.Client, podSpec{name: "b", cpu: "1", mem: "1Gi", gpus: 1})
	waitFor(t, s, "pod b bound", bound(c.Client, "b"))
	if g := gpusOf(t, c, "b"); g == "0" || g == "7" {
		t.Errorf("pod b on GPU %s: handed out again (a was bound to 0 and claims 7)", g)
	} else if g != "1" {
		t.Errorf("pod b on GPUs %q, want 1 (best-fit, first, with 0 and 7 held)", g)
	}
	var note string
	waitFor(t, s, "a conflict event on pod a", func() (bool, error) {
		evs, err := c.Client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == scheduler.ReasonGPUAnnotationConflict && e.Regarding.Name == "a" {
				note = e.Note
				return true, nil
			}
		}
		return false, nil
	})
	if want := "gpuplane.io/gpus=7 disagrees with the GPUs gpuplane-scheduler bound the pod to (0)"; !strings.Contains(note, want) {
		t.Errorf("event %q, want it to contain %q", note, want)
	}
	if got := scrape(t, port, apimetrics.SchedulerGPUAnnotationConflicts); got != "1" {
		t.Errorf("gpuplane_scheduler_gpu_annotation_conflicts_total %q, want 1", got)
	}
}

func gpusOf(t *testing.T, c *kube.Cluster, name string) string {
	t.Helper()
	p, err := c.Client.CoreV1().Pods("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Annotations[gpuresource.AnnotationGPUs]
}

// freePort asks the kernel for a free loopback port for the scheduler's
// --secure-port (released before the scheduler binds it).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scrape returns the value of an unlabelled series on the scheduler's
// /metrics (self-signed serving certificate), or "" when absent.
func scrape(t testing.TB, port int, name string) string {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get("https://127.0.0.1:" + strconv.Itoa(port) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %v %s\n%.500s", err, resp.Status, b)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}
