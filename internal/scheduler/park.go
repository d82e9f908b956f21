// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// A pod whose GPU request the scheduler can never honour (a share of 0 or
// above 1000 milli-GPU, a share with whole GPUs, an unknown GPU model: the
// rule of checkRequest) is parked at PreEnqueue: kube-scheduler keeps it
// in its unschedulable pool, gated by GPUPlacement, and never gives it a
// scheduling cycle, a status write or a FailedScheduling event. Without
// this, 2,000 such pods took 2,000 cycles, status writes and events ahead
// of the valid pods behind them (docs/scheduler.md, "Invalid requests").
// kube-scheduler v1.37.2 records nothing for a PreEnqueue rejection but a
// V(4) log line (backend/queue's runPreEnqueuePlugin), so the plugin puts
// one Warning event, ReasonInvalidGPURequest, on each such pod, once per
// pod UID while it stays invalid. A pod updated so that its request reads
// differently is re-evaluated (isSchedulableAfterPodUpdate): fixed, it
// enters the active queue.

// ReasonInvalidGPURequest is the reason of the event on a pod parked at
// PreEnqueue.
const ReasonInvalidGPURequest = "InvalidGPURequest"

var (
	_ fwk.PreEnqueuePlugin  = (*Plugin)(nil)
	_ fwk.EnqueueExtensions = (*Plugin)(nil)
)

// checkRequest returns the pod's request as the placement core reads it,
// or why the scheduler can never honour it: the one rule that PreEnqueue
// and PreFilter apply (podRequest, which reads the GPU request by
// api/resource's GPURequestOf and VendorRequest, and the placement core's Pod.Validate).
// It reads the pod alone, never the cluster, so a pod it refuses stays
// refused until the pod itself changes.
func checkRequest(p *v1.Pod) (cluster.Pod, error) {
	req, err := podRequest(p)
	if err != nil {
		return req, err
	}
	return req, req.Validate()
}

// PreEnqueue parks a pod whose request checkRequest refuses:
// UnschedulableAndUnresolvable, with the reason, and one Warning event on
// the pod.
func (pl *Plugin) PreEnqueue(ctx context.Context, p *v1.Pod) *fwk.Status {
	if _, err := checkRequest(p); err != nil {
		msg := err.Error()
		if pl.parked.add(p.UID) {
			klog.FromContext(ctx).V(2).Info("Pod parked: invalid GPU request", "pod", klog.KObj(p), "reason", msg)
			if r := pl.recorder(); r != nil {
				r.Eventf(p, nil, v1.EventTypeWarning, ReasonInvalidGPURequest, "Scheduling",
					"not scheduled until its GPU request is fixed: %s", msg)
			}
		}
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg)
	}
	pl.parked.remove(p.UID)
	return nil
}

// recorder is the events recorder: the test's, else the framework's.
func (pl *Plugin) recorder() events.EventRecorder {
	if pl.events != nil {
		return pl.events
	}
	if pl.handle != nil {
		return pl.handle.EventRecorder()
	}
	return nil
}

// isSchedulableAfterPodUpdate is the queueing hint of the pod's own
// update: queue it when its request now reads differently, fixed from
// refused or changed (another share or models); skip a status or other
// update that leaves the request as it was, and a request still refused.
func (pl *Plugin) isSchedulableAfterPodUpdate(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldPod, newPod, err := schedutil.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	newReq, newErr := checkRequest(newPod)
	if newErr != nil {
		return fwk.QueueSkip, nil
	}
	oldReq, oldErr := checkRequest(oldPod)
	if oldErr != nil || oldReq != newReq {
		logger.V(5).Info("Pod's GPU request changed; queueing it", "pod", klog.KObj(newPod))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// skipParked is the queueing hint of cluster events (a pod leaves, a node
// comes or changes): they cannot fix a refused request, so a parked pod
// stays where it is; any other pod is queued, as without a hint.
func (pl *Plugin) skipParked(_ klog.Logger, pod *v1.Pod, _, _ any) (fwk.QueueingHint, error) {
	if _, err := checkRequest(pod); err != nil {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// parkedSet is the UIDs of the pods parked and reported, so that each gets
// one event; a pod leaves it when deleted or found valid.
type parkedSet struct {
	mu   sync.Mutex
	uids map[types.UID]struct{}
}

// add records uid and reports whether it was new.
func (s *parkedSet) add(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.uids[uid]; ok {
		return false
	}
	if s.uids == nil {
		s.uids = map[types.UID]struct{}{}
	}
	s.uids[uid] = struct{}{}
	return true
}

func (s *parkedSet) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.uids, uid)
}

// quote quotes a user's value for a message (event, status, log): whole
// up to 40 bytes, else its first 40 bytes and its length, as yamlx.Quote
// quotes values in gpuplane's other errors ("abc…" (N bytes)). A pod's
// annotation may hold 256 KiB.
func quote(s string) string { return yamlx.Quote(s) }

// clipAt is the most bytes quote keeps (yamlx's maxQuoted).
const clipAt = 40

// clip is s itself, unquoted, up to clipAt bytes, else quote(s).
func clip(s string) string {
	if len(s) <= clipAt {
		return s
	}
	return quote(s)
}
