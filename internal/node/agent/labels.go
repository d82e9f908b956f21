// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/labels"
)

// labeler writes the GPU feature labels where the options say, at the
// start and again when the GPUs change (a DRA rediscovery): the features
// file at once, the Node object with client (labels and
// labels.Annotations, labels.ApplyUntilDone) and the NodeFeature object
// with dyn (labels.ApplyNodeFeatureUntilDone) in the background until
// they succeed. Each write first stops the background work of the one
// before and waits for it, so older labels never land after newer ones.
type labeler struct {
	o      Options
	cfg    *configv1.Config
	client kubernetes.Interface
	dyn    dynamic.Interface

	mu   sync.Mutex
	stop context.CancelFunc // the last write's background work
	done sync.WaitGroup
}

func newLabeler(o Options, cfg *configv1.Config, client kubernetes.Interface, dyn dynamic.Interface) *labeler {
	return &labeler{o: o, cfg: cfg, client: client, dyn: dyn}
}

// write writes the labels of n; an error writing the features file is
// returned (it stops the agent at the start) and leaves the previous
// write's background work as it was.
func (w *labeler) write(ctx context.Context, n device.Node) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := labels.Compute(n, labels.OptionsFrom(w.cfg))
	if w.o.LabelsFile != "" {
		// First: a failure leaves the previous write's work running.
		if err := labels.WriteFeatureFile(w.o.LabelsFile, l); err != nil {
			return err
		}
		klog.InfoS("Wrote GPU feature labels", "file", w.o.LabelsFile, "labels", len(l))
	}
	if w.stop != nil {
		w.stop()
		w.done.Wait()
	}
	ctx, w.stop = context.WithCancel(ctx)
	if w.o.LabelNode {
		ann := labels.Annotations(n)
		w.done.Go(func() { _ = labels.ApplyUntilDone(ctx, w.client, w.o.NodeName, l, ann, labels.RetryInterval) })
	}
	if w.o.NodeFeatureAPI {
		w.done.Go(func() {
			_ = labels.ApplyNodeFeatureUntilDone(ctx, w.dyn, w.o.Namespace, w.o.NodeName, l, labels.RetryInterval)
		})
	}
	return nil
}
