// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"

	apimetrics "github.com/gpuplane/gpuplane/api/metrics"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
)

// The scheduler does not trust a GPU annotation that disagrees with what it
// bound. Its record of each GPU pod (nodeCache.reserved, by pod UID) is the
// GPUs Reserve chose, or, for a pod it first sees already bound (after a
// restart, when it has no memory of its bindings), the annotation it first
// sees. When a bound pod's gpuplane.io/gpus annotation changes to disagree
// with the record, the scheduler logs it, raises a Warning event on the pod
// and counts it in AnnotationConflicts; buildNode then holds both the
// recorded and the claimed GPUs, so neither is handed out again. The
// ValidatingAdmissionPolicy the Helm chart ships (docs/scheduler.md) keeps
// anyone but gpuplane's service accounts from making such a change.

// ReasonGPUAnnotationConflict is the reason of the pod event.
const ReasonGPUAnnotationConflict = "GPUAnnotationConflict"

// AnnotationConflicts counts changes of a bound pod's GPU annotation to a
// value that disagrees with the scheduler's record. Registered with
// kube-scheduler's legacy registry (its /metrics) by New.
var AnnotationConflicts = metrics.NewCounter(&metrics.CounterOpts{
	Name:           apimetrics.SchedulerGPUAnnotationConflicts,
	Help:           "Changes of a bound pod's gpuplane.io/gpus annotation that disagree with the GPUs gpuplane-scheduler bound it to; both are held.",
	StabilityLevel: metrics.ALPHA,
})

var registerMetrics sync.Once

// observePod follows a pod from the informer (old is nil on Add). For a
// bound GPU pod without a record it makes the annotation the record; for
// one with a record, an annotation changed to disagree with it is a
// conflict, reported once per change.
func (pl *Plugin) observePod(old, p *v1.Pod) {
	if p.Spec.NodeName == "" || !isGPUPod(p) {
		return
	}
	claimed, has, err := parseAssignment(p)
	if err != nil {
		has = false // reported as a conflict below, when there is a record
	}
	var rec cluster.GPUSet
	var recorded bool
	if has {
		rec, recorded = pl.nodes.recordFirstSeen(p.UID, p.Spec.NodeName, claimed)
		if !recorded {
			return // first seen: the annotation is the record
		}
	} else if rec, recorded = pl.nodes.held(p.UID); !recorded {
		return
	}
	v, present := p.Annotations[gpuresource.AnnotationGPUs]
	if old != nil {
		if ov, opresent := old.Annotations[gpuresource.AnnotationGPUs]; ov == v && opresent == present {
			return // not changed by this update
		}
	}
	if has && claimed == rec {
		return
	}
	if !present {
		v = "(removed)"
	}
	v = clip(v) // the annotation may hold 256 KiB
	AnnotationConflicts.Inc()
	klog.InfoS("GPU annotation disagrees with the GPUs the scheduler bound; holding both",
		"pod", klog.KObj(p), "node", p.Spec.NodeName, "recorded", formatGPUs(rec), "annotation", v)
	if r := pl.recorder(); r != nil {
		r.Eventf(p, nil, v1.EventTypeWarning, ReasonGPUAnnotationConflict, "Scheduling",
			"annotation %s=%s disagrees with the GPUs gpuplane-scheduler bound the pod to (%s); both are held",
			gpuresource.AnnotationGPUs, v, formatGPUs(rec))
	}
}
