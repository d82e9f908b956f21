// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// noteLimit is the most bytes of an events.k8s.io/v1 Event's note that
// kube-apiserver accepts; a longer note loses the event.
const noteLimit = 1024

// drain returns the events recorded so far.
func drain(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// PreEnqueue: a valid pod passes; each refused request parks the pod
// UnschedulableAndUnresolvable with a message written out here by hand,
// and one event, however often the queue asks again.
func TestPreEnqueue(t *testing.T) {
	pl := newTestPlugin(t, "fgd", "random")
	rec := events.NewFakeRecorder(100)
	pl.events = rec
	huge := strings.Repeat("A", 250<<10)
	known := strings.Join(catalog.Names(), ", ")
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // "": passes
	}{
		{"no GPU", newPod("a", "1", "1Gi"), ""},
		{"one GPU", newPod("a", "1", "1Gi", withGPUs(1)), ""},
		{"a share of 300", newPod("a", "1", "1Gi", withMilli(300)), ""},
		{"a model", newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, "T4|V100M16")), ""},
		{"share of 0", newPod("a", "1", "1Gi", withMilli(0)),
			"gpuplane.io/gpu-milli 0 out of range 1..1000 (a share of one GPU; use nvidia.com/gpu for more)"},
		{"share of 5000", newPod("a", "1", "1Gi", withMilli(5000)),
			"gpuplane.io/gpu-milli 5000 out of range 1..1000 (a share of one GPU; use nvidia.com/gpu for more)"},
		{"whole GPUs and a share", newPod("a", "1", "1Gi", withGPUs(2), withMilli(500)),
			"gpuplane.io/gpu-milli applies to one GPU, but nvidia.com/gpu is 2: ask for whole GPUs or a share, not both"},
		{"unknown model", newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, "T4|B300")),
			`annotation gpuplane.io/gpu-model: unknown GPU model "B300" (known: ` + known + ")"},
		{"a 250 KiB model", newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, huge)),
			`annotation gpuplane.io/gpu-model: unknown GPU model "` + strings.Repeat("A", 40) + `"… (256000 bytes) (known: ` + known + ")"},
		{"a 250 KiB model without GPUs", newPod("a", "1", "1Gi", withAnnotation(gpuresource.AnnotationGPUModel, huge)),
			`annotation gpuplane.io/gpu-model="` + strings.Repeat("A", 40) + `"… (256000 bytes) on a pod that asks for no GPU`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.pod.UID = types.UID("uid-" + tc.name)
			var st *fwk.Status
			for range 3 { // the queue calls PreEnqueue again on events
				st = pl.PreEnqueue(context.Background(), tc.pod)
			}
			evs := drain(rec)
			if tc.want == "" {
				if !st.IsSuccess() || len(evs) != 0 {
					t.Errorf("got %v and events %q, want success and none", st, evs)
				}
				return
			}
			if st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != tc.want {
				t.Errorf("got %v %q\nwant UnschedulableAndUnresolvable %q", st.Code(), st.Message(), tc.want)
			}
			want := "Warning " + ReasonInvalidGPURequest + " not scheduled until its GPU request is fixed: " + tc.want
			if len(evs) != 1 || evs[0] != want {
				t.Errorf("events %q, want one: %q", evs, want)
			}
			if n := len(want) - len("Warning "+ReasonInvalidGPURequest+" "); n > noteLimit {
				t.Errorf("event note of %d bytes, above the API's %d", n, noteLimit)
			}
			// Found valid, the pod leaves the parked set; made invalid again,
			// it is reported again.
			if st := pl.PreEnqueue(context.Background(), newPod("a", "1", "1Gi", func(p *v1.Pod) { p.UID = tc.pod.UID })); !st.IsSuccess() {
				t.Fatal(st)
			}
			pl.PreEnqueue(context.Background(), tc.pod)
			if evs := drain(rec); len(evs) != 1 {
				t.Errorf("invalid again after valid: events %q, want one", evs)
			}
		})
	}
}

// The pod's own update queues a parked pod only when it fixes the request,
// and a valid pod only when its request changes; cluster events leave a
// parked pod parked.
func TestQueueingHints(t *testing.T) {
	pl := newTestPlugin(t, "fgd", "random")
	zero := newPod("a", "1", "1Gi", withMilli(0))
	five := newPod("a", "1", "1Gi", withMilli(5000))
	share := newPod("a", "1", "1Gi", withMilli(300))
	share2 := newPod("a", "1", "1Gi", withMilli(400))
	b300 := newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, "B300"))
	t4 := newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUModel, "T4"))
	labelled := share.DeepCopy()
	labelled.Labels = map[string]string{"x": "y"}
	status := zero.DeepCopy()
	status.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
	for _, tc := range []struct {
		name     string
		old, new *v1.Pod
		want     fwk.QueueingHint
	}{
		{"invalid, status written", zero, status, fwk.QueueSkip},
		{"invalid to another invalid", zero, five, fwk.QueueSkip},
		{"share fixed", zero, share, fwk.Queue},
		{"model fixed", b300, t4, fwk.Queue},
		{"valid, share changed", share, share2, fwk.Queue},
		{"valid, request unchanged", share, labelled, fwk.QueueSkip},
		{"valid made invalid", share, zero, fwk.QueueSkip},
	} {
		got, err := pl.isSchedulableAfterPodUpdate(klog.Background(), tc.new, tc.old, tc.new)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		pod  *v1.Pod
		want fwk.QueueingHint
	}{{zero, fwk.QueueSkip}, {b300, fwk.QueueSkip}, {share, fwk.Queue}, {t4, fwk.Queue}} {
		if got, _ := pl.skipParked(klog.Background(), tc.pod, nil, nil); got != tc.want {
			t.Errorf("skipParked(%v): %v, want %v", tc.pod.Spec.Containers[0].Resources.Requests, got, tc.want)
		}
	}
}

// Every message that quotes a user's value quotes 40 bytes of it at most.
func TestMessagesQuoteShort(t *testing.T) {
	huge := strings.Repeat("7", 200<<10)
	_, _, err := parseAssignment(newPod("a", "1", "1Gi", withGPUs(1), withAnnotation(gpuresource.AnnotationGPUs, "0,"+huge)))
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "(204802 bytes)") {
		t.Errorf("parseAssignment: %.400v", err)
	}
	if got := clip("7"); got != "7" {
		t.Errorf("clip(7) = %q", got)
	}
	if got := clip(huge); got != `"`+strings.Repeat("7", 40)+`"… (204800 bytes)` {
		t.Errorf("clip(huge) = %.100q", got)
	}
	if got := quote(strings.Repeat("x", clipAt)); strings.Contains(got, "…") {
		t.Errorf("quote cuts %d bytes: %q; clipAt disagrees with yamlx", clipAt, got)
	}
	if got := quote(strings.Repeat("x", clipAt+1)); !strings.Contains(got, "…") {
		t.Errorf("quote keeps %d bytes: %q; clipAt disagrees with yamlx", clipAt+1, got)
	}

	// The conflict event and log quote a hand-written annotation short.
	pl := newTestPlugin(t, "bestfit", "first")
	rec := events.NewFakeRecorder(10)
	pl.events = rec
	registerMetrics.Do(func() { legacyregistry.MustRegister(AnnotationConflicts) }) // as New does
	a := newPod("a", "1", "1Gi", withGPUs(1), onNode("n1"), withAnnotation(gpuresource.AnnotationGPUs, "0"))
	pl.observePod(nil, a)
	b := a.DeepCopy()
	b.Annotations[gpuresource.AnnotationGPUs] = huge
	pl.observePod(a, b)
	evs := drain(rec)
	if len(evs) != 1 || len(evs[0]) > 300 || !strings.Contains(evs[0], "(204800 bytes)") {
		t.Errorf("conflict events %.400q, want one quoting the annotation short", evs)
	}
}
