// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"reflect"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin"
	"github.com/gpuplane/gpuplane/internal/node/labels"
)

// defaultUnplacedInterval is publishUnplaced's interval when none is set.
const defaultUnplacedInterval = 5 * time.Second

// publishUnplaced keeps the Node's gpuresource.AnnotationNodeUnplacedPods
// equal to report (deviceplugin.Assignments.Unplaced: the GPUs of the pods
// gpuplane-scheduler did not place, from the kubelet's pod-resources):
// asked at once and then every interval, written at start (which replaces
// what an earlier run left) and on each change; a failed report or write
// is tried again at the next tick. It returns when ctx is done.
func publishUnplaced(ctx context.Context, c kubernetes.Interface, node string, report func(context.Context) (gpuresource.UnplacedPods, error), every time.Duration) {
	if every <= 0 {
		every = defaultUnplacedInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var written gpuresource.UnplacedPods
	first := true
	for {
		v, err := report(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			klog.ErrorS(err, "Reading the GPUs of the pods the scheduler did not place; trying again", "in", every)
		case first || !reflect.DeepEqual(v, written):
			if err := labels.ApplyUnplaced(ctx, c, node, v); err != nil {
				klog.ErrorS(err, "Publishing the GPUs of the pods the scheduler did not place failed; trying again", "in", every)
				break
			}
			klog.InfoS("Published the GPUs of the pods the scheduler did not place", "node", node, "pods", v)
			written, first = v, false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// unplacedOf is the report of publishUnplaced for the GPUs of n.
func unplacedOf(as *deviceplugin.Assignments, n device.Node) func(context.Context) (gpuresource.UnplacedPods, error) {
	return func(ctx context.Context) (gpuresource.UnplacedPods, error) { return as.Unplaced(ctx, &n) }
}

// clearUnplaced removes the Node's gpuresource.AnnotationNodeUnplacedPods,
// which an earlier run that reported may have left, for an agent that does
// not report: a stale report would make gpuplane-scheduler hold GPUs of
// pods long gone. One try; a failure is logged.
func clearUnplaced(ctx context.Context, c kubernetes.Interface, node string) {
	if err := labels.ApplyUnplaced(ctx, c, node, nil); err != nil && ctx.Err() == nil {
		klog.ErrorS(err, "Removing an earlier report of the pods the scheduler did not place")
	}
}
